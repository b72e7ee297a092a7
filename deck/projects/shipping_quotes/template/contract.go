// Package shippingquotes asks many shipping carriers for quotes and merges the answers.
//
// This file is the fixed contract: do not change it. The evaluator's tests are
// written against these types and against NewQuoteService / (*QuoteService).Quotes.
package shippingquotes

import (
	"context"
	"errors"
	"time"
)

// Carrier is one shipping carrier. Quote may be slow, may ignore its context,
// may return an error, malformed or duplicate quotes, and may panic.
type Carrier interface {
	Name() string
	Quote(ctx context.Context, req Request) ([]Quote, error)
}

// Request is what the caller wants shipped.
type Request struct {
	Origin      string   // postal code; case and surrounding spaces do not matter
	Destination string   // postal code; case and surrounding spaces do not matter
	WeightGrams int      // > 0
	Services    []string // wanted service levels (any order, any case); empty: all
}

// Quote is one price for one service level of one carrier.
type Quote struct {
	Carrier    string // the carrier's Name(), set by the service
	Service    string // e.g. "ground", "express"; non-empty
	PriceCents int64  // > 0
	Currency   string // always "USD"
	EtaDays    int    // >= 0
}

// Failure reasons, one per carrier that gave no usable quote.
const (
	ReasonError     = "error"     // Quote returned an error
	ReasonTimeout   = "timeout"   // no answer within CarrierTimeout or OverallTimeout
	ReasonPanic     = "panic"     // Quote panicked
	ReasonMalformed = "malformed" // every quote it returned was malformed (or it returned none)
	ReasonNil       = "nil"       // the carrier in the list is nil
)

// CarrierFailure says why one carrier contributed no quote.
type CarrierFailure struct {
	Carrier string // Name(), or "carrier[i]" for a nil carrier at index i
	Reason  string // one of the Reason constants
}

// Result is the merged answer.
type Result struct {
	Quotes   []Quote          // well-formed, reconciled, sorted (see SortQuotes)
	Failures []CarrierFailure // sorted by Carrier, then Reason
}

// Options configure a QuoteService. Zero values take the defaults below.
type Options struct {
	MaxConcurrency int              // carrier calls in flight at once; default 4
	CarrierTimeout time.Duration    // per carrier call; default 2s
	OverallTimeout time.Duration    // whole Quotes call; default 5s
	CacheTTL       time.Duration    // 0: no cache
	Now            func() time.Time // clock for the cache; default time.Now
}

var (
	// ErrInvalidRequest: empty origin or destination, or a weight <= 0.
	ErrInvalidRequest = errors.New("shippingquotes: invalid request")
	// ErrNoQuotes: no carrier gave a usable quote; the Result still lists the failures.
	ErrNoQuotes = errors.New("shippingquotes: no quotes")
)
