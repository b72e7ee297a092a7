f=lambda x,d=1:sum(f(e,d+1)if e*0 == [] else e*d for e in x)
