package shippingquotes

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// QuoteService asks every carrier for quotes, at most MaxConcurrency at a time,
// merges the answers, caches successful results and shares one fan-out between
// concurrent callers of the same (equivalent) request.
type QuoteService struct {
	carriers []Carrier
	opts     Options

	mu      sync.Mutex
	cache   map[string]cached
	flights map[string]*flight
}

type cached struct {
	res     Result
	expires time.Time
}

// flight is one fan-out that any number of callers wait on.
type flight struct {
	done chan struct{}
	res  Result
	err  error
}

type answer struct {
	index  int
	quotes []Quote
	reason string
}

// NewQuoteService keeps a copy of the carrier list (nil entries included).
func NewQuoteService(carriers []Carrier, opts Options) *QuoteService {
	return &QuoteService{
		carriers: append([]Carrier(nil), carriers...),
		opts:     opts.withDefaults(),
		cache:    map[string]cached{},
		flights:  map[string]*flight{},
	}
}

// Quotes returns every carrier's usable quotes for req, cheapest first.
func (s *QuoteService) Quotes(ctx context.Context, req Request) (Result, error) {
	if err := ValidateRequest(req); err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	req = canonical(req)
	key := requestKey(req)
	s.mu.Lock()
	if e, ok := s.cache[key]; ok {
		if s.opts.Now().Before(e.expires) {
			s.mu.Unlock()
			return cloneResult(e.res), nil
		}
		delete(s.cache, key)
	}
	f, ok := s.flights[key]
	if !ok {
		f = &flight{done: make(chan struct{})}
		s.flights[key] = f
		// The fan-out belongs to no single caller: one caller giving up must not
		// cancel it for the others.
		go s.fly(key, req, f)
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return cloneResult(f.res), f.err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

func (s *QuoteService) fly(key string, req Request, f *flight) {
	res, err := s.fanOut(req)
	s.mu.Lock()
	if err == nil && s.opts.CacheTTL > 0 {
		s.cache[key] = cached{res: cloneResult(res), expires: s.opts.Now().Add(s.opts.CacheTTL)}
	}
	delete(s.flights, key)
	f.res, f.err = res, err
	s.mu.Unlock()
	close(f.done)
}

func (s *QuoteService) fanOut(req Request) (Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.OverallTimeout)
	defer cancel()
	n := len(s.carriers)
	names := make([]string, n)
	answers := make([]*answer, n)
	out := make(chan answer, n) // buffered: a late answer never blocks its goroutine
	next, inflight, pending := 0, 0, n
	for pending > 0 {
		for inflight < s.opts.MaxConcurrency && next < n {
			i := next
			next++
			c := s.carriers[i]
			if c == nil {
				names[i] = fmt.Sprintf("carrier[%d]", i)
				answers[i] = &answer{index: i, reason: ReasonNil}
				pending--
				continue
			}
			names[i] = safeName(c, i)
			inflight++
			go s.ask(ctx, i, c, req, out)
		}
		if pending == 0 {
			break
		}
		select {
		case a := <-out:
			answers[a.index] = &a
			inflight--
			pending--
		case <-ctx.Done():
			pending = 0
		}
	}
	for i := range answers {
		if answers[i] == nil {
			if names[i] == "" {
				names[i] = safeName(s.carriers[i], i)
			}
			answers[i] = &answer{index: i, reason: ReasonTimeout}
		}
	}
	return reconcile(names, answers)
}

func (s *QuoteService) ask(parent context.Context, i int, c Carrier, req Request, out chan<- answer) {
	ctx, cancel := context.WithTimeout(parent, s.opts.CarrierTimeout)
	defer cancel()
	inner := make(chan answer, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				inner <- answer{index: i, reason: ReasonPanic}
			}
		}()
		own := req
		own.Services = append([]string(nil), req.Services...)
		qs, err := c.Quote(ctx, own)
		switch {
		case err != nil && ctx.Err() != nil:
			inner <- answer{index: i, reason: ReasonTimeout}
		case err != nil:
			inner <- answer{index: i, reason: ReasonError}
		default:
			inner <- answer{index: i, quotes: append([]Quote(nil), qs...)}
		}
	}()
	select {
	case a := <-inner:
		out <- a
	case <-ctx.Done():
		out <- answer{index: i, reason: ReasonTimeout}
	}
}

func reconcile(names []string, answers []*answer) (Result, error) {
	type slot struct{ carrier, service string }
	best := map[slot]Quote{}
	var res Result
	for i, a := range answers {
		if a.reason != "" {
			res.Failures = append(res.Failures, CarrierFailure{Carrier: names[i], Reason: a.reason})
			continue
		}
		usable := 0
		for _, q := range a.quotes {
			q.Carrier = names[i]
			if !WellFormed(q) {
				continue
			}
			usable++
			k := slot{q.Carrier, q.Service}
			if old, ok := best[k]; !ok || Better(q, old) {
				best[k] = q
			}
		}
		if usable == 0 {
			res.Failures = append(res.Failures, CarrierFailure{Carrier: names[i], Reason: ReasonMalformed})
		}
	}
	for _, q := range best {
		res.Quotes = append(res.Quotes, q)
	}
	SortQuotes(res.Quotes)
	SortFailures(res.Failures)
	if len(res.Quotes) == 0 {
		return res, ErrNoQuotes
	}
	return res, nil
}

func safeName(c Carrier, i int) (name string) {
	defer func() {
		if recover() != nil {
			name = fmt.Sprintf("carrier[%d]", i)
		}
	}()
	return c.Name()
}

// canonical: postal codes trimmed and upper-cased, services trimmed, lower-cased,
// deduplicated and sorted, so equivalent requests look the same everywhere.
func canonical(req Request) Request {
	out := Request{
		Origin:      strings.ToUpper(strings.TrimSpace(req.Origin)),
		Destination: strings.ToUpper(strings.TrimSpace(req.Destination)),
		WeightGrams: req.WeightGrams,
	}
	seen := map[string]bool{}
	for _, s := range req.Services {
		s = strings.ToLower(strings.TrimSpace(s))
		if s != "" && !seen[s] {
			seen[s] = true
			out.Services = append(out.Services, s)
		}
	}
	sort.Strings(out.Services)
	return out
}

func requestKey(req Request) string {
	return strings.Join(append([]string{req.Origin, req.Destination,
		strconv.Itoa(req.WeightGrams)}, req.Services...), "\x00")
}

func cloneResult(r Result) Result {
	return Result{
		Quotes:   append([]Quote(nil), r.Quotes...),
		Failures: append([]CarrierFailure(nil), r.Failures...),
	}
}
