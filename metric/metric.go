package metric

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// Callback is a registered callback gauge or counter. Its methods are safe
// for concurrent use.
type Callback struct {
	view    *view.View
	measure *stats.Float64Measure
	keys    []tag.Key
	fn      func(*Observer)
	counter bool
	cb      core.Callback

	obs Observer // filled by Run, read by Apply (core.Callback's protocol)

	mu   sync.Mutex          // guards last and muts (Apply and Unregister)
	last map[string]float64  // counters: the last value observed per tag values
	muts []tag.Mutator       // reused by Apply
	seen map[string]struct{} // counters: tag values observed in this Apply
}

// Observer receives a callback's values. It is valid only during the
// callback; it is not safe for concurrent use (a callback that observes
// from several goroutines must wait for them before it returns).
type Observer struct {
	keys   int
	vals   []float64
	tags   []string // keys values per observation
	badLen int
}

// Observe reports value v for the tag values given, one per key of the
// callback in the order the keys were given (fewer: the others are
// absent; more: the observation is dropped and reported). Cost: appending
// to a buffer the callback reuses: no allocation once it has grown.
func (o *Observer) Observe(v float64, tagValues ...string) {
	if len(tagValues) > o.keys {
		o.badLen++
		return
	}
	o.vals = append(o.vals, v)
	o.tags = append(o.tags, tagValues...)
	for i := len(tagValues); i < o.keys; i++ {
		o.tags = append(o.tags, "")
	}
}

func (o *Observer) reset(keys int) {
	o.keys = keys
	o.vals = o.vals[:0]
	clear(o.tags)
	o.tags = o.tags[:0]
	o.badLen = 0
}

// ErrBadObservation is wrapped by the failure recorded when a callback
// observes more tag values than it has keys, or an invalid tag value.
var ErrBadObservation = errors.New("metric: bad observation")

// NewGauge registers a callback gauge: a view named name, aggregated as
// the last value (exported as a gauge everywhere, as Prometheus's
// GaugeFunc, OpenCensus's derived gauges and OTel's observable gauges),
// whose rows fn reports each time a snapshot is taken (an export, a
// scrape, /debug/stats, Collect). keys are the tag keys of its rows.
//
// fn runs on a goroutine of its own, bounded by the collect timeout
// (SetTimeout); a panic or a timeout drops only its values of that
// snapshot and is reported (Err, selfstats' zerostat/callback_failures).
// A row fn no longer reports keeps its last value until the view's idle
// rows are evicted or the gauge is unregistered.
//
// It returns an error when the view cannot be registered (name taken by a
// different view, invalid name or unit).
func NewGauge(name, description, unit string, keys []tag.Key, fn func(*Observer)) (*Callback, error) {
	return newCallback(name, description, unit, keys, fn, false)
}

// NewCounter registers a callback counter: fn reports the cumulative
// total of each row (Prometheus's CounterFunc, OpenCensus's derived
// cumulative, OTel's observable counter). It is a view aggregated as a
// sum, exported as a counter, whose value is the last total fn reported
// (a total lower than the previous one is a reset: the sum follows it).
// See NewGauge for when fn runs and what its failures do.
func NewCounter(name, description, unit string, keys []tag.Key, fn func(*Observer)) (*Callback, error) {
	return newCallback(name, description, unit, keys, fn, true)
}

// MustNewGauge is NewGauge that panics on error, for package-level set-up.
func MustNewGauge(name, description, unit string, keys []tag.Key, fn func(*Observer)) *Callback {
	c, err := NewGauge(name, description, unit, keys, fn)
	if err != nil {
		panic(err)
	}
	return c
}

// MustNewCounter is NewCounter that panics on error.
func MustNewCounter(name, description, unit string, keys []tag.Key, fn func(*Observer)) *Callback {
	c, err := NewCounter(name, description, unit, keys, fn)
	if err != nil {
		panic(err)
	}
	return c
}

func newCallback(name, description, unit string, keys []tag.Key, fn func(*Observer), counter bool) (*Callback, error) {
	if fn == nil {
		return nil, fmt.Errorf("metric %q: cannot register: nil callback", name)
	}
	if len(keys) > 8 {
		return nil, fmt.Errorf("metric %q: cannot register: %d tag keys, at most 8", name, len(keys))
	}
	c := &Callback{
		measure: stats.Float64(name, description, unit),
		keys:    keys,
		fn:      fn,
		counter: counter,
		muts:    make([]tag.Mutator, len(keys)),
	}
	agg := view.LastValue()
	if counter {
		agg = view.ObservedSum() // an asynchronous counter: cumulative under lowmemory
		c.last = map[string]float64{}
		c.seen = map[string]struct{}{}
	}
	c.view = &view.View{Name: name, Description: description, Measure: c.measure, Aggregation: agg, TagKeys: keys}
	if err := view.Register(c.view); err != nil {
		return nil, fmt.Errorf("metric %q: %w", name, err)
	}
	c.cb = core.Callback{Name: name, Run: c.run, Apply: c.apply}
	core.AddCallback(&c.cb)
	return c, nil
}

// View returns the callback's view.
func (c *Callback) View() *view.View { return c.view }

// Err returns the callback's last failure (a panic, a timeout, a bad
// observation), nil when it never failed.
func (c *Callback) Err() error { return c.cb.Err() }

// Unregister stops calling the callback and unregisters its view.
func (c *Callback) Unregister() {
	core.RemoveCallback(&c.cb)
	view.Unregister(c.view)
}

func (c *Callback) run() {
	c.obs.reset(len(c.keys))
	c.fn(&c.obs)
}

func (c *Callback) apply() {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := &c.obs
	if o.badLen > 0 {
		c.cb.Report(fmt.Errorf("metric %q: %d observations with more tag values than its %d keys were dropped: %w",
			c.cb.Name, o.badLen, len(c.keys), ErrBadObservation))
	}
	if c.counter {
		clear(c.seen)
	}
	ctx := context.Background()
	for i, v := range o.vals {
		vals := o.tags[i*len(c.keys) : (i+1)*len(c.keys)]
		for j, k := range c.keys {
			c.muts[j] = tag.Upsert(k, vals[j])
		}
		m := v
		if c.counter {
			id := joinValues(vals)
			if _, dup := c.seen[id]; dup {
				continue // one total per row per snapshot: the first
			}
			c.seen[id] = struct{}{}
			m = v - c.last[id]
			if m == 0 {
				if _, ok := c.last[id]; ok {
					continue
				}
			}
			if err := stats.RecordWithTags(ctx, c.muts, c.measure.M(m)); err != nil {
				c.cb.Report(fmt.Errorf("metric %q: %w: %w", c.cb.Name, ErrBadObservation, err))
				continue
			}
			c.last[id] = v
			continue
		}
		if err := stats.RecordWithTags(ctx, c.muts, c.measure.M(m)); err != nil {
			c.cb.Report(fmt.Errorf("metric %q: %w: %w", c.cb.Name, ErrBadObservation, err))
		}
	}
}

// joinValues is the map key of a row's tag values (NUL cannot be in a
// valid tag value).
func joinValues(vals []string) string {
	switch len(vals) {
	case 0:
		return ""
	case 1:
		return vals[0]
	}
	n := len(vals) - 1
	for _, v := range vals {
		n += len(v)
	}
	b := make([]byte, 0, n)
	for i, v := range vals {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, v...)
	}
	return string(b)
}

// Collect runs every registered callback now and records its values,
// as each snapshot does first. Call it before view.RetrieveData to read
// fresh callback values (RetrieveData itself does not run callbacks).
// Cost: see the package documentation.
func Collect() { core.Collect() }

// ErrCallback is wrapped by the error an export returns (exporter's,
// otlp's and remotewrite's Export or Push, and their OnError) when a
// callback of its snapshot failed: it panicked, did not return within
// the timeout, or returned an error (an otel observable's callback). The
// callback's values are left out of that snapshot (or, for an error it
// returned, are what it observed before); everything else is delivered,
// and the export is not counted as failed. zerostat/callback_failures
// counts each failure (selfstats).
var ErrCallback = core.ErrCallback

// SetTimeout sets how long a snapshot waits for the callbacks (d <= 0:
// the default, 1 s). Safe for concurrent use.
func SetTimeout(d time.Duration) { core.SetCollectTimeout(d) }
