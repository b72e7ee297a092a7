f=lambda s:sum(c in"aeiouAEIOU"for c in s)
