(define(f s)(list->string(reverse(string->list s))))
