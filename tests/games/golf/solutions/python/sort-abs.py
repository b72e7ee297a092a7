f=lambda x:sorted(x,key=lambda v:(abs(v),v))
