def f(t):
 s=[]
 for x in t:
  if x in"+-*/":
   b=s.pop();a=s.pop()
   if x=="/":s+=-(-a//b)if(a<0)!=(b<0)else a//b,
   else:s+=eval(f"a{x}b"),
  else:s+=int(x),
 return s[0]
