(define (f a b)
  (define n (string-length b))
  (last
   (for/fold ([p (range (+ n 1))]) ([c a] [i (in-naturals 1)])
     (reverse
      (for/fold ([q (list i)]) ([e b] [j (in-naturals 1)])
        (cons (min (+ (list-ref p j) 1) (+ (car q) 1)
                   (+ (list-ref p (- j 1)) (if (char=? c e) 0 1)))
              q))))))
