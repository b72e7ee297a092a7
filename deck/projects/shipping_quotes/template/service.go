package shippingquotes

import "context"

// QuoteService asks every carrier for quotes. This first pass works on a good
// day: it asks the carriers one after the other and keeps whatever they say.
type QuoteService struct {
	carriers []Carrier
	opts     Options
}

// NewQuoteService keeps the carriers (nil entries included) and the options.
func NewQuoteService(carriers []Carrier, opts Options) *QuoteService {
	return &QuoteService{carriers: carriers, opts: opts.withDefaults()}
}

// Quotes returns every carrier's quotes for req, cheapest first.
func (s *QuoteService) Quotes(ctx context.Context, req Request) (Result, error) {
	if err := ValidateRequest(req); err != nil {
		return Result{}, err
	}
	var res Result
	for _, c := range s.carriers {
		qs, err := c.Quote(ctx, req)
		if err != nil {
			res.Failures = append(res.Failures, CarrierFailure{Carrier: c.Name(), Reason: ReasonError})
			continue
		}
		for _, q := range qs {
			q.Carrier = c.Name()
			res.Quotes = append(res.Quotes, q)
		}
	}
	SortQuotes(res.Quotes)
	SortFailures(res.Failures)
	if len(res.Quotes) == 0 {
		return res, ErrNoQuotes
	}
	return res, nil
}
