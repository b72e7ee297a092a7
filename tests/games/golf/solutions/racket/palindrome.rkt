(define(f s)(equal? s(list->string(reverse(string->list s)))))
