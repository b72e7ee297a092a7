def f(a,b):
 p=range(len(b)+1)
 for i,c in enumerate(a,1):
  q=[i]
  for j,e in enumerate(b,1):q+=min(p[j]+1,q[-1]+1,p[j-1]+(c!=e)),
  p=q
 return p[-1]
