f=lambda s,k:"".join(chr((ord(c)-97+k)%26+97)if"`"<c<"{"else c for c in s)
