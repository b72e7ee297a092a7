(define (f x)
  (reverse
   (for/fold ([o '()]) ([p (sort x (λ (a b) (or (< (car a) (car b))
                                                 (and (= (car a) (car b)) (< (cadr a) (cadr b))))))])
     (if (and (pair? o) (<= (car p) (cadr (car o))))
         (cons (list (car (car o)) (max (cadr (car o)) (cadr p))) (cdr o))
         (cons p o)))))
