(define (f s)
  (let loop ([cs (string->list s)] [st '()])
    (cond [(null? cs) (null? st)]
          [(memv (car cs) '(#\( #\[ #\{)) (loop (cdr cs) (cons (car cs) st))]
          [(assv (car cs) '((#\) . #\() (#\] . #\[) (#\} . #\{)))
           => (λ (p) (and (pair? st) (char=? (car st) (cdr p)) (loop (cdr cs) (cdr st))))]
          [else (loop (cdr cs) st)])))
