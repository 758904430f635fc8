package metric

import (
	"fmt"
	"slices"
	"sync"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// Summary is a registered callback summary (NewSummary). Its methods are
// safe for concurrent use.
type Summary struct {
	view *view.View
	agg  *core.Aggregator
	keys []tag.Key
	fn   func(*SummaryObserver)
	cb   core.Callback

	obs  SummaryObserver // filled by Run, read by Apply (core.Callback's protocol)
	mu   sync.Mutex      // guards tags (Apply)
	tags []core.Tag      // reused by Apply
}

// SummaryObserver receives a summary callback's rows. It is valid only
// during the callback; it is not safe for concurrent use.
type SummaryObserver struct {
	keys, nq int
	counts   []uint64
	sums     []float64
	vals     []float64 // nq per observation
	tags     []string  // keys per observation
	badLen   int       // observations with more tag values than keys
	badVals  int       // observations with a values count other than nq
	lastBad  int       // the values count of the last of those
}

// Observe reports one row: count and sum of the observations summarised,
// and values[i], the value of the summary's quantile i (NaN for none),
// one per quantile, for the tag values given (as Observer.Observe takes
// them: one per key, fewer leaves the rest absent). A row with more tag
// values than keys, or a values count other than the quantiles', is
// dropped and reported (Err, ErrBadObservation). values is copied. Cost:
// appending to buffers the callback reuses: no allocation once they
// have grown.
func (o *SummaryObserver) Observe(count uint64, sum float64, values []float64, tagValues ...string) {
	if len(tagValues) > o.keys {
		o.badLen++
		return
	}
	if len(values) != o.nq {
		o.badVals++
		o.lastBad = len(values)
		return
	}
	o.counts = append(o.counts, count)
	o.sums = append(o.sums, sum)
	o.vals = append(o.vals, values...)
	o.tags = append(o.tags, tagValues...)
	for i := len(tagValues); i < o.keys; i++ {
		o.tags = append(o.tags, "")
	}
}

func (o *SummaryObserver) reset(keys, nq int) {
	o.keys, o.nq = keys, nq
	o.counts = o.counts[:0]
	o.sums = o.sums[:0]
	o.vals = o.vals[:0]
	clear(o.tags)
	o.tags = o.tags[:0]
	o.badLen, o.badVals = 0, 0
}

// NewSummary registers a callback summary: a view named name, aggregated
// as view.Summary(quantiles...), whose rows fn reports each time a
// snapshot is taken (an export, a scrape, /debug/stats, Collect), each a
// count, a sum and a value per quantile, computed by fn's source (a
// sketch, the runtime's GC pause history): Prometheus's summary, OTLP's
// Summary, OpenCensus's metricdata.Summary. quantiles must be increasing,
// each in [0, 1]. keys are the tag keys of its rows.
//
// Each exporter writes it as its format's summary, or where the format
// has none, as one mapping says (docs/metric-mapping.md). A row fn no
// longer reports keeps its last value until the summary is unregistered.
// See NewGauge for when fn runs and what its failures do.
//
// It returns an error, naming the cause, when the view cannot be
// registered: a quantile that is NaN, outside 0..1, repeated or not
// increasing, a name taken by a different view, an invalid name or unit.
func NewSummary(name, description, unit string, quantiles []float64, keys []tag.Key, fn func(*SummaryObserver)) (*Summary, error) {
	if fn == nil {
		return nil, fmt.Errorf("metric %q: cannot register: nil callback", name)
	}
	if len(keys) > 8 {
		return nil, fmt.Errorf("metric %q: cannot register: %d tag keys, at most 8", name, len(keys))
	}
	c := &Summary{keys: keys, fn: fn}
	c.view = &view.View{Name: name, Description: description, Measure: stats.Float64(name, description, unit),
		Aggregation: view.Summary(slices.Clone(quantiles)...), TagKeys: keys}
	if err := view.Register(c.view); err != nil {
		return nil, fmt.Errorf("metric %q: %w", name, err)
	}
	cv := core.FindView(c.view.Name)
	if cv == nil || cv.Agg.Kind() != core.KindSummary { // unregistered meanwhile
		return nil, fmt.Errorf("metric %q: cannot register: the view was unregistered while registering", name)
	}
	c.agg = cv.Agg
	c.cb = core.Callback{Name: name, Run: c.run, Apply: c.apply}
	core.AddCallback(&c.cb)
	return c, nil
}

// MustNewSummary is NewSummary that panics on error, for package-level
// set-up.
func MustNewSummary(name, description, unit string, quantiles []float64, keys []tag.Key, fn func(*SummaryObserver)) *Summary {
	c, err := NewSummary(name, description, unit, quantiles, keys, fn)
	if err != nil {
		panic(err)
	}
	return c
}

// View returns the summary's view.
func (c *Summary) View() *view.View { return c.view }

// Err returns the summary callback's last failure (a panic, a timeout, a
// bad observation, a row past the cardinality limit), nil when it never
// failed.
func (c *Summary) Err() error { return c.cb.Err() }

// Unregister stops calling the callback and unregisters its view.
func (c *Summary) Unregister() {
	core.RemoveCallback(&c.cb)
	view.Unregister(c.view)
}

func (c *Summary) run() {
	c.obs.reset(len(c.keys), len(c.agg.Quantiles()))
	c.fn(&c.obs)
}

func (c *Summary) apply() {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := &c.obs
	if o.badLen > 0 {
		c.cb.Report(fmt.Errorf("metric %q: %d rows with more tag values than its %d keys were dropped: %w",
			c.cb.Name, o.badLen, len(c.keys), ErrBadObservation))
	}
	if o.badVals > 0 {
		c.cb.Report(fmt.Errorf("metric %q: %d rows with a values count other than its %d quantiles (the last: %d) were dropped: %w",
			c.cb.Name, o.badVals, o.nq, o.lastBad, ErrBadObservation))
	}
	nk := len(c.keys)
rows:
	for i := range o.counts {
		tags := c.tags[:0]
		for j, k := range c.keys {
			m := tag.Upsert(k, o.tags[i*nk+j])
			cm := (*core.Mutator)(&m)
			if !cm.Valid() {
				c.cb.Report(fmt.Errorf("metric %q: %w: %w", c.cb.Name, ErrBadObservation, cm.Err()))
				continue rows
			}
			tags = cm.Apply(tags)
		}
		c.tags = tags
		if err := c.agg.SetSummary(tags, o.counts[i], o.sums[i], o.vals[i*o.nq:(i+1)*o.nq]); err != nil {
			c.cb.Report(fmt.Errorf("metric %q: %w", c.cb.Name, err))
		}
	}
	clear(c.tags) // no tag value kept past the snapshot
}
