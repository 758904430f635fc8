package view

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
)

// View says how the values of one measure are aggregated: by which tag keys
// they are grouped into rows, and with which aggregation.
type View struct {
	Name        string // unique; defaults to the measure's name
	Description string // defaults to the measure's description

	// TagKeys are the keys whose values group recordings into rows. A
	// recording whose tags lack a key (or give it the empty value) lands in
	// the row without that key. Register sorts this slice in place, as
	// OpenCensus does: do not share it with code that relies on its order.
	TagKeys []tag.Key

	// Measure is the measure to aggregate.
	Measure stats.Measure

	// Aggregation is how the values are aggregated.
	Aggregation *Aggregation

	// CardinalityLimit caps the view's live rows (tag-value combinations):
	// once reached, recordings with new combinations are aggregated into
	// one overflow row (see OverflowValue and Row.IsOverflow), so totals
	// stay exact and memory bounded. 0 means the default (see SetDefaultCardinalityLimit);
	// a negative value means no limit. Not in OpenCensus.
	CardinalityLimit int
}

// DefaultCardinalityLimit is the cardinality limit of views that do not
// set one, until SetDefaultCardinalityLimit changes it.
const DefaultCardinalityLimit = 10000

// OverflowKey is OpenTelemetry's otel.metric.overflow attribute, which
// zerostat's own exporters (Prometheus, OTLP, remote write, msgpack
// readers) put on the overflow series of a view that reached its
// cardinality limit, as "true".
var OverflowKey = tag.MustNewKey("otel.metric.overflow")

// OverflowValue is the value of every tag of the overflow row that
// RetrieveData and view.Exporter receive: the row has one tag per key of
// the view, in key order, each set to OverflowValue, and no other tag. So
// an OpenCensus-era exporter that maps a row's tags onto the view's keys
// (by position, or by matching keys in order as OpenCensus's Prometheus
// exporter does) finds every key and shows the row as, say,
// method="otel.metric.overflow"; a tag-less overflow tag would index past
// the view's keys. Row.IsOverflow tells the row apart in Go. Tag values of
// recordings should not use this value (it is printable ASCII, so they
// could: such a row would then look like the overflow row to exporters
// other than Go code using IsOverflow).
const OverflowValue = "otel.metric.overflow"

var defaultLimit atomic.Int64

func init() { defaultLimit.Store(DefaultCardinalityLimit) }

// SetDefaultCardinalityLimit sets the cardinality limit of views registered
// from now on that do not set their own; n <= 0 means no limit.
func SetDefaultCardinalityLimit(n int) { defaultLimit.Store(int64(n)) }

func (v *View) limit() int {
	switch {
	case v.CardinalityLimit > 0:
		return v.CardinalityLimit
	case v.CardinalityLimit < 0:
		return 0
	}
	return int(max(defaultLimit.Load(), 0))
}

// WithName returns a copy of v with another name.
func (v *View) WithName(name string) *View {
	c := *v
	c.Name = name
	return &c
}

// ErrNegativeBucketBounds is wrapped by Register for a distribution with a
// negative bound (OpenCensus's error).
var ErrNegativeBucketBounds = errors.New("negative bucket bounds not supported")

const maxNameLength = 255

// canonicalize validates v and brings it to the form OpenCensus registers:
// default name and description filled in, tag keys sorted, distribution
// bounds sorted with zero bounds dropped. Like OpenCensus it updates v (and
// its aggregation) in place; call it under regMu.
func (v *View) canonicalize() error {
	if v.Measure == nil {
		return fmt.Errorf("view %q: cannot register: Measure is nil", v.Name)
	}
	if v.Aggregation == nil {
		return fmt.Errorf("view %q: cannot register: Aggregation is nil", v.Name)
	}
	// Write only what changes: a registered view may be read concurrently
	// (by exporters) while it is registered again.
	if n := v.Measure.Name(); v.Name == "" && n != "" {
		v.Name = n
	}
	if d := v.Measure.Description(); v.Description == "" && d != "" {
		v.Description = d
	}
	if v.Name == "" {
		return errors.New("view: cannot register a view with an empty name over a measure with an empty name")
	}
	if len(v.Name) > maxNameLength {
		return fmt.Errorf("view %.40q...: cannot register: name is %d bytes, longer than %d", v.Name, len(v.Name), maxNameLength)
	}
	if !core.ValidValue(v.Name) {
		return fmt.Errorf("view %q: cannot register: name must be printable ASCII", v.Name)
	}
	if v.Aggregation.Type.kind() == 0 {
		return fmt.Errorf("view %q: cannot register: unknown aggregation type %v", v.Name, v.Aggregation.Type)
	}
	for _, k := range v.TagKeys {
		if !core.ValidKey(k.Name()) {
			return fmt.Errorf("view %q: cannot register: %w", v.Name, &core.KeyError{Key: k.Name()})
		}
	}
	sort.Slice(v.TagKeys, func(i, j int) bool { return v.TagKeys[i].Name() < v.TagKeys[j].Name() })
	for i := 1; i < len(v.TagKeys); i++ {
		if v.TagKeys[i].Name() == v.TagKeys[i-1].Name() { // not ==: see tag.Key
			return fmt.Errorf("view %q: cannot register: tag key %q is listed twice", v.Name, v.TagKeys[i].Name())
		}
	}
	if v.Aggregation.Type == AggTypeExponentialDistribution {
		size, scale := v.Aggregation.expConfig()
		switch exphist.Check(size, scale) {
		case exphist.ErrMaxSize:
			return fmt.Errorf("view %q: cannot register: exponential distribution maxSize %d is below 2", v.Name, size)
		case exphist.ErrMaxScale:
			return fmt.Errorf("view %q: cannot register: exponential distribution maxScale %d is outside %d..%d", v.Name, scale, exphist.MinScale, exphist.MaxScale)
		}
		return nil
	}
	if v.Aggregation.Type == AggTypeSummary {
		if err := core.CheckQuantiles(v.Aggregation.Quantiles); err != nil {
			return fmt.Errorf("view %q: cannot register: summary %w", v.Name, err)
		}
		return nil
	}
	if v.Aggregation.Type != AggTypeDistribution {
		return nil
	}
	b := v.Aggregation.Buckets
	for _, x := range b {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("view %q: cannot register: bucket bound %v is not finite", v.Name, x)
		}
	}
	sort.Float64s(b)
	upper := v.Aggregation.UpperInclusive
	for i, x := range b {
		if x < 0 && !upper {
			return fmt.Errorf("view %q: cannot register: bound %v: %w", v.Name, x, ErrNegativeBucketBounds)
		}
		if i > 0 && x == b[i-1] {
			return fmt.Errorf("view %q: cannot register: bucket bound %v is repeated", v.Name, x)
		}
	}
	// OpenCensus drops zero bounds; under the upper-inclusive rule (not in
	// OpenCensus) a zero bound closes the bucket (-Inf, 0], OpenTelemetry's
	// first default bucket, so it stays, and negative bounds are allowed.
	for len(b) > 0 && b[0] == 0 && !upper {
		b = b[1:]
	}
	if len(b) != len(v.Aggregation.Buckets) {
		// Write only on change: a registered view may be read concurrently.
		v.Aggregation.Buckets = b
	}
	return nil
}

// same reports whether registering b when a is registered under the same
// name is a no-op. OpenCensus compares aggregations with reflect.DeepEqual,
// which in practice accepts only the same *Aggregation; zerostat compares
// what the view aggregates: measure name, aggregation type, bounds and
// tag keys.
func (a *View) same(b *View) bool {
	return a == b || (a.Measure.Name() == b.Measure.Name() &&
		a.Aggregation.Type == b.Aggregation.Type &&
		a.Aggregation.UpperInclusive == b.Aggregation.UpperInclusive &&
		a.Aggregation.UpDown == b.Aggregation.UpDown &&
		a.Aggregation.Observed == b.Aggregation.Observed &&
		slices.Equal(a.Aggregation.Buckets, b.Aggregation.Buckets) &&
		(a.Aggregation.Type != AggTypeExponentialDistribution || sameExp(a.Aggregation, b.Aggregation)) &&
		(a.Aggregation.Type != AggTypeSummary || slices.Equal(a.Aggregation.Quantiles, b.Aggregation.Quantiles)) &&
		slices.EqualFunc(a.TagKeys, b.TagKeys, func(x, y tag.Key) bool { return x.Name() == y.Name() }))
}

// sameExp reports whether two exponential aggregations have the same size
// and scale, defaults filled in.
func sameExp(a, b *Aggregation) bool {
	as, ac := a.expConfig()
	bs, bc := b.expConfig()
	return as == bs && ac == bc
}

// registered is a view and the aggregator it feeds.
type registered struct {
	view    *View
	keys    []tag.Key // sorted copy of view.TagKeys
	bounds  []float64 // copy of the canonical bounds
	measure *core.Measure
	agg     *core.Aggregator
	core    *core.View // what exporters read (the default meter's views only)
}

// Register starts aggregating for each view, in the default meter.
// Registering a view equal to one already registered under its name is a
// no-op; a different view under a taken name is an error. Any invalid view
// (see the errors below) fails the whole call before anything is
// registered.
//
// Invalid: a nil *View, a nil Measure or Aggregation, an unknown aggregation
// type, an empty or over-255-byte or non-printable name, an invalid or
// repeated tag key, a negative, non-finite or repeated bucket bound, a
// summary quantile that is NaN, outside 0..1, repeated or not increasing.
//
// Set-up cost (a lock, allocations); safe for concurrent use.
func Register(views ...*View) error { return defaultWorker.Register(views...) }

// Register starts aggregating for each view in this meter; see the
// package-level Register for the rules. Set-up cost; safe for concurrent
// use.
func (w *worker) Register(views ...*View) error {
	w.regMu.Lock()
	defer w.regMu.Unlock()
	for i, v := range views {
		if v == nil {
			return fmt.Errorf("view: cannot register: view %d of %d is nil", i+1, len(views))
		}
		if err := v.canonicalize(); err != nil {
			return err
		}
	}
	var errs []error
	for _, v := range views {
		if r, ok := w.views[v.Name]; ok {
			if !r.view.same(v) {
				errs = append(errs, fmt.Errorf("view %q: cannot register: a different view with the same name is already registered", v.Name))
			}
			continue
		}
		keys := slices.Clone(v.TagKeys)
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.Name()
		}
		var bounds []float64
		if v.Aggregation.Type == AggTypeDistribution {
			bounds = slices.Clone(v.Aggregation.Buckets)
		}
		m := v.Measure
		r := &registered{
			view:    v,
			keys:    keys,
			bounds:  bounds,
			measure: core.MeasureFor(m.Name(), m.Description(), m.Unit()),
			agg:     core.NewAggregator(v.Aggregation.Type.kind(), names, bounds, v.limit()),
		}
		if v.Aggregation.Type == AggTypeDistribution && v.Aggregation.UpperInclusive {
			r.agg.CountUpperInclusive()
		}
		if v.Aggregation.Type == AggTypeExponentialDistribution {
			if err := r.agg.SetExponential(v.Aggregation.expConfig()); err != nil {
				return err // canonicalize checked them
			}
		}
		// A summary's rows are set whole by its callback (metric.NewSummary):
		// records of its measure do not reach it (it is not subscribed).
		summary := v.Aggregation.Type == AggTypeSummary
		if summary {
			if err := r.agg.SetQuantiles(v.Aggregation.Quantiles); err != nil {
				return err // canonicalize checked them
			}
		}
		_, isInt := m.(*stats.Int64Measure)
		if isInt {
			r.agg.IntegerSums()
		}
		w.views[v.Name] = r
		if !summary {
			w.subscribe(r.measure.Name, r.agg)
		}
		if !w.isDefault {
			continue
		}
		r.core = &core.View{Name: v.Name, Description: v.Description, Unit: r.measure.Unit, Keys: names, Agg: r.agg,
			Measure: r.measure, Int: isInt, UpDown: v.Aggregation.UpDown && v.Aggregation.Type == AggTypeSum,
			Observed: v.Aggregation.Observed && v.Aggregation.Type == AggTypeSum}
		r.core.Help = promname.MetricOf(r.core).Help
		core.AddView(r.core)
		if !summary {
			r.measure.Subscribe(r.agg)
		}
	}
	return errors.Join(errs...)
}

// Unregister stops aggregating for each view (by name), in the default
// meter, and frees its rows; registering it again starts from zero. As in
// OpenCensus, the registered exporters receive the view's data one last
// time first, and no periodic report of the view follows. Unknown views
// are ignored. Safe for concurrent use, but not from an Exporter's
// ExportView (it waits for the report in progress). Cost: the final
// report, then linear in the view's rows (about 0.3 µs per row to release
// them); reports of other views wait for the final report only.
func Unregister(views ...*View) { defaultWorker.Unregister(views...) }

// Unregister stops aggregating for each view in this meter; see the
// package-level Unregister.
func (w *worker) Unregister(views ...*View) {
	var detach []*core.Aggregator
	defer func() {
		// After reportMu: releasing a million rows takes a fraction of a
		// second, and the view is out of every report already.
		for _, a := range detach {
			a.Detach()
		}
	}()
	// No periodic report may run between the view's removal and its final
	// report: it would send the view again, after its last report.
	w.reportMu.Lock()
	defer w.reportMu.Unlock()
	for _, v := range views {
		if v == nil {
			continue
		}
		w.regMu.Lock()
		r, ok := w.views[v.Name]
		if ok {
			delete(w.views, v.Name)
			w.unsubscribe(r.measure.Name, r.agg)
			if w.isDefault {
				r.measure.Unsubscribe(r.agg)
				core.RemoveView(r.core)
			}
		}
		w.regMu.Unlock()
		if !ok {
			continue
		}
		if exps := w.exporters(); len(exps) > 0 {
			d := r.data(time.Now())
			for _, e := range exps {
				e.ExportView(d)
			}
		}
		detach = append(detach, r.agg)
	}
}

// Find returns the view named name registered in the default meter, or
// nil.
func Find(name string) (v *View) { return defaultWorker.Find(name) }

// Find returns the view named name registered in this meter, or nil.
func (w *worker) Find(name string) *View {
	w.regMu.Lock()
	defer w.regMu.Unlock()
	if r, ok := w.views[name]; ok {
		return r.view
	}
	return nil
}

func (w *worker) lookup(name string) (*registered, error) {
	w.regMu.Lock()
	defer w.regMu.Unlock()
	r, ok := w.views[name]
	if !ok {
		return nil, fmt.Errorf("view %q: cannot retrieve data: not registered", name)
	}
	return r, nil
}

// RetrieveData returns the rows of the view named viewName registered in
// the default meter, sorted by their tag values (key by key, in key order;
// a row without a key sorts before the rows with it), then the overflow
// row if the view reached its cardinality limit (see OverflowValue). The
// data is a snapshot: recorders keep running while it is read. Cost: one
// allocation per row and a sort. It does not run callback gauges and
// counters (package metric): call metric.Collect first for their current
// values, as every export and scrape does.
func RetrieveData(viewName string) ([]*Row, error) { return defaultWorker.RetrieveData(viewName) }

// RetrieveData returns the rows of the view named viewName registered in
// this meter; see the package-level RetrieveData.
func (w *worker) RetrieveData(viewName string) ([]*Row, error) {
	r, err := w.lookup(viewName)
	if err != nil {
		return nil, err
	}
	return r.rows(), nil
}

// Data is a snapshot of a view, as exporters receive it.
type Data struct {
	View       *View
	Start, End time.Time
	Rows       []*Row
}

func (r *registered) data(end time.Time) *Data {
	rows, keys := r.rowsKeys()
	v := r.view
	if len(keys) != len(v.TagKeys) {
		// Keys were added (a growable view of the otel package): the
		// exporter sees the view with all of them.
		c := *v
		c.TagKeys = sortedKeys(keys)
		v = &c
	}
	return &Data{View: v, Start: r.agg.Start(), End: end, Rows: rows}
}

func (r *registered) rows() []*Row {
	rows, _ := r.rowsKeys()
	return rows
}

// rowsKeys returns the rows and the keys (view order) they were read with.
func (r *registered) rowsKeys() ([]*Row, []tag.Key) {
	series := r.agg.AppendSeries(nil)
	strs := core.Interned() // after AppendSeries: holds their values
	keys := r.keys
	if names := r.agg.Keys(); len(names) != len(keys) { // after AppendSeries too
		keys = make([]tag.Key, len(names))
		for i, n := range names {
			keys[i], _ = tag.NewKey(n) // valid: a key's name once
		}
	}
	slices.SortFunc(series, func(a, b *core.Series) int {
		va, vb := a.ValueIDs(), b.ValueIDs()
		// By name, the first len(r.keys) (every series has them); a key
		// added later (a growable view) sorts after, absent first.
		for i := range max(len(va), len(vb)) {
			if c := strings.Compare(strs[valueID(va, i)], strs[valueID(vb, i)]); c != 0 {
				return c
			}
		}
		return 0
	})
	rows := make([]*Row, len(series), len(series)+1)
	for i, s := range series {
		rows[i] = &Row{Tags: tags(keys, strs, s.ValueIDs(), len(keys) != len(r.keys)), Data: r.aggData(s)}
	}
	if o := r.agg.Overflow(); o != nil {
		tags := make([]tag.Tag, len(keys))
		for i, k := range sortedKeys(keys) {
			tags[i] = tag.Tag{Key: k, Value: OverflowValue}
		}
		rows = append(rows, &Row{Tags: tags, Data: r.aggData(o), overflow: true})
	}
	return rows, keys
}

// valueID returns vids[i], or 0 (absent) past its end.
func valueID(vids []uint32, i int) uint32 {
	if i < len(vids) {
		return vids[i]
	}
	return 0
}

// sortedKeys returns keys sorted by name (keys itself when it is).
func sortedKeys(keys []tag.Key) []tag.Key {
	byName := func(a, b tag.Key) int { return strings.Compare(a.Name(), b.Name()) }
	if slices.IsSortedFunc(keys, byName) {
		return keys
	}
	return slices.SortedFunc(slices.Values(keys), byName)
}

// tags returns the row's tags sorted by key name, leaving out absent keys
// (id 0, ""). vids are in the order of keys: by name, then (grown set) any
// keys added to a growable view; they may be shorter (keys added after
// the series).
func tags(keys []tag.Key, strs []string, vids []uint32, grown bool) []tag.Tag {
	n := 0
	for _, id := range vids {
		if id != 0 {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	tags := make([]tag.Tag, 0, n)
	for i, id := range vids {
		if id != 0 {
			tags = append(tags, tag.Tag{Key: keys[i], Value: strs[id]})
		}
	}
	if grown {
		slices.SortFunc(tags, func(a, b tag.Tag) int { return strings.Compare(a.Key.Name(), b.Key.Name()) })
	}
	return tags
}

func (r *registered) aggData(s *core.Series) AggregationData {
	switch r.agg.Kind() {
	case core.KindCount:
		return &CountData{Start: s.Start(), Value: s.ReadCount()}
	case core.KindSum:
		return &SumData{Start: s.Start(), Value: s.ReadSum()}
	case core.KindLastValue:
		return &LastValueData{Value: s.ReadLast()}
	case core.KindExponential:
		return expData(s)
	case core.KindSummary:
		return summaryData(r.agg, s)
	}
	d := &DistributionData{
		CountPerBucket: make([]int64, len(r.bounds)+1),
		Start:          s.Start(),
		bounds:         r.bounds,
	}
	st := s.ReadDist(d.CountPerBucket)
	if exs := s.Exemplars(nil); len(exs) > 0 {
		d.ExemplarsPerBucket = make([]*Exemplar, len(exs))
		for i, e := range exs {
			if e != nil {
				d.ExemplarsPerBucket[i] = &Exemplar{Value: e.Value, Timestamp: time.Unix(0, e.Time), Attachments: e.Attachments}
			}
		}
	}
	d.Count, d.Min, d.Max, d.Mean, d.SumOfSquaredDev, d.sum, d.hasSum = st.Count, st.Min, st.Max, st.Mean, st.M2, st.Sum, true
	return d
}

// expData reads an exponential series.
func expData(s *core.Series) *ExponentialDistributionData {
	var snap exphist.Snapshot
	s.ReadExp(&snap)
	d := &ExponentialDistributionData{
		Count: int64(snap.Count), Sum: snap.Sum, Scale: snap.Scale, ZeroCount: int64(snap.ZeroCount),
		PositiveOffset: snap.Positive.Offset, PositiveCounts: int64s(snap.Positive.Counts),
		NegativeOffset: snap.Negative.Offset, NegativeCounts: int64s(snap.Negative.Counts),
		Start: s.Start(),
	}
	if snap.Count > 0 {
		d.Min, d.Max = snap.Min, snap.Max
	}
	return d
}

func int64s(c []uint64) []int64 {
	if len(c) == 0 {
		return nil
	}
	out := make([]int64, len(c))
	for i, x := range c {
		out[i] = int64(x)
	}
	return out
}

// Row is the data of one tag-value combination of a view.
type Row struct {
	Tags []tag.Tag // sorted by key; keys without a value are left out
	Data AggregationData

	overflow bool // see IsOverflow
}

// IsOverflow reports whether r is the overflow row of a view past its
// cardinality limit: the recordings of the tag combinations beyond it,
// with every key of the view set to OverflowValue.
func (r *Row) IsOverflow() bool { return r.overflow }

// String returns the row as "{ { {k v}... }data }", as OpenCensus does.
func (r *Row) String() string {
	var b strings.Builder
	b.WriteString("{ { ")
	for _, t := range r.Tags {
		fmt.Fprintf(&b, "{%v %v}", t.Key.Name(), t.Value)
	}
	b.WriteString(" }")
	fmt.Fprintf(&b, "%v", r.Data)
	b.WriteString(" }")
	return b.String()
}

// Equal reports whether two rows have the same tags and data (float data to
// OpenCensus's tolerance).
func (r *Row) Equal(other *Row) bool {
	if r == other {
		return true
	}
	if r == nil || other == nil || !slices.Equal(r.Tags, other.Tags) {
		return false
	}
	return r.Data.equal(other.Data)
}
