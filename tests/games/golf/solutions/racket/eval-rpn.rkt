#lang racket
(define (f tokens)
  (first
   (for/fold ([st '()]) ([t tokens])
     (match t
       [(or "+" "-" "*" "/")
        (match-define (list* b a rest) st)
        (cons ((case t [("+") +] [("-") -] [("*") *] [else quotient]) a b) rest)]
       [_ (cons (string->number t) st)]))))
