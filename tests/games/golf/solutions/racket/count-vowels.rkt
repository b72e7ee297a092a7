(define(f s)(count(λ(c)(memv c(string->list"aeiouAEIOU")))(string->list s)))
