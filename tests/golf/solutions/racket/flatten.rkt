(define f flatten)
