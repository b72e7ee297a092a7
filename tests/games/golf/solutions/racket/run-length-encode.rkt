(define (f s)
  (let loop ([cs (string->list s)] [acc ""])
    (if (null? cs)
        acc
        (let* ([c (car cs)]
               [n (length (takef cs (λ (x) (char=? x c))))])
          (loop (drop cs n) (string-append acc (number->string n) (string c)))))))
