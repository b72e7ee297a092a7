def f(s):
 v=[{"I":1,"V":5,"X":10,"L":50,"C":100,"D":500,"M":1000}[c]for c in s]+[0]
 return sum(-a if a<b else a for a,b in zip(v,v[1:]))
