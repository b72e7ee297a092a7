def f(m):
 o=[]
 while m:o+=m[0];m=[*zip(*m[1:])][::-1]
 return o
