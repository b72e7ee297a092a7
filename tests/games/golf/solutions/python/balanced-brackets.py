def f(s):
 t=[]
 for c in s:
  if c in"([{":t+=c,
  elif c in")]}":
   if not t or"([{"[")]}".index(c)]!=t.pop():return False
 return not t
