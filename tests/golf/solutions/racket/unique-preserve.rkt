(define f remove-duplicates)
