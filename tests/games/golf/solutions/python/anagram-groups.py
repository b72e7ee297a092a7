def f(w):
 d={}
 for x in w:d.setdefault("".join(sorted(x)),[]).append(x)
 return[*d.values()]
