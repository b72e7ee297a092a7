(define(f n)(if(< n 10)n(+(modulo n 10)(f(quotient n 10)))))
