(define (f w)
  (group-by (λ (x) (sort (string->list x) char<?)) w))
