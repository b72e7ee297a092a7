f=lambda x:[y for e in x for y in(f(e)if e*0 == [] else[e])]
