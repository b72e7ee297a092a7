(define(f s k)(list->string(for/list([c s])(if(char<=? #\a c #\z)(integer->char(+ 97(modulo(+(-(char->integer c)97)k)26)))c))))
