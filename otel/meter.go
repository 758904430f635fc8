package otel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"

	"github.com/zerostat/zerostat/internal/core"
)

// Meter creates instruments recording into zerostat views. Safe for
// concurrent use; creating an instrument is set-up cost (a lock, a few
// allocations), measuring through it is not (see the package
// documentation).
type Meter struct {
	embedded.Meter
	p     *MeterProvider
	scope string
}

var _ metric.Meter = (*Meter)(nil)

func (m *Meter) sync(name, desc, unit string, kind Kind, isInt bool, bounds []float64) (*inst, error) {
	return m.p.instrument(instSpec{name: name, desc: desc, unit: unit, kind: kind, isInt: isInt, bounds: bounds})
}

// histogram returns the histogram named name, with the advisory
// boundaries advisory unless its provider makes it exponential (expOf).
// Its error joins an invalid name's, invalid advisory boundaries' (which
// an explicit-bucket histogram replaces with DefaultBoundaries, and an
// exponential one ignores, as the SDK returns that error whatever the
// aggregation) and that of an invalid WithExponentialHistogram(s) option
// that would have selected it.
func (m *Meter) histogram(name, desc, unit string, isInt bool, advisory []float64) (*inst, error) {
	bounds, berr := checkBounds(name, advisory)
	exp, eerr := m.p.cfg.expOf(name)
	if exp != nil {
		bounds = nil
		if berr != nil {
			berr = fmt.Errorf("otel: histogram %q: advisory boundaries %v are not finite and strictly increasing: ignored (the histogram is exponential)", name, advisory)
		}
	}
	i, err := m.p.instrument(instSpec{name: name, desc: desc, unit: unit, kind: KindHistogram, isInt: isInt, bounds: bounds, exp: exp})
	return i, errors.Join(err, berr, eerr)
}

// Int64Counter returns the counter named name: a monotonic sum.
func (m *Meter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	c := metric.NewInt64CounterConfig(opts...)
	i, err := m.sync(name, c.Description(), c.Unit(), KindCounter, true, nil)
	if i == nil {
		return noopI64Counter, err
	}
	return &syncInst[int64]{i: i}, err // err: an invalid name the instrument records under anyway
}

// Int64UpDownCounter returns the up-down counter named name: a
// non-monotonic sum (view.UpDownSum).
func (m *Meter) Int64UpDownCounter(name string, opts ...metric.Int64UpDownCounterOption) (metric.Int64UpDownCounter, error) {
	c := metric.NewInt64UpDownCounterConfig(opts...)
	i, err := m.sync(name, c.Description(), c.Unit(), KindUpDownCounter, true, nil)
	if i == nil {
		return noopI64UpDown, err
	}
	return &syncInst[int64]{i: i}, err // err: an invalid name the instrument records under anyway
}

// Int64Histogram returns the histogram named name: an explicit-bucket
// histogram (view.DistributionUpperInclusive) with the advisory boundaries
// of opts, or DefaultBoundaries; or a base-2 exponential histogram
// (view.ExponentialDistribution) when WithExponentialHistogram,
// WithExponentialHistograms or EnvHistogramAggregation says so.
func (m *Meter) Int64Histogram(name string, opts ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	c := metric.NewInt64HistogramConfig(opts...)
	i, err := m.histogram(name, c.Description(), c.Unit(), true, c.ExplicitBucketBoundaries())
	if i == nil {
		return noopI64Hist, err
	}
	return &syncInst[int64]{i: i}, err // err: an invalid name the instrument records under anyway
}

// Int64Gauge returns the gauge named name: the last value recorded.
func (m *Meter) Int64Gauge(name string, opts ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	c := metric.NewInt64GaugeConfig(opts...)
	i, err := m.sync(name, c.Description(), c.Unit(), KindGauge, true, nil)
	if i == nil {
		return noopI64Gauge, err
	}
	return &syncInst[int64]{i: i}, err // err: an invalid name the instrument records under anyway
}

// Float64Counter returns the counter named name: a monotonic sum.
func (m *Meter) Float64Counter(name string, opts ...metric.Float64CounterOption) (metric.Float64Counter, error) {
	c := metric.NewFloat64CounterConfig(opts...)
	i, err := m.sync(name, c.Description(), c.Unit(), KindCounter, false, nil)
	if i == nil {
		return noopF64Counter, err
	}
	return &syncInst[float64]{i: i}, err // err: an invalid name the instrument records under anyway
}

// Float64UpDownCounter returns the up-down counter named name.
func (m *Meter) Float64UpDownCounter(name string, opts ...metric.Float64UpDownCounterOption) (metric.Float64UpDownCounter, error) {
	c := metric.NewFloat64UpDownCounterConfig(opts...)
	i, err := m.sync(name, c.Description(), c.Unit(), KindUpDownCounter, false, nil)
	if i == nil {
		return noopF64UpDown, err
	}
	return &syncInst[float64]{i: i}, err // err: an invalid name the instrument records under anyway
}

// Float64Histogram returns the histogram named name; see Int64Histogram.
func (m *Meter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	c := metric.NewFloat64HistogramConfig(opts...)
	i, err := m.histogram(name, c.Description(), c.Unit(), false, c.ExplicitBucketBoundaries())
	if i == nil {
		return noopF64Hist, err
	}
	return &syncInst[float64]{i: i}, err // err: an invalid name the instrument records under anyway
}

// Float64Gauge returns the gauge named name.
func (m *Meter) Float64Gauge(name string, opts ...metric.Float64GaugeOption) (metric.Float64Gauge, error) {
	c := metric.NewFloat64GaugeConfig(opts...)
	i, err := m.sync(name, c.Description(), c.Unit(), KindGauge, false, nil)
	if i == nil {
		return noopF64Gauge, err
	}
	return &syncInst[float64]{i: i}, err // err: an invalid name the instrument records under anyway
}

// Observable instruments.

// observable is an observable instrument: its inst and, for sums, the last
// cumulative value observed per attribute set (the view records the
// difference). Read and written by Collect only, under the provider's
// collect lock.
type observable struct {
	i    *inst
	last map[uint64]float64
}

func (o *observable) observe(set attribute.Set, v float64) {
	if o.i.spec.kind != KindObservableGauge {
		h := distinctHash(&set)
		v, o.last[h] = v-o.last[h], v
	}
	if e := o.i.lookup(set); e != nil {
		record(e, v)
	}
}

type int64Observable struct {
	metric.Int64Observable
	embedded.Int64ObservableCounter
	embedded.Int64ObservableUpDownCounter
	embedded.Int64ObservableGauge
	o *observable
}

type float64Observable struct {
	metric.Float64Observable
	embedded.Float64ObservableCounter
	embedded.Float64ObservableUpDownCounter
	embedded.Float64ObservableGauge
	o *observable
}

func (m *Meter) observable(name, desc, unit string, kind Kind, isInt bool) (*observable, error) {
	i, err := m.sync(name, desc, unit, kind, isInt, nil)
	if i == nil {
		return nil, err
	}
	m.p.mu.Lock()
	defer m.p.mu.Unlock()
	if i.obs == nil {
		i.obs = &observable{i: i, last: map[uint64]float64{}}
	}
	return i.obs, err // err: an invalid name the instrument records under anyway
}

func (m *Meter) int64Obs(name, desc, unit string, kind Kind, cbs []metric.Int64Callback) (*int64Observable, error) {
	o, err := m.observable(name, desc, unit, kind, true)
	if o == nil {
		return &int64Observable{}, err
	}
	inst := &int64Observable{o: o}
	for _, cb := range cbs {
		m.p.addCallback(&callbackReg{i64: cb, i64Obs: inst})
	}
	return inst, err
}

func (m *Meter) float64Obs(name, desc, unit string, kind Kind, cbs []metric.Float64Callback) (*float64Observable, error) {
	o, err := m.observable(name, desc, unit, kind, false)
	if o == nil {
		return &float64Observable{}, err
	}
	inst := &float64Observable{o: o}
	for _, cb := range cbs {
		m.p.addCallback(&callbackReg{f64: cb, f64Obs: inst})
	}
	return inst, err
}

// Int64ObservableCounter returns the observable counter named name: its
// callbacks report cumulative totals each Collect.
func (m *Meter) Int64ObservableCounter(name string, opts ...metric.Int64ObservableCounterOption) (metric.Int64ObservableCounter, error) {
	c := metric.NewInt64ObservableCounterConfig(opts...)
	return m.int64Obs(name, c.Description(), c.Unit(), KindObservableCounter, c.Callbacks())
}

// Int64ObservableUpDownCounter returns the observable up-down counter
// named name.
func (m *Meter) Int64ObservableUpDownCounter(name string, opts ...metric.Int64ObservableUpDownCounterOption) (metric.Int64ObservableUpDownCounter, error) {
	c := metric.NewInt64ObservableUpDownCounterConfig(opts...)
	return m.int64Obs(name, c.Description(), c.Unit(), KindObservableUpDownCounter, c.Callbacks())
}

// Int64ObservableGauge returns the observable gauge named name.
func (m *Meter) Int64ObservableGauge(name string, opts ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	c := metric.NewInt64ObservableGaugeConfig(opts...)
	return m.int64Obs(name, c.Description(), c.Unit(), KindObservableGauge, c.Callbacks())
}

// Float64ObservableCounter returns the observable counter named name.
func (m *Meter) Float64ObservableCounter(name string, opts ...metric.Float64ObservableCounterOption) (metric.Float64ObservableCounter, error) {
	c := metric.NewFloat64ObservableCounterConfig(opts...)
	return m.float64Obs(name, c.Description(), c.Unit(), KindObservableCounter, c.Callbacks())
}

// Float64ObservableUpDownCounter returns the observable up-down counter
// named name.
func (m *Meter) Float64ObservableUpDownCounter(name string, opts ...metric.Float64ObservableUpDownCounterOption) (metric.Float64ObservableUpDownCounter, error) {
	c := metric.NewFloat64ObservableUpDownCounterConfig(opts...)
	return m.float64Obs(name, c.Description(), c.Unit(), KindObservableUpDownCounter, c.Callbacks())
}

// Float64ObservableGauge returns the observable gauge named name.
func (m *Meter) Float64ObservableGauge(name string, opts ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
	c := metric.NewFloat64ObservableGaugeConfig(opts...)
	return m.float64Obs(name, c.Description(), c.Unit(), KindObservableGauge, c.Callbacks())
}

// callbackReg is a registered callback: an instrument's own (i64 or f64
// with its instrument) or a multi-instrument one (multi with the
// instruments it may observe).
//
// It runs as one of the callbacks every zerostat snapshot runs first
// (internal/core's Collect: the push pipeline, the Prometheus handler, the
// snapshot handler, /debug/stats), bounded in time and isolated from the
// others, as the metric package's are: run calls it and buffers what it
// observes, apply records that, so a callback that blocks or panics loses
// its values of that snapshot and stops nothing else.
type callbackReg struct {
	embedded.Registration
	p      *MeterProvider
	i64    metric.Int64Callback
	i64Obs *int64Observable
	f64    metric.Float64Callback
	f64Obs *float64Observable
	multi  metric.Callback
	allow  map[*observable]bool

	cb core.Callback
	// sem, a semaphore of one (set by addCallback), is held while the
	// callback runs: a channel, so that Collect can wait for a snapshot's
	// run with a deadline (lockWithin).
	sem     chan struct{}
	pending []observation // what the run in progress observes
	err     error         // the last run's
	seq     uint64        // runs so far (under sem)
	// snap is a snapshot's run, kept for its Apply, which takes no sem: a
	// Collect may run the callback meanwhile, with a later seq. Under the
	// provider's collectMu, applied is the seq of the last run applied: a
	// run's values are applied only if no later run's were, so that an
	// observable counter never goes back.
	snap    runResult
	applied uint64
	sums    map[sumKey]int // apply's scratch: a sum's set, by its index in order
	order   []observation
}

// runResult is what one run of a callback observed.
type runResult struct {
	obs []observation
	err error
	seq uint64
}

type sumKey struct {
	o *observable
	h uint64
}

// observation is one value a callback observed, recorded by apply.
type observation struct {
	o   *observable
	set attribute.Set
	v   float64
}

func (r *callbackReg) lock()   { r.sem <- struct{}{} }
func (r *callbackReg) unlock() { <-r.sem }

// lockWithin takes sem, waiting for a run in progress no later than
// deadline nor past ctx's end, and reports whether it did.
func (r *callbackReg) lockWithin(ctx context.Context, deadline time.Time) bool {
	select {
	case r.sem <- struct{}{}:
		return true
	default:
	}
	if collectWaitHook != nil {
		collectWaitHook()
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case r.sem <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// collectWaitHook, when set (by tests), is called when Collect finds a
// callback running and waits for it.
var collectWaitHook func()

// run calls the callback with ctx, buffering its observations in
// r.pending, and numbers the run. Called with sem held.
func (r *callbackReg) run(ctx context.Context) {
	defer func() { r.seq++ }()
	r.pending, r.err = r.pending[:0], nil
	switch {
	case r.i64 != nil:
		r.err = r.i64(ctx, int64Obs{r: r, o: r.i64Obs.o})
	case r.f64 != nil:
		r.err = r.f64(ctx, float64Obs{r: r, o: r.f64Obs.o})
	default:
		ob := &observer{r: r}
		r.err = errors.Join(r.multi(ctx, ob), ob.err)
	}
}

// result moves what the run just ended observed into res (whose buffer
// it takes back for the next run). Called with sem held.
func (r *callbackReg) result(res *runResult) {
	res.obs, r.pending = r.pending, res.obs[:0]
	res.err, r.err = r.err, nil
	res.seq = r.seq
}

// apply records the observations of res, unless a later run's were
// applied already, and returns its error. Observations of one attribute
// set by one run add up for a sum (an observable counter or up-down
// counter observed twice for a set in one callback: 1, then 2, is 3, as
// in the OTel SDK); for a gauge the last one counts. Called with the
// provider's collectMu held (observe's state).
func (r *callbackReg) apply(res *runResult) error {
	if res.seq > r.applied {
		r.applied = res.seq
		r.order = r.order[:0]
		for _, x := range res.obs {
			if x.o.i.spec.kind == KindObservableGauge {
				r.order = append(r.order, x)
				continue
			}
			if r.sums == nil {
				r.sums = map[sumKey]int{}
			}
			k := sumKey{x.o, distinctHash(&x.set)}
			if j, ok := r.sums[k]; ok {
				r.order[j].v += x.v
				continue
			}
			r.sums[k] = len(r.order)
			r.order = append(r.order, x)
		}
		for _, x := range r.order {
			x.o.observe(x.set, x.v)
		}
		clear(r.sums)
		clear(r.order)
	}
	clear(res.obs)
	res.obs = res.obs[:0]
	err := res.err
	res.err = nil
	return err
}

// name names the callback in selfstats and errors: "otel:" and the
// instruments it may observe.
func (r *callbackReg) name() string {
	var names []string
	switch {
	case r.i64Obs != nil:
		names = append(names, r.i64Obs.o.i.spec.name)
	case r.f64Obs != nil:
		names = append(names, r.f64Obs.o.i.spec.name)
	default:
		for o := range r.allow {
			names = append(names, o.i.spec.name)
		}
		slices.Sort(names)
	}
	return "otel:" + strings.Join(names, ",")
}

var errForeign = errors.New("otel: observable instrument not created by this package's MeterProvider")

// RegisterCallback registers f, called by each Collect, which may observe
// the instruments given (observations of others are reported and
// dropped).
func (m *Meter) RegisterCallback(f metric.Callback, insts ...metric.Observable) (metric.Registration, error) {
	r := &callbackReg{multi: f, allow: map[*observable]bool{}}
	var err error
	for _, o := range insts {
		var x *observable
		switch o := o.(type) {
		case *int64Observable:
			x = o.o
		case *float64Observable:
			x = o.o
		default:
			return noopReg{}, fmt.Errorf("%w: %T", errForeign, o)
		}
		switch {
		case x == nil: // its creation failed
		case x.i.p != m.p:
			// Its state is another provider's, written under that
			// provider's collect lock: observing it from this one's would
			// race. The OTel SDK refuses an instrument of another meter
			// likewise: skipped, the others registered, an error.
			err = errors.Join(err, fmt.Errorf("otel: RegisterCallback: observable %q was created by another MeterProvider: not registered with this callback", x.i.spec.name))
		default:
			r.allow[x] = true
		}
	}
	if len(r.allow) == 0 || f == nil {
		return noopReg{}, err
	}
	m.p.addCallback(r)
	return r, err
}

// Unregister removes the callback; idempotent.
func (r *callbackReg) Unregister() error {
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cbs = slices.DeleteFunc(p.cbs, func(x *callbackReg) bool { return x == r })
	core.RemoveCallback(&r.cb)
	return nil
}

func (p *MeterProvider) addCallback(r *callbackReg) {
	r.p, r.sem = p, make(chan struct{}, 1)
	r.cb = core.Callback{Name: r.name(),
		Run: func() {
			r.lock()
			defer r.unlock()
			r.run(context.Background())
			r.result(&r.snap)
		},
		Apply: func() {
			// No sem: a Collect may be running the callback again, and
			// a snapshot never waits for it (under core's collect lock,
			// a slow callback would stall every exporter's snapshot).
			p.collectMu.Lock()
			err := r.apply(&r.snap)
			p.collectMu.Unlock()
			if err != nil {
				r.cb.Report(err)
				otel.Handle(err)
			}
		}}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.shutdown {
		p.cbs = append(p.cbs, r)
		core.AddCallback(&r.cb)
	}
}

type noopReg struct{ embedded.Registration }

func (noopReg) Unregister() error { return nil }

// observer is what a callback observes through, valid during Collect.
type observer struct {
	embedded.Observer
	embedded.Int64Observer
	embedded.Float64Observer
	r   *callbackReg
	err error
}

func (ob *observer) ObserveFloat64(o metric.Float64Observable, v float64, opts ...metric.ObserveOption) {
	x, ok := o.(*float64Observable)
	if !ok || x.o == nil || !ob.r.allow[x.o] {
		ob.err = errors.Join(ob.err, fmt.Errorf("otel: a callback observed an instrument (%T) it was not registered with: dropped", o))
		return
	}
	ob.r.pending = append(ob.r.pending, observation{x.o, metric.NewObserveConfig(opts).Attributes(), v})
}

func (ob *observer) ObserveInt64(o metric.Int64Observable, v int64, opts ...metric.ObserveOption) {
	x, ok := o.(*int64Observable)
	if !ok || x.o == nil || !ob.r.allow[x.o] {
		ob.err = errors.Join(ob.err, fmt.Errorf("otel: a callback observed an instrument (%T) it was not registered with: dropped", o))
		return
	}
	ob.r.pending = append(ob.r.pending, observation{x.o, metric.NewObserveConfig(opts).Attributes(), float64(v)})
}

type int64Obs struct {
	embedded.Int64Observer
	r *callbackReg
	o *observable
}

func (ob int64Obs) Observe(v int64, opts ...metric.ObserveOption) {
	ob.r.pending = append(ob.r.pending, observation{ob.o, metric.NewObserveConfig(opts).Attributes(), float64(v)})
}

type float64Obs struct {
	embedded.Float64Observer
	r *callbackReg
	o *observable
}

func (ob float64Obs) Observe(v float64, opts ...metric.ObserveOption) {
	ob.r.pending = append(ob.r.pending, observation{ob.o, metric.NewObserveConfig(opts).Attributes(), v})
}

// Collect runs every registered callback, in registration order, and
// records what they observe: an observable gauge's value as its last
// value, an observable counter's or up-down counter's cumulative value as
// the difference from the previous one observed for the attribute set.
// Every zerostat snapshot (the push pipeline's exports, the Prometheus
// handler's scrapes, the snapshot handler, /debug/stats) runs the
// callbacks itself, bounded in time (see callbackReg); Collect runs them
// on demand, as the SDK's reader does, waiting for each, for a program
// that reads the views with view.RetrieveData. Callback errors are joined
// and returned; every callback runs (one that a snapshot is running is
// waited for, all of them within one collect timeout (zerostat's
// metric.SetTimeout), then reported and left out). Safe for concurrent use: concurrent Collects
// are serialised.
func (p *MeterProvider) Collect(ctx context.Context) error {
	p.runMu.Lock()
	defer p.runMu.Unlock()
	p.mu.Lock()
	cbs := slices.Clone(p.cbs)
	p.mu.Unlock()
	// A snapshot may be running a callback: wait for it as a snapshot
	// waits for its callbacks, for the collect timeout at most, all of
	// them together.
	wait := core.CollectTimeout()
	deadline := time.Now().Add(wait)
	var errs []error
	for _, r := range cbs {
		if !r.lockWithin(ctx, deadline) {
			errs = append(errs, fmt.Errorf("otel: callback %s: still running since a snapshot, %v after Collect began: left out", r.cb.Name, wait))
			continue
		}
		if err := r.runAndApply(ctx); err != nil {
			r.cb.Report(err) // counted in selfstats as a snapshot's failure is
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// runAndApply is Collect's run of r (sem held, released on return): a
// panic in the callback is returned as an error naming it, and its
// observations are dropped, as a snapshot drops them.
func (r *callbackReg) runAndApply(ctx context.Context) (err error) {
	defer r.unlock()
	defer func() {
		if v := recover(); v != nil {
			clear(r.pending)
			r.pending, r.err = r.pending[:0], nil
			err = fmt.Errorf("otel: callback %s panicked: %v; its values are left out", r.cb.Name, v)
		}
	}()
	r.run(ctx) // no provider lock held: a snapshot applying other callbacks never waits on this one
	var res runResult
	r.result(&res)
	r.p.collectMu.Lock()
	defer r.p.collectMu.Unlock()
	err = r.apply(&res)
	r.pending = res.obs[:0] // the buffer, back for the next run
	return err
}
