f=lambda n:sum(map(int,str(n)))
