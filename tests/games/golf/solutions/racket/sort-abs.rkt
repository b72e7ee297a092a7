(define(f x)(sort(sort x <)< #:key abs))
