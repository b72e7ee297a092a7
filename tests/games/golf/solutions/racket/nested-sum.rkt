(define(f x[d 1])(for/sum([e x])(if(list? e)(f e(+ d 1))(* e d))))
