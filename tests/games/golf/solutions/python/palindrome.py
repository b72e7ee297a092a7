f=lambda s:s==s[::-1]
