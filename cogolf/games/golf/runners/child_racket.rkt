#lang racket/base
;; Child harness for the Racket course (copied into the scratch dir).
;; Reads (token per-test-seconds) from stdin, evaluates submission.rkt, then reads
;; one argument list (arg ...) at a time (the parent sends the next only after this
;; one's report), calls f in a thread with a time limit, and writes
;; "<token> <json>" lines to the original stdout. The thread's limit is only the fast
;; path: the parent kills a test that runs over its CPU time, whatever happens here. A file without #lang is
;; first tried in a namespace of racket/base, racket/list and racket/string, which
;; starts much faster than full `racket`; when anything in it is unbound there or
;; fails, the file is evaluated again in a fresh namespace with full `racket`, so
;; the contract ("a namespace that has racket") holds exactly.
;; Start-up is the cost of a hole, so the harness needs nothing beyond racket/base
;; and the two libraries the quick namespace shares with it (racket/port alone
;; would add about 0.1 s to every run).
(require racket/list racket/string ffi/unsafe/vm)

;; Loading a file allocates a lot, nearly all of it code that stays: collecting the
;; young generation every few megabytes copies it again and again (a large part of
;; a `#lang racket` load). So the load runs with a large allocation budget between
;; collections, and the calls to f with the usual one.
(define chez? (eq? (system-type 'vm) 'chez-scheme))
(define load-trip-bytes (* 64 1024 1024))
(define (with-few-collections thunk)
  (cond [chez?
         (define usual (vm-eval '(collect-trip-bytes)))
         (vm-eval `(collect-trip-bytes ,load-trip-bytes))
         (begin0 (thunk) (vm-eval `(collect-trip-bytes ,usual)))]
        [else (thunk)]))

;; An output port that discards everything (racket/port's open-output-nowhere).
(define (nowhere)
  (make-output-port 'nowhere always-evt (lambda (bs start end non-block? breakable?) (- end start))
                    void))

(define (json-string s)
  (define o (open-output-string))
  (write-char #\" o)
  (for ([c (in-string s)])
    (cond [(char=? c #\") (write-string "\\\"" o)]
          [(char=? c #\\) (write-string "\\\\" o)]
          [(< (char->integer c) 32)
           (write-string (string-append "\\u" (string-pad (number->string (char->integer c) 16))) o)]
          [else (write-char c o)]))
  (write-char #\" o)
  (get-output-string o))

(define (string-pad s) (string-append (make-string (- 4 (string-length s)) #\0) s))

;; #f when v is outside the value domain
(define (to-json v [depth 0])
  (cond [(> depth 64) #f]
        [(eq? v #t) "true"]
        [(eq? v #f) "false"]
        [(exact-integer? v) (number->string v)]
        [(flonum? v) (and (not (nan? v)) (not (infinite? v)) (number->string v))]
        [(string? v) (json-string v)]
        [(or (null? v) (pair? v) (vector? v))
         (define items (if (vector? v) (vector->list v) v))
         (and (list? items)
              (let ([parts (for/list ([x (in-list items)]) (to-json x (add1 depth)))])
                (and (andmap values parts) (string-append "[" (string-join parts ",") "]"))))]
        [else #f]))

(define (nan? x) (not (= x x)))
(define (infinite? x) (or (= x +inf.0) (= x -inf.0)))

(define (kv k v) (string-append (json-string k) ":" v))

(define (message e)
  (define text (if (exn? e) (exn-message e) (format "raised ~e" e)))
  (if (> (string-length text) 300) (substring text 0 300) text))

(define source
  (call-with-input-file "submission.rkt"
    (lambda (in)
      (define o (open-output-bytes))
      (let loop ()
        (define chunk (read-bytes 65536 in))
        (unless (eof-object? chunk) (write-bytes chunk o) (loop)))
      (bytes->string/utf-8 (get-output-bytes o) #\uFFFD))))

(define (lang-line? s) (regexp-match? #px"^\\s*#lang[ \t]" s))

(define (read-forms)
  (define in (open-input-string source 'submission.rkt))
  (port-count-lines! in)
  (let loop ([acc '()])
    (define form (read in))
    (if (eof-object? form) (reverse acc) (loop (cons form acc)))))

;; Free top-level references of a fully expanded form: (#%top . id) outside quotes.
(define (tops datum acc)
  (cond [(and (pair? datum) (memq (car datum) '(quote quote-syntax))) acc]
        [(and (pair? datum) (eq? (car datum) '#%top) (symbol? (cdr datum))) (cons (cdr datum) acc)]
        [(pair? datum) (tops (cdr datum) (tops (car datum) acc))]
        [else acc]))

(define (defined datum acc)
  (cond [(and (pair? datum) (memq (car datum) '(define-values define-syntaxes))
              (pair? (cdr datum)) (list? (cadr datum)))
         (append (cadr datum) acc)]
        [(and (pair? datum) (eq? (car datum) 'begin)) (foldl defined acc (cdr datum))]
        [else acc]))

;; Returns (cons 'ok f) or (cons status detail). In the quick namespace any
;; doubt returns 'retry.
;; The quick namespace is a fresh, empty one over the harness's own module registry,
;; so racket/base, racket/list and racket/string are the instances already loaded
;; (what make-base-empty-namespace would attach, minus ~8 ms of attaching). The
;; full retry gets a registry of its own, untouched by the quick attempt.
(define-namespace-anchor anchor)

(define (load-toplevel forms quick?)
  (define ns (if quick? (namespace-anchor->empty-namespace anchor) (make-base-empty-namespace)))
  (parameterize ([current-namespace ns])
    (if quick?
        (begin (namespace-require 'racket/base) (namespace-require 'racket/list)
               (namespace-require 'racket/string))
        (namespace-require 'racket))
    (define free '())
    (define names '())
    (define result
      (with-handlers ([(lambda (e) #t)
                       (lambda (e) (if (exn:fail:syntax? e)
                                       (cons 'syntax_error (message e))
                                       (cons 'load_error (message e))))])
        (for ([form (in-list forms)])
          (define expanded (expand form))
          (define datum (syntax->datum expanded))
          (set! free (tops datum free))
          (set! names (defined datum names))
          (parameterize ([current-output-port (nowhere)]) (eval expanded)))
        'done))
    (cond [(and quick? (or (pair? result)
                           (for/or ([id (in-list free)]) (not (memq id names)))))
           'retry]
          [(pair? result) result]
          [else (lookup (lambda () (namespace-variable-value 'f #t (lambda () #f))))])))

(define (lookup get)
  (define f (get))
  (if (procedure? f) (cons 'ok f) (cons 'missing_function "no procedure named f")))

(define (load-module)
  (define ns (namespace-anchor->empty-namespace anchor))
  (parameterize ([current-namespace ns])
    (namespace-require 'racket/base)
    (with-handlers ([exn:fail:read? (lambda (e) (cons 'syntax_error (message e)))]
                    [exn:fail:syntax? (lambda (e) (cons 'syntax_error (message e)))]
                    [(lambda (e) #t) (lambda (e) (cons 'load_error (message e)))])
      (define form
        (parameterize ([read-accept-reader #t] [read-accept-lang #t])
          (define in (open-input-string source))
          (port-count-lines! in)
          (read-syntax "submission.rkt" in)))
      (parameterize ([current-module-declare-name (make-resolved-module-path 'golf-submission)])
        (eval (namespace-syntax-introduce form)))
      (parameterize ([current-output-port (nowhere)])
        (dynamic-require ''golf-submission #f))
      (define mns (module->namespace ''golf-submission))
      (lookup (lambda () (namespace-variable-value 'f #t (lambda () #f) mns))))))

(define (load-file)
  (if (lang-line? source)
      (load-module)
      (let ([forms (with-handlers ([exn:fail? (lambda (e) (vector 'syntax_error (message e)))])
                     (read-forms))])
        (if (vector? forms)
            (cons (vector-ref forms 0) (vector-ref forms 1))
            (let ([quick (load-toplevel forms #t)])
              (if (eq? quick 'retry) (load-toplevel forms #f) quick))))))

;; Everything the submission must not reach (the token, the real stdout, the time
;; limit) is local to `main`: the quick namespace shares this module's registry, and
;; module-level variables of the harness could be read through module->namespace.
(define (main)
  (define out (current-output-port))
  (define tests (current-input-port))
  (define request (read tests))
  (define token (car request))
  (define limit (cadr request))
  (current-input-port (open-input-bytes #""))

  (define (emit . parts)
    (write-string (string-append token " {" (string-join parts ",") "}\n") out)
    (flush-output out))

  (define (run-call f args)
    (define box (make-channel))
    (define th
      (parameterize ([current-output-port (nowhere)])
        (thread (lambda ()
                  (channel-put box
                               (with-handlers ([(lambda (e) #t)
                                                (lambda (e) (cons 'error (message e)))])
                                 (cons 'ok (apply f args))))))))
    (define got (sync/timeout limit box))
    (cond [(not got) (kill-thread th) (cons 'timeout (format "over ~as" limit))]
          [else got]))

  (define loaded (with-few-collections load-file))
  (cond
    [(not (eq? (car loaded) 'ok))
     (emit (kv "load" (json-string (symbol->string (car loaded))))
           (kv "detail" (json-string (cdr loaded))))]
    [else
     (emit (kv "load" "\"ok\""))
     (for ([args (in-producer (lambda () (read tests)) eof-object?)] [i (in-naturals)])
       (define r (run-call (cdr loaded) args))
       (define idx (kv "i" (number->string i)))
       (case (car r)
         [(ok) (define j (to-json (cdr r)))
               (if j
                   (emit idx (kv "status" "\"ok\"") (kv "value" j))
                   (emit idx (kv "status" "\"invalid\"")
                         (kv "detail" (json-string (format "not a value: ~.a" (cdr r))))))]
         [else (emit idx (kv "status" (json-string (symbol->string (car r))))
                     (kv "detail" (json-string (cdr r))))]))]))

(main)
