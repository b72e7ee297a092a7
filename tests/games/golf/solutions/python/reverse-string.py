f=lambda s:s[::-1]
