package shippingquotes

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// ValidateRequest returns ErrInvalidRequest (wrapped) when the request cannot be quoted.
func ValidateRequest(req Request) error {
	if strings.TrimSpace(req.Origin) == "" || strings.TrimSpace(req.Destination) == "" {
		return fmt.Errorf("%w: origin and destination are required", ErrInvalidRequest)
	}
	if req.WeightGrams <= 0 {
		return fmt.Errorf("%w: weight must be positive", ErrInvalidRequest)
	}
	return nil
}

// WellFormed reports whether a quote may be shown: a service, a positive price,
// USD, and a non-negative ETA.
func WellFormed(q Quote) bool {
	return strings.TrimSpace(q.Service) != "" && q.PriceCents > 0 && q.Currency == "USD" &&
		q.EtaDays >= 0
}

// Better reports whether a sorts before b: cheaper first, then faster, then by
// carrier and service name. It is a total order on distinct quotes.
func Better(a, b Quote) bool {
	if a.PriceCents != b.PriceCents {
		return a.PriceCents < b.PriceCents
	}
	if a.EtaDays != b.EtaDays {
		return a.EtaDays < b.EtaDays
	}
	if a.Carrier != b.Carrier {
		return a.Carrier < b.Carrier
	}
	return a.Service < b.Service
}

// SortQuotes sorts quotes in place with Better.
func SortQuotes(qs []Quote) {
	sort.Slice(qs, func(i, j int) bool { return Better(qs[i], qs[j]) })
}

// SortFailures sorts failures in place by carrier, then reason.
func SortFailures(fs []CarrierFailure) {
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].Carrier != fs[j].Carrier {
			return fs[i].Carrier < fs[j].Carrier
		}
		return fs[i].Reason < fs[j].Reason
	})
}

func (o Options) withDefaults() Options {
	if o.MaxConcurrency <= 0 {
		o.MaxConcurrency = 4
	}
	if o.CarrierTimeout <= 0 {
		o.CarrierTimeout = 2 * time.Second
	}
	if o.OverallTimeout <= 0 {
		o.OverallTimeout = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
