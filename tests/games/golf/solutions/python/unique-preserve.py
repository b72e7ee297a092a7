f=lambda x:[*dict.fromkeys(x)]
