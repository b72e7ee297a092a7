package evaluator_tests

import (
	"context"
	"errors"
	"testing"
	"time"

	sq "shippingquotes"
)

// The floor: a good day. Well-behaved carriers, one after the other would do.
func TestFloorGoodDay(t *testing.T) {
	a := fixed("acme", q("ground", 900, 5), q("express", 2500, 1))
	b := fixed("bolt", q("ground", 850, 6))
	c := fixed("cargo", q("overnight", 4000, 0))
	s := sq.NewQuoteService(carriers(a, b, c), sq.Options{MaxConcurrency: 2})
	res := mustOK(t, call(t, s, context.Background(), baseReq, 10*time.Second))
	sameQuotes(t, res.Quotes, []sq.Quote{
		from("bolt", q("ground", 850, 6)),
		from("acme", q("ground", 900, 5)),
		from("acme", q("express", 2500, 1)),
		from("cargo", q("overnight", 4000, 0)),
	})
	sameFailures(t, res.Failures, nil)
	for _, bad := range []sq.Request{
		{Origin: " ", Destination: "10001", WeightGrams: 1},
		{Origin: "94107", Destination: "", WeightGrams: 1},
		{Origin: "94107", Destination: "10001", WeightGrams: 0},
	} {
		o := call(t, s, context.Background(), bad, 10*time.Second)
		if !errors.Is(o.err, sq.ErrInvalidRequest) {
			t.Fatalf("request %+v: want ErrInvalidRequest, got %v", bad, o.err)
		}
	}
}
