def f(x):
 o=[]
 for a,b in sorted(x):
  if o and a<=o[-1][1]:o[-1][1]=max(o[-1][1],b)
  else:o+=[a,b],
 return o
