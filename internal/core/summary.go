package core

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"
)

// KindSummary is an observed summary: per series a count, a sum and the
// values of a fixed list of quantiles (the aggregator's Quantiles), set
// whole by a callback when a snapshot is taken (SetSummary), never
// recorded into: Prometheus's summary, OTLP's Summary, OpenCensus's
// metricdata.Summary. zerostat's addition to OpenCensus's kinds (6, after
// the exponential distribution).
//
// A summary's quantiles are computed by its source (debug.ReadGCStats'
// PauseQuantiles, a client-side sketch) over whatever window that source
// keeps; they cannot be merged, subtracted or aggregated across series,
// so a summary is never read as deltas (its count and sum are totals, its
// quantiles the source's current ones), is never evicted (its value is a
// state, like a last value's: Series.Evict leaves it), and has no
// overflow series (SetSummary refuses a row past the cardinality limit).
const KindSummary Kind = 6

// summaryAgg is a summary aggregator's state.
type summaryAgg struct {
	quantiles []float64 // increasing, in [0, 1]; set before publication
	// mu serialises SetSummary, the only creator of a summary's series
	// (records never reach a summary: see SetSummary), so that init, the
	// value of the series being created, reaches newSeries.
	mu   sync.Mutex
	init unsafe.Pointer
}

// ErrNotSummary is returned by SetQuantiles and SetSummary on an
// aggregator of another kind.
var ErrNotSummary = errors.New("core: not a summary aggregator")

// ErrSummaryLimit is wrapped by SetSummary's error for a row that would
// exceed the aggregator's cardinality limit: its value is dropped (a
// summary has no overflow row: quantiles of several rows cannot be
// combined into one).
var ErrSummaryLimit = errors.New("cardinality limit reached")

// CheckQuantiles reports the first bad quantile of q, in an error naming
// it: NaN, outside 0..1, repeated, or not after the one before (the list
// must be increasing: a summary's values are given in its order). An
// empty list is valid (a summary of count and sum only).
func CheckQuantiles(q []float64) error {
	for i, x := range q {
		switch {
		case math.IsNaN(x):
			return fmt.Errorf("quantile %d of %d is NaN", i+1, len(q))
		case x < 0 || x > 1:
			return fmt.Errorf("quantile %v is outside 0..1", x)
		case i > 0 && x == q[i-1]:
			return fmt.Errorf("quantile %v is repeated", x)
		case i > 0 && x < q[i-1]:
			return fmt.Errorf("quantiles are not increasing: %v after %v", x, q[i-1])
		}
	}
	return nil
}

// SetQuantiles sets a summary aggregator's quantiles (CheckQuantiles's
// rules; q is copied). Call it before the aggregator is published; until
// then it has none.
func (a *Aggregator) SetQuantiles(q []float64) error {
	if a.kind != KindSummary {
		return ErrNotSummary
	}
	if err := CheckQuantiles(q); err != nil {
		return err
	}
	a.summary.quantiles = append([]float64(nil), q...)
	return nil
}

// Quantiles returns a summary aggregator's quantiles, increasing (nil for
// another kind). The caller must not modify them.
func (a *Aggregator) Quantiles() []float64 {
	if a.summary == nil {
		return nil
	}
	return a.summary.quantiles
}

// SetSummary sets the value of the summary series of tags (internal
// order, unique keys, as RecordTags takes them): count and sum, and one
// value per quantile (values[i] is Quantiles()[i]'s). The series takes
// the whole value at once: a reader sees the previous value or this one,
// never a mix. values is copied. It creates the series on first use,
// already holding the value (a snapshot never sees it empty).
//
// Errors, nothing set: ErrNotSummary; a values count other than the
// quantiles'; a new row past the cardinality limit (ErrSummaryLimit).
// On a detached aggregator it does nothing. Cost: one allocation (the
// value: 16 bytes and 8 per quantile), the series' lock-free lookup, and
// the aggregator's mutex (SetSummary calls are serialised; records never
// wait for it: they do not reach a summary).
func (a *Aggregator) SetSummary(tags []Tag, count uint64, sum float64, values []float64) error {
	sa := a.summary
	if sa == nil {
		return ErrNotSummary
	}
	if len(values) != len(sa.quantiles) {
		return fmt.Errorf("%d quantile values for %d quantiles", len(values), len(sa.quantiles))
	}
	p := newSummaryValue(count, sum, values)
	var buf [16]string
	vals, h := a.project(buf[:0], tags)
	sa.mu.Lock()
	defer sa.mu.Unlock()
	if s := a.table.Load().find(a, h, vals); s != nil {
		atomic.StorePointer(&s.dist, p)
		return nil
	}
	// Only SetSummary adds series to a summary, and it holds sa.mu; a
	// summary's series are never freed: the count is the one create sees.
	if a.full() {
		return fmt.Errorf("a new row: %w (%d rows)", ErrSummaryLimit, a.limit)
	}
	sa.init = p
	s, created := a.create(h, vals, 0)
	sa.init = nil
	if s != nil && !created {
		atomic.StorePointer(&s.dist, p) // not reached: only SetSummary creates
	}
	return nil
}

// newSummaryValue returns a summary's value: count, sum and the values,
// as words, in one allocation.
func newSummaryValue(count uint64, sum float64, values []float64) unsafe.Pointer {
	w := make([]uint64, 2+len(values))
	w[0], w[1] = count, math.Float64bits(sum)
	for i, v := range values {
		w[2+i] = math.Float64bits(v)
	}
	return unsafe.Pointer(&w[0])
}

// summaryInit is the value of the summary series newSeries is creating
// (SetSummary's, under the summary's mutex).
func (a *Aggregator) summaryInit() unsafe.Pointer { return a.summary.init }

// ReadSummary returns a summary series' count and sum, and appends its
// value of each quantile (in the order of its aggregator's Quantiles) to
// dst[:0]: all of one SetSummary. No allocation once dst has the room.
func (s *Series) ReadSummary(dst []float64) (count uint64, sum float64, values []float64) {
	n := len(s.agg.Quantiles())
	dst = dst[:0]
	p := atomic.LoadPointer(&s.dist)
	if p == nil || s.agg.kind != KindSummary { // never for a summary's series (SetSummary creates them with a value)
		for range n {
			dst = append(dst, math.NaN())
		}
		return 0, 0, dst
	}
	w := unsafe.Slice((*uint64)(p), 2+n)
	for _, x := range w[2:] {
		dst = append(dst, math.Float64frombits(x))
	}
	return w[0], math.Float64frombits(w[1]), dst
}
