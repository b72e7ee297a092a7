package evaluator_tests

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"

	sq "shippingquotes"
)

func peakCarriers(n int, p *peak, hold time.Duration) []sq.Carrier {
	out := make([]sq.Carrier, n)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("c%02d", i)
		out[i] = &fakeCarrier{name: name, quote: func(ctx context.Context, _ sq.Request) ([]sq.Quote, error) {
			p.enter()
			defer p.leave()
			select {
			case <-p.reached:
			case <-time.After(hold):
			}
			return []sq.Quote{q("ground", 1000, 3)}, nil
		}}
	}
	return out
}

func TestConcurrencyBounded(t *testing.T) {
	p := newPeak(4) // never reached when the bound holds
	s := sq.NewQuoteService(peakCarriers(12, p, 40*time.Millisecond), sq.Options{MaxConcurrency: 3})
	res := mustOK(t, call(t, s, context.Background(), baseReq, 20*time.Second))
	same(t, "quotes", len(res.Quotes), 12)
	if p.Max() > 3 {
		t.Fatalf("%d carrier calls in flight at once, MaxConcurrency is 3", p.Max())
	}
}

func TestConcurrencyOverlap(t *testing.T) {
	p := newPeak(3)
	s := sq.NewQuoteService(peakCarriers(12, p, 300*time.Millisecond), sq.Options{MaxConcurrency: 3})
	res := mustOK(t, call(t, s, context.Background(), baseReq, 20*time.Second))
	same(t, "quotes", len(res.Quotes), 12)
	same(t, "carrier calls overlapping at most (MaxConcurrency is 3)", p.Max(), 3)
}

func TestCarrierTimeout(t *testing.T) {
	sawDeadline := make(chan struct{})
	polite := &fakeCarrier{name: "polite-slow", quote: func(ctx context.Context, _ sq.Request) ([]sq.Quote, error) {
		<-ctx.Done()
		close(sawDeadline)
		return nil, ctx.Err()
	}}
	rude := &fakeCarrier{name: "rude-slow", quote: func(context.Context, sq.Request) ([]sq.Quote, error) {
		time.Sleep(3 * time.Second)
		return []sq.Quote{q("ground", 1, 1)}, nil
	}}
	fast := fixed("fast", q("ground", 700, 4))
	s := sq.NewQuoteService(carriers(polite, rude, fast), sq.Options{
		MaxConcurrency: 3, CarrierTimeout: 150 * time.Millisecond, OverallTimeout: 10 * time.Second,
	})
	o := call(t, s, context.Background(), baseReq, 8*time.Second)
	res := mustOK(t, o)
	if o.elapsed > 2*time.Second {
		t.Fatalf("took %v with a 150ms carrier timeout", o.elapsed)
	}
	sameQuotes(t, res.Quotes, []sq.Quote{from("fast", q("ground", 700, 4))})
	sameFailures(t, res.Failures, []sq.CarrierFailure{
		{Carrier: "polite-slow", Reason: sq.ReasonTimeout},
		{Carrier: "rude-slow", Reason: sq.ReasonTimeout},
	})
	select { // the slow carrier's context was cancelled
	case <-sawDeadline:
	case <-time.After(2 * time.Second):
		t.Fatalf("the timed-out carrier's context was never cancelled")
	}
}

func TestOverallTimeout(t *testing.T) {
	var cs []*fakeCarrier
	cs = append(cs, fixed("fast", q("ground", 700, 4)))
	for i := 0; i < 4; i++ {
		cs = append(cs, &fakeCarrier{name: fmt.Sprintf("stuck%d", i), quote: func(context.Context, sq.Request) ([]sq.Quote, error) {
			time.Sleep(4 * time.Second)
			return []sq.Quote{q("ground", 1, 1)}, nil
		}})
	}
	s := sq.NewQuoteService(carriers(cs...), sq.Options{
		MaxConcurrency: 2, CarrierTimeout: 10 * time.Second, OverallTimeout: 300 * time.Millisecond,
	})
	o := call(t, s, context.Background(), baseReq, 8*time.Second)
	res := mustOK(t, o)
	if o.elapsed > 2*time.Second {
		t.Fatalf("took %v with a 300ms overall timeout", o.elapsed)
	}
	sameQuotes(t, res.Quotes, []sq.Quote{from("fast", q("ground", 700, 4))})
	want := []sq.CarrierFailure{}
	for i := 0; i < 4; i++ {
		want = append(want, sq.CarrierFailure{Carrier: fmt.Sprintf("stuck%d", i), Reason: sq.ReasonTimeout})
	}
	sameFailures(t, res.Failures, want)
}

func TestCallerCancellation(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	s := sq.NewQuoteService(carriers(gated("slow", gate, q("ground", 700, 4))), sq.Options{
		CarrierTimeout: 10 * time.Second, OverallTimeout: 10 * time.Second,
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	o := call(t, s, ctx, baseReq, 5*time.Second)
	same(t, fmt.Sprintf("error %v is context.Canceled", o.err), errors.Is(o.err, context.Canceled), true)
	if o.elapsed > 2*time.Second {
		t.Fatalf("returned %v after the caller cancelled", o.elapsed)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer dcancel()
	o = call(t, s, dctx, sq.Request{Origin: "1", Destination: "2", WeightGrams: 3}, 5*time.Second)
	if !errors.Is(o.err, context.DeadlineExceeded) {
		t.Fatalf("want context.DeadlineExceeded, got %v", o.err)
	}
}

func TestPanickingCarrierIsolated(t *testing.T) {
	boom := &fakeCarrier{name: "boom", quote: func(context.Context, sq.Request) ([]sq.Quote, error) {
		panic("carrier exploded")
	}}
	nilmap := &fakeCarrier{name: "nilmap", quote: func(context.Context, sq.Request) ([]sq.Quote, error) {
		var m map[string]int
		m["x"] = 1
		return nil, nil
	}}
	good := fixed("good", q("ground", 800, 2))
	s := sq.NewQuoteService(carriers(boom, good, nilmap), sq.Options{MaxConcurrency: 3})
	res := mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
	sameQuotes(t, res.Quotes, []sq.Quote{from("good", q("ground", 800, 2))})
	sameFailures(t, res.Failures, []sq.CarrierFailure{
		{Carrier: "boom", Reason: sq.ReasonPanic},
		{Carrier: "nilmap", Reason: sq.ReasonPanic},
	})
}

func TestNilCarrierIsolated(t *testing.T) {
	list := []sq.Carrier{fixed("a", q("ground", 800, 2)), nil, fixed("b", q("ground", 900, 2)), nil}
	s := sq.NewQuoteService(list, sq.Options{MaxConcurrency: 2})
	res := mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
	sameQuotes(t, res.Quotes, []sq.Quote{from("a", q("ground", 800, 2)), from("b", q("ground", 900, 2))})
	sameFailures(t, res.Failures, []sq.CarrierFailure{
		{Carrier: "carrier[1]", Reason: sq.ReasonNil},
		{Carrier: "carrier[3]", Reason: sq.ReasonNil},
	})
}

func TestMalformedQuotesDropped(t *testing.T) {
	mixed := fixed("mixed",
		q("ground", 650, 3),
		q("free", 0, 3),
		q("refund", -100, 3),
		sq.Quote{Service: "euro", PriceCents: 500, Currency: "EUR", EtaDays: 2},
		sq.Quote{Service: "nocurrency", PriceCents: 500, EtaDays: 2},
		q("", 400, 2),
		q("  ", 400, 2),
		q("timetravel", 300, -1),
	)
	allBad := fixed("allbad", q("ground", 0, 1), sq.Quote{Service: "x", PriceCents: 5, Currency: "usd"})
	empty := fixed("empty")
	s := sq.NewQuoteService(carriers(mixed, allBad, empty), sq.Options{MaxConcurrency: 3})
	res := mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
	sameQuotes(t, res.Quotes, []sq.Quote{from("mixed", q("ground", 650, 3))})
	sameFailures(t, res.Failures, []sq.CarrierFailure{
		{Carrier: "allbad", Reason: sq.ReasonMalformed},
		{Carrier: "empty", Reason: sq.ReasonMalformed},
	})
}

func TestDuplicateQuotesReconciled(t *testing.T) {
	spoof := sq.Quote{Carrier: "someone-else", Service: "express", PriceCents: 2000, Currency: "USD", EtaDays: 1}
	a := fixed("acme", q("ground", 500, 3), q("ground", 400, 5), q("ground", 400, 4), spoof, q("express", 2100, 1))
	b := fixed("bolt", q("ground", 400, 4), q("ground", 400, 4))
	s := sq.NewQuoteService(carriers(a, b), sq.Options{MaxConcurrency: 2})
	res := mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
	sameQuotes(t, res.Quotes, []sq.Quote{
		from("acme", q("ground", 400, 4)),
		from("bolt", q("ground", 400, 4)),
		from("acme", q("express", 2000, 1)),
	})
	for i := 0; i < 2; i++ { // the same answer every time
		again := mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
		sameQuotes(t, again.Quotes, res.Quotes)
	}
}

func TestDeterministicOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var cs []*fakeCarrier
	var want []sq.Quote
	for i := 0; i < 10; i++ {
		name := fmt.Sprintf("k%d", 9-i)
		qs := []sq.Quote{q("ground", 1000, 3), q("express", int64(1500+100*(i%3)), i%4)}
		for _, x := range qs {
			want = append(want, from(name, x))
		}
		jitter := time.Duration(rng.Intn(20)) * time.Millisecond
		cs = append(cs, &fakeCarrier{name: name, quote: func(context.Context, sq.Request) ([]sq.Quote, error) {
			time.Sleep(jitter)
			return append([]sq.Quote(nil), qs...), nil
		}})
	}
	sq.SortQuotes(want)
	cs = append(cs, failing("z-down"), failing("a-down"))
	s := sq.NewQuoteService(carriers(cs...), sq.Options{MaxConcurrency: 6})
	first := mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
	sameFailures(t, first.Failures, []sq.CarrierFailure{
		{Carrier: "a-down", Reason: sq.ReasonError}, {Carrier: "z-down", Reason: sq.ReasonError},
	})
	sameQuotes(t, first.Quotes, want)
	for i := 1; i < 4; i++ {
		req := baseReq
		req.WeightGrams += i // a fresh request each time
		res := mustOK(t, call(t, s, context.Background(), req, 10*time.Second))
		sameQuotes(t, res.Quotes, want)
		sameFailures(t, res.Failures, first.Failures)
	}
}

func TestPartialSuccess(t *testing.T) {
	s := sq.NewQuoteService(carriers(failing("down"), fixed("up", q("ground", 990, 2))), sq.Options{})
	res := mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
	sameQuotes(t, res.Quotes, []sq.Quote{from("up", q("ground", 990, 2))})
	sameFailures(t, res.Failures, []sq.CarrierFailure{{Carrier: "down", Reason: sq.ReasonError}})

	none := sq.NewQuoteService(carriers(failing("x"), fixed("y", q("ground", 0, 1))), sq.Options{})
	o := call(t, none, context.Background(), baseReq, 10*time.Second)
	if !errors.Is(o.err, sq.ErrNoQuotes) {
		t.Fatalf("want ErrNoQuotes, got %v", o.err)
	}
	sameFailures(t, o.res.Failures, []sq.CarrierFailure{
		{Carrier: "x", Reason: sq.ReasonError}, {Carrier: "y", Reason: sq.ReasonMalformed},
	})
}

func TestCacheHit(t *testing.T) {
	clock := newClock()
	a := fixed("acme", q("ground", 900, 5))
	s := sq.NewQuoteService(carriers(a), sq.Options{CacheTTL: time.Minute, Now: clock.Now})
	first := mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
	clock.Advance(59 * time.Second)
	second := mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
	sameQuotes(t, second.Quotes, first.Quotes)
	same(t, "carrier calls for a cached request", a.Calls(), 1)
}

func TestCacheEquivalentRequests(t *testing.T) {
	clock := newClock()
	a := fixed("acme", q("ground", 900, 5))
	s := sq.NewQuoteService(carriers(a), sq.Options{CacheTTL: time.Minute, Now: clock.Now})
	reqs := []sq.Request{
		{Origin: "sw1a 1aa", Destination: "10001", WeightGrams: 500, Services: []string{"ground", "express"}},
		{Origin: "  SW1A 1AA ", Destination: "10001 ", WeightGrams: 500, Services: []string{"Express", "ground", "GROUND"}},
		{Origin: "Sw1a 1aA", Destination: " 10001", WeightGrams: 500, Services: []string{" express ", "ground"}},
	}
	for _, r := range reqs {
		mustOK(t, call(t, s, context.Background(), r, 10*time.Second))
	}
	same(t, "carrier calls for 3 equivalent requests", a.Calls(), 1)
	different := []sq.Request{
		{Origin: "sw1a 1aa", Destination: "10001", WeightGrams: 501, Services: []string{"ground", "express"}},
		{Origin: "sw1a 1aa", Destination: "10001", WeightGrams: 500, Services: []string{"ground"}},
		{Origin: "sw1a 1aa", Destination: "10001", WeightGrams: 500},
		{Origin: "10001", Destination: "sw1a 1aa", WeightGrams: 500, Services: []string{"ground", "express"}},
		{Origin: "sw1a1aa", Destination: "10001", WeightGrams: 500, Services: []string{"ground", "express"}},
	}
	for i, r := range different {
		mustOK(t, call(t, s, context.Background(), r, 10*time.Second))
		if a.Calls() != int64(2+i) {
			t.Fatalf("request %+v was answered from another request's cache entry", r)
		}
	}
}

func TestCacheExpiryAndFailures(t *testing.T) {
	clock := newClock()
	a := fixed("acme", q("ground", 900, 5))
	s := sq.NewQuoteService(carriers(a), sq.Options{CacheTTL: time.Minute, Now: clock.Now})
	mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
	clock.Advance(time.Minute)
	mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
	same(t, "carrier calls once the entry is past its TTL", a.Calls(), 2)
	down := failing("down")
	s = sq.NewQuoteService(carriers(down), sq.Options{CacheTTL: time.Minute, Now: clock.Now})
	for i := 0; i < 2; i++ {
		o := call(t, s, context.Background(), baseReq, 10*time.Second)
		if !errors.Is(o.err, sq.ErrNoQuotes) {
			t.Fatalf("want ErrNoQuotes, got %v", o.err)
		}
	}
	same(t, "carrier calls for a failed result (never cached)", down.Calls(), 2)
	plain := fixed("plain", q("ground", 900, 5))
	s = sq.NewQuoteService(carriers(plain), sq.Options{Now: clock.Now}) // no TTL: no cache
	mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
	mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
	same(t, "carrier calls without a CacheTTL (no cache)", plain.Calls(), 2)
}

// waitCalls waits until every carrier has been called at least once.
func waitCalls(t *testing.T, cs ...*fakeCarrier) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, c := range cs {
		for c.Calls() == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("carrier %s was never called", c.name)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func TestCoalescedMisses(t *testing.T) {
	gate := make(chan struct{})
	a := gated("acme", gate, q("ground", 900, 5))
	b := gated("bolt", gate, q("ground", 800, 6))
	s := sq.NewQuoteService(carriers(a, b), sq.Options{MaxConcurrency: 2, OverallTimeout: 10 * time.Second,
		CarrierTimeout: 10 * time.Second})
	reqs := []sq.Request{baseReq, baseReq, {Origin: " 94107", Destination: "10001", WeightGrams: 1200}, baseReq, baseReq}
	var outs []<-chan outcome
	for _, r := range reqs {
		outs = append(outs, async(s, context.Background(), r))
	}
	waitCalls(t, a, b)
	time.Sleep(100 * time.Millisecond) // every caller is waiting by now
	close(gate)
	want := []sq.Quote{from("bolt", q("ground", 800, 6)), from("acme", q("ground", 900, 5))}
	for _, o := range outs {
		sameQuotes(t, mustOK(t, wait(t, o, 10*time.Second)).Quotes, want)
	}
	same(t, "acme calls for 5 concurrent equivalent misses", a.Calls(), 1)
	same(t, "bolt calls for 5 concurrent equivalent misses", b.Calls(), 1)
}

func TestCoalescedIndependentCancellation(t *testing.T) {
	gate := make(chan struct{})
	a := gated("acme", gate, q("ground", 900, 5))
	s := sq.NewQuoteService(carriers(a), sq.Options{OverallTimeout: 10 * time.Second, CarrierTimeout: 10 * time.Second})
	leaver, leave := context.WithCancel(context.Background())
	first := async(s, leaver, baseReq)
	waitCalls(t, a)
	second := async(s, context.Background(), baseReq)
	time.Sleep(100 * time.Millisecond)
	leave()
	select {
	case o := <-first:
		if !errors.Is(o.err, context.Canceled) {
			t.Fatalf("the cancelled caller got %v, want context.Canceled", o.err)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("the cancelled caller did not return")
	}
	time.Sleep(100 * time.Millisecond) // the remaining caller keeps waiting, the call keeps going
	close(gate)
	sameQuotes(t, mustOK(t, wait(t, second, 10*time.Second)).Quotes, []sq.Quote{from("acme", q("ground", 900, 5))})
	same(t, "carrier calls (shared by both callers)", a.Calls(), 1)
}

func TestResultsDoNotAliasCache(t *testing.T) {
	clock := newClock()
	s := sq.NewQuoteService(carriers(fixed("acme", q("ground", 900, 5), q("express", 2000, 1)), failing("down")),
		sq.Options{CacheTTL: time.Hour, Now: clock.Now})
	first := mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
	sameQuotes(t, first.Quotes, []sq.Quote{from("acme", q("ground", 900, 5)), from("acme", q("express", 2000, 1))})
	sameFailures(t, first.Failures, []sq.CarrierFailure{{Carrier: "down", Reason: sq.ReasonError}})
	want := append([]sq.Quote(nil), first.Quotes...)
	wantFail := append([]sq.CarrierFailure(nil), first.Failures...)
	for i := 0; i < 3; i++ {
		res := first
		if i > 0 {
			res = mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
		}
		sameQuotes(t, res.Quotes, want)
		sameFailures(t, res.Failures, wantFail)
		res.Quotes[0].PriceCents = 1
		res.Quotes[1].Carrier = "mallory"
		_ = append(res.Quotes[:1], from("mallory", q("ground", 1, 0)))
		res.Failures[0].Reason = "scribbled"
		_ = append(res.Failures[:0], sq.CarrierFailure{Carrier: "mallory"})
	}
	// callers sharing one fan-out get their own slices too
	gate := make(chan struct{})
	shared := sq.NewQuoteService(carriers(gated("acme", gate, q("ground", 900, 5))), sq.Options{})
	o1, o2 := async(shared, context.Background(), baseReq), async(shared, context.Background(), baseReq)
	time.Sleep(150 * time.Millisecond)
	close(gate)
	r1, r2 := mustOK(t, wait(t, o1, 10*time.Second)), mustOK(t, wait(t, o2, 10*time.Second))
	r1.Quotes[0].PriceCents = 1
	sameQuotes(t, r2.Quotes, []sq.Quote{from("acme", q("ground", 900, 5))})
}

func TestLargeCarrierSet(t *testing.T) {
	const n = 2000
	before := runtime.NumGoroutine()
	list := make([]sq.Carrier, n)
	var want []sq.Quote
	var wantFail []sq.CarrierFailure
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("carrier-%04d", i)
		switch {
		case i%97 == 0:
			list[i] = failing(name)
			wantFail = append(wantFail, sq.CarrierFailure{Carrier: name, Reason: sq.ReasonError})
		case i%89 == 0:
			list[i] = fixed(name, q("ground", 0, 1))
			wantFail = append(wantFail, sq.CarrierFailure{Carrier: name, Reason: sq.ReasonMalformed})
		default:
			qs := []sq.Quote{q("ground", int64(1000+i%50), i%7), q("express", int64(3000+i%13), 1)}
			for _, x := range qs {
				want = append(want, from(name, x))
			}
			list[i] = &fakeCarrier{name: name, quote: func(ctx context.Context, _ sq.Request) ([]sq.Quote, error) {
				select {
				case <-time.After(5 * time.Millisecond):
					return append([]sq.Quote(nil), qs...), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}}
		}
	}
	sq.SortQuotes(want)
	s := sq.NewQuoteService(list, sq.Options{MaxConcurrency: 64, OverallTimeout: 30 * time.Second})
	o := call(t, s, context.Background(), baseReq, 30*time.Second)
	res := mustOK(t, o)
	same(t, "failures", len(res.Failures), 43)
	same(t, "quotes", len(res.Quotes), 3914)
	if o.elapsed > 8*time.Second {
		t.Fatalf("%d carriers at 5ms each, 64 at a time, took %v", n, o.elapsed)
	}
	sameQuotes(t, res.Quotes, want)
	sameFailures(t, res.Failures, wantFail)
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before+5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before+5 {
		t.Fatalf("%d goroutines still running after the call (%d before)", g, before)
	}
}
