package evaluator_tests

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sq "shippingquotes"
)

// fakeCarrier answers from a function and counts its calls.
type fakeCarrier struct {
	name  string
	calls int64
	quote func(ctx context.Context, req sq.Request) ([]sq.Quote, error)
}

func (c *fakeCarrier) Name() string { return c.name }

func (c *fakeCarrier) Quote(ctx context.Context, req sq.Request) ([]sq.Quote, error) {
	atomic.AddInt64(&c.calls, 1)
	return c.quote(ctx, req)
}

func (c *fakeCarrier) Calls() int64 { return atomic.LoadInt64(&c.calls) }

func fixed(name string, qs ...sq.Quote) *fakeCarrier {
	return &fakeCarrier{name: name, quote: func(context.Context, sq.Request) ([]sq.Quote, error) {
		return append([]sq.Quote(nil), qs...), nil
	}}
}

func failing(name string) *fakeCarrier {
	return &fakeCarrier{name: name, quote: func(context.Context, sq.Request) ([]sq.Quote, error) {
		return nil, errors.New("upstream 503")
	}}
}

// gated answers once the gate is closed, or gives up with ctx.
func gated(name string, gate <-chan struct{}, qs ...sq.Quote) *fakeCarrier {
	return &fakeCarrier{name: name, quote: func(ctx context.Context, _ sq.Request) ([]sq.Quote, error) {
		select {
		case <-gate:
			return append([]sq.Quote(nil), qs...), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
}

// q is a well-formed USD quote.
//
//twins:fields
func q(service string, cents int64, eta int) sq.Quote {
	return sq.Quote{Service: service, PriceCents: cents, Currency: "USD", EtaDays: eta}
}

// from is the quote as the service returns it for a carrier.
//
//twins:fields
func from(carrier string, qt sq.Quote) sq.Quote {
	qt.Carrier = carrier
	return qt
}

func carriers(cs ...*fakeCarrier) []sq.Carrier {
	out := make([]sq.Carrier, len(cs))
	for i, c := range cs {
		out[i] = c
	}
	return out
}

var baseReq = sq.Request{Origin: "94107", Destination: "10001", WeightGrams: 1200}

type outcome struct {
	res     sq.Result
	err     error
	elapsed time.Duration
}

// async runs Quotes in its own goroutine; a panic there becomes an error.
func async(s *sq.QuoteService, ctx context.Context, req sq.Request) <-chan outcome {
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- outcome{err: fmt.Errorf("Quotes panicked: %v", r), elapsed: -1}
			}
		}()
		res, err := s.Quotes(ctx, req)
		done <- outcome{res: res, err: err, elapsed: time.Since(start)}
	}()
	return done
}

// wait fails the test (instead of hanging or crashing the whole run) when Quotes
// does not return within limit or panics in the caller's goroutine.
func wait(t *testing.T, done <-chan outcome, limit time.Duration) outcome {
	t.Helper()
	select {
	case o := <-done:
		if o.elapsed < 0 {
			t.Fatalf("%v", o.err)
		}
		return o
	case <-time.After(limit):
		t.Fatalf("Quotes did not return within %v", limit)
	}
	return outcome{}
}

func call(t *testing.T, s *sq.QuoteService, ctx context.Context, req sq.Request, limit time.Duration) outcome {
	t.Helper()
	return wait(t, async(s, ctx, req), limit)
}

func mustOK(t *testing.T, o outcome) sq.Result {
	t.Helper()
	if o.err != nil {
		t.Fatalf("Quotes returned error %v", o.err)
	}
	return o.res
}

// The checkers: each compares got with want exactly and stops the test when they
// differ. Their last parameter is named want (the scorer's twins change it).

// same compares two comparable values.
func same[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func sameQuotes(t *testing.T, got, want []sq.Quote) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("quotes:\n got  %+v\n want %+v", got, want)
	}
}

func sameFailures(t *testing.T, got, want []sq.CarrierFailure) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("failures:\n got  %+v\n want %+v", got, want)
	}
}

// peak tracks how many calls are in flight at once.
type peak struct {
	mu       sync.Mutex
	now, max int
	reached  chan struct{}
	target   int
}

func newPeak(target int) *peak { return &peak{target: target, reached: make(chan struct{})} }

func (p *peak) enter() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.now++
	if p.now > p.max {
		p.max = p.now
		if p.max == p.target {
			close(p.reached)
		}
	}
}

func (p *peak) leave() {
	p.mu.Lock()
	p.now--
	p.mu.Unlock()
}

func (p *peak) Max() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.max
}

// fakeClock is the cache's clock, moved by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
