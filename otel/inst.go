package otel

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"

	"github.com/zerostat/zerostat/internal/attrval"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// Kind is an instrument kind.
type Kind uint8

// Instrument kinds.
const (
	KindCounter Kind = 1 + iota
	KindUpDownCounter
	KindHistogram
	KindGauge
	KindObservableCounter
	KindObservableUpDownCounter
	KindObservableGauge
)

var kindName = [...]string{"", "Counter", "UpDownCounter", "Histogram", "Gauge", "ObservableCounter", "ObservableUpDownCounter", "ObservableGauge"}

func (k Kind) String() string {
	if int(k) < len(kindName) {
		return kindName[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

type instSpec struct {
	name, desc, unit string
	kind             Kind
	isInt            bool
	bounds           []float64 // histograms
	exp              *expSpec  // a histogram's exponential aggregation (nil: explicit buckets), from the provider's configuration and the name
}

func (a *instSpec) same(b *instSpec) bool {
	return a.name == b.name && a.desc == b.desc && a.unit == b.unit && a.kind == b.kind &&
		a.isInt == b.isInt && slices.Equal(a.bounds, b.bounds)
}

// inst is one instrument: a zerostat measure, the view over it
// (registered with the first measurement, when the attribute keys are
// known) and a table from attribute sets to bound handles.
//
// Concurrency protocol: records read tab with one atomic load and probe it
// without locks; an attribute set not in it is bound under mu, which
// inserts it into a copy when the table grows (published atomically).
type inst struct {
	p      *MeterProvider
	spec   instSpec
	filter ExemplarFilter // the provider's
	// plain, bg and todo decide how a measurement looks at its context
	// for the exemplar filter. plain is the span type word of the
	// measurements recorded without an exemplar (plainTab(filter, kind)):
	// nil for every one (always_off, and the kinds that keep no
	// exemplars, the observable ones: then nothing more is read); under
	// trace_based the no-op span's, which trace.SpanFromContext returns
	// for a context without a span (see measure). bg and todo are the
	// context type words a measurement skips even that look for, checked
	// first (ctxTabs: but under always_on, context.Background()'s and
	// context.TODO()'s; see mayHoldSpan).
	plain    unsafe.Pointer
	bg, todo unsafe.Pointer
	fm       *stats.Float64Measure // the measure (Float64 instruments)
	im       *stats.Int64Measure   // the measure (Int64 instruments)

	tab atomic.Pointer[table]

	mu       sync.Mutex
	view     atomic.Pointer[view.View] // nil until the first measurement
	cv       *core.View                // the view as published (GrowView replaces it); nil if it cannot grow
	agg      *core.Aggregator          // the view's aggregator, whose keys it types (SetKeyType)
	keys     map[attribute.Key]tag.Key // the view's attribute keys
	n        int                       // entries in tab (the overflow entry not counted)
	overflow *entry                    // records of attribute sets past the limit
	ovf      atomic.Pointer[entry]     // overflow, published for lookup
	closed   bool
	warned   map[attribute.Key]bool // keys outside the view, reported once
	obs      *observable            // observable instruments; guarded by the provider's mu
}

// entry is an attribute set bound to the view's series.
type entry struct {
	hash uint64
	f    *stats.Float64Handle
	i    *stats.Int64Handle
}

// table is an open-addressing hash table of entries keyed by the hash of
// their attribute set (attribute.Distinct, which the OTel SDK keys its
// maps with too). Slots are written once, under inst.mu.
type table struct {
	mask  uint64
	slots []atomic.Pointer[entry]
}

func newTable(n int) *table {
	return &table{mask: uint64(n - 1), slots: make([]atomic.Pointer[entry], n)}
}

// distinctHash returns the 64-bit hash of set that attribute.Distinct
// holds (Distinct is struct{ hash uint64 } in otel v1.47.0: see
// TestDistinctIsHash). Cost: a field read.
func distinctHash(set *attribute.Set) uint64 {
	d := set.Equivalent()
	return *(*uint64)(unsafe.Pointer(&d))
}

func init() {
	// Guard the layout distinctHash relies on; a later otel release that
	// changes it fails here at start-up, never with wrong data.
	if unsafe.Sizeof(attribute.Distinct{}) != 8 {
		panic("zerostat/otel: attribute.Distinct is not a 64-bit hash in this otel release")
	}
}

func newInst(p *MeterProvider, spec instSpec) *inst {
	i := &inst{p: p, spec: spec, filter: p.cfg.filter, plain: plainTab(p.cfg.filter, spec.kind)}
	if spec.exp != nil {
		// An exponential series keeps no exemplars: its measurements
		// never look at their context.
		i.plain = nil
	}
	i.bg, i.todo = ctxTabs(p.cfg.filter)
	// Measures are process-wide by name, and keep the unit they were
	// first made with: an instrument's measure is named for its view and
	// its unit, so that a provider made again after another's Shutdown,
	// whose instrument has a new unit, exports that unit (before, the old
	// one); providers sharing a view (same name and unit) still share its
	// measure, and two live providers that give one name two units conflict
	// (the second's view does not register) rather than share a wrong unit.
	name := p.cfg.prefix + spec.name + "\x1f" + spec.unit
	if spec.isInt {
		i.im = stats.Int64(name, spec.desc, spec.unit)
	} else {
		i.fm = stats.Float64(name, spec.desc, spec.unit)
	}
	i.tab.Store(newTable(8))
	return i
}

// lookup returns the entry of set. Cost: one atomic load, the hash read
// and a probe (usually one slot) when the set was seen before; binding a
// new set takes mu and allocates. Returns nil once the provider is shut
// down.
func (i *inst) lookup(set attribute.Set) *entry {
	h := distinctHash(&set)
	if e := i.find(h); e != nil {
		return e
	}
	// Past the limit the table is full for good: new sets go to the
	// overflow entry without the lock.
	if e := i.ovf.Load(); e != nil {
		return e
	}
	return i.bind(set, h)
}

// find returns the entry of the set whose hash is h, nil when it is not
// bound. Cost: one atomic load and a probe, usually of one slot.
func (i *inst) find(h uint64) *entry {
	t := i.tab.Load()
	for j := h & t.mask; ; j = (j + 1) & t.mask {
		e := t.slots[j].Load()
		if e == nil || e.hash == h {
			return e
		}
	}
}

// bind is lookup's slow path: it registers the view if it is the first
// measurement, then binds set, or returns the overflow entry when the
// instrument holds its limit of attribute sets.
//
// set is a copy (moved to the heap here, not on lookup's fast path).
func (i *inst) bind(set attribute.Set, h uint64) *entry {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.closed {
		return nil
	}
	t := i.tab.Load()
	j := h & t.mask
	for ; ; j = (j + 1) & t.mask {
		e := t.slots[j].Load()
		if e == nil {
			break
		}
		if e.hash == h {
			return e
		}
	}
	if i.view.Load() == nil {
		if err := i.register(&set); err != nil {
			otel.Handle(err)
			i.closed = true
			return nil
		}
	}
	limit := i.p.cfg.limit
	if limit > 0 && i.n >= limit-1 {
		if i.overflow == nil {
			i.overflow = i.newEntry(h, []tag.Mutator{tag.Upsert(view.OverflowKey, "true")})
			i.ovf.Store(i.overflow)
		}
		return i.overflow
	}
	e := i.newEntry(h, i.mutators(&set))
	i.n++
	if 2*(i.n+1) > len(t.slots) {
		t = i.grow(t)
		j = h & t.mask
		for t.slots[j].Load() != nil {
			j = (j + 1) & t.mask
		}
	}
	t.slots[j].Store(e)
	return e
}

// grow returns a table twice the size of t holding t's entries, published.
func (i *inst) grow(t *table) *table {
	n := newTable(2 * len(t.slots))
	for k := range t.slots {
		e := t.slots[k].Load()
		if e == nil {
			continue
		}
		j := e.hash & n.mask
		for n.slots[j].Load() != nil {
			j = (j + 1) & n.mask
		}
		n.slots[j].Store(e)
	}
	i.tab.Store(n)
	return n
}

// register registers the instrument's view, grouped by the keys of first
// (the instrument's first attribute set), those declared with
// WithAttributeKeys, those of the semantic conventions for its name
// (conventionKeys), and otel.metric.overflow. Called under mu.
func (i *inst) register(first *attribute.Set) error {
	keys := map[attribute.Key]tag.Key{}
	add := func(k attribute.Key) error {
		if _, ok := keys[k]; ok {
			return nil
		}
		tk, err := tag.NewKey(string(k))
		if err != nil {
			return fmt.Errorf("otel: instrument %q: attribute key %q cannot be a zerostat tag key (1 to 255 printable ASCII bytes): %w", i.spec.name, k, err)
		}
		keys[k] = tk
		return nil
	}
	// Instrument names are case-insensitive: so are these lookups (the
	// declared keys and the conventions' names are kept lower-case).
	lower := strings.ToLower(i.spec.name)
	for _, k := range i.p.cfg.keys[lower] {
		if err := add(k); err != nil {
			return err
		}
	}
	for _, k := range conventionKeys[lower] {
		_ = add(k) // valid tag keys, all of them
	}
	for it := first.Iter(); it.Next(); {
		if err := add(it.Attribute().Key); err != nil {
			// The view can still group by the other keys.
			otel.Handle(err)
		}
	}
	tks := []tag.Key{view.OverflowKey}
	for _, tk := range keys {
		if tk.Name() != view.OverflowKey.Name() {
			tks = append(tks, tk)
		}
	}
	var m stats.Measure = i.fm
	if i.im != nil {
		m = i.im
	}
	v := &view.View{
		Name:        i.p.cfg.prefix + i.spec.name,
		Description: i.spec.desc,
		TagKeys:     tks,
		Measure:     m,
		Aggregation: aggregationOf(&i.spec),
		// The instrument caps the attribute sets itself (bind); the
		// view only needs room for them and the overflow point.
		CardinalityLimit: -1,
	}
	if err := registerShared(v); err != nil {
		return fmt.Errorf("otel: instrument %q: %w", i.spec.name, err)
	}
	// The view grows a key for each attribute key a later set brings
	// (addKey). Made growable before its first series, which bind records
	// after this returns.
	if cv := core.FindView(v.Name); cv != nil {
		i.agg = cv.Agg
		i.agg.SetKeyType(view.OverflowKey.Name(), attrval.Bool) // otel.metric.overflow=true, a bool as the SDK's
		if err := cv.Agg.MakeGrowable(); err != nil {
			// Only if something else recorded into the instrument's
			// measure first: the key set stays fixed.
			otel.Handle(fmt.Errorf("otel: instrument %q: its attribute keys cannot grow: %w", i.spec.name, err))
		} else {
			i.cv = cv
		}
	}
	i.keys = keys
	i.view.Store(v)
	return nil
}

// addKey adds k to the view's keys (core.GrowView), reporting whether the
// view now groups by it. Called under mu, before binding a set that has
// k: no handle bound before has k, so none resolved a series without it
// that it should have had (see core.GrowView).
func (i *inst) addKey(k attribute.Key) (tag.Key, bool) {
	if i.cv == nil {
		i.warn(k, fmt.Errorf("otel: instrument %q: attribute %q is not among the keys of its view, which cannot grow (see the error of its registration): its measurements are aggregated without it", i.spec.name, k))
		return tag.Key{}, false
	}
	if len(i.keys) >= MaxAttributeKeys {
		i.warn(k, fmt.Errorf("otel: instrument %q: attribute %q: the view groups by %d attribute keys already (MaxAttributeKeys): its measurements are aggregated without it", i.spec.name, k, len(i.keys)))
		return tag.Key{}, false
	}
	tk, err := tag.NewKey(string(k))
	if err != nil {
		i.warn(k, fmt.Errorf("otel: instrument %q: attribute key %q cannot be a zerostat tag key (1 to 255 printable ASCII bytes): its measurements are aggregated without it: %w", i.spec.name, k, err))
		return tag.Key{}, false
	}
	cv, err := core.GrowView(i.cv, []string{tk.Name()})
	if err != nil {
		i.warn(k, fmt.Errorf("otel: instrument %q: attribute %q: %w", i.spec.name, k, err))
		return tag.Key{}, false
	}
	i.cv = cv
	i.keys[k] = tk
	return tk, true
}

func aggregationOf(s *instSpec) *view.Aggregation {
	switch s.kind {
	case KindHistogram:
		if s.exp != nil {
			return view.ExponentialDistribution(s.exp.maxSize, s.exp.maxScale)
		}
		return view.DistributionUpperInclusive(slices.Clone(s.bounds)...)
	case KindGauge, KindObservableGauge:
		return view.LastValue()
	case KindUpDownCounter, KindObservableUpDownCounter:
		return view.UpDownSum()
	case KindObservableCounter:
		return view.ObservedSum() // cumulative under the lowmemory preference
	}
	return view.Sum()
}

// mutators returns the tag mutators of set's attributes, adding to the
// view's keys those it lacks (addKey). An attribute whose key or value
// cannot be a tag's is left out of the grouping (the measurement still
// counts, in the point without it), reported once per key through
// otel.Handle. Called under mu.
func (i *inst) mutators(set *attribute.Set) []tag.Mutator {
	muts := make([]tag.Mutator, 0, set.Len())
	for it := set.Iter(); it.Next(); {
		kv := it.Attribute()
		val := kv.Value.Emit()
		if val == "" {
			continue // the same as an absent attribute
		}
		if !core.ValidValue(val) {
			i.warn(kv.Key, fmt.Errorf("otel: instrument %q: attribute %q: value %.40q is not a zerostat tag value (up to 255 printable ASCII bytes): aggregated without it: %w", i.spec.name, kv.Key, val, tag.ErrInvalidValue))
			continue
		}
		tk, ok := i.keys[kv.Key]
		if !ok {
			// A key the view lacks: it grows one.
			if tk, ok = i.addKey(kv.Key); !ok {
				continue
			}
		}
		if i.agg != nil {
			// The key keeps the type of its first attribute (attrval).
			i.agg.SetKeyType(tk.Name(), attrType(kv.Value.Type()))
		}
		muts = append(muts, tag.Upsert(tk, val))
	}
	return muts
}

// attrType is t's attrval type: OpenTelemetry's numbering, but for a
// string, attrval's zero.
func attrType(t attribute.Type) attrval.Type {
	switch t {
	case attribute.BOOL, attribute.INT64, attribute.FLOAT64,
		attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE:
		return attrval.Type(t)
	}
	return attrval.String // a string, or a type zerostat keeps as its string form (bytes, maps, ...)
}

func (i *inst) warn(k attribute.Key, err error) {
	if i.warned[k] {
		return
	}
	if i.warned == nil {
		i.warned = map[attribute.Key]bool{}
	}
	i.warned[k] = true
	otel.Handle(err)
}

// newEntry binds a handle to the tags muts produce. Called under mu.
func (i *inst) newEntry(h uint64, muts []tag.Mutator) *entry {
	ctx, err := tag.New(context.Background(), muts...)
	if err != nil {
		// mutators checked each one: not reached.
		otel.Handle(fmt.Errorf("otel: instrument %q: %w", i.spec.name, err))
	}
	m := tag.FromContext(ctx)
	e := &entry{hash: h}
	if i.im != nil {
		e.i = i.im.Bind(m)
	} else {
		e.f = i.fm.Bind(m)
	}
	return e
}

// registered returns the instrument's view, nil before its first
// measurement.
func (i *inst) registered() *view.View { return i.view.Load() }

// close unregisters the view; later measurements are dropped.
func (i *inst) close() {
	i.mu.Lock()
	i.closed = true
	v := i.view.Load()
	i.tab.Store(newTable(1))
	i.overflow = nil
	i.ovf.Store(nil)
	i.mu.Unlock()
	if v != nil {
		unregisterShared(v)
	}
}

// shared counts the instruments, of every provider, whose view each
// registered view is: providers without a prefix that create the same
// instrument share one view (view.Register of an equal view is a no-op),
// which lives until the last of them lets go. Before, one provider's
// Shutdown unregistered it, and the other's instrument recorded into
// nothing while its Enabled still said true.
var shared = struct {
	mu   sync.Mutex
	refs map[string]int
}{refs: map[string]int{}}

// registerShared registers v, or takes one more use of the equal view
// registered under its name.
func registerShared(v *view.View) error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if err := view.Register(v); err != nil {
		return err
	}
	shared.refs[v.Name]++
	return nil
}

// unregisterShared drops one use of v's view, and unregisters it with
// the last.
func unregisterShared(v *view.View) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.refs[v.Name]--; shared.refs[v.Name] > 0 {
		return
	}
	delete(shared.refs, v.Name)
	view.Unregister(v)
}

// checkBounds validates advisory histogram boundaries as the OTel SDK
// does: none given, or an empty list, is its default boundaries;
// boundaries not strictly increasing are an error, and the instrument
// uses the default boundaries (the SDK's AggregationExplicitBucketHistogram
// check, and its fallback). A boundary of ±Inf or NaN is an error too, and
// the defaults are used: a deliberate difference, since the SDK's check
// lets them through (NaN compares false) into buckets no backend reads
// alike (a second le="+Inf" in Prometheus, NaN bounds in OTLP).
func checkBounds(name string, b []float64) ([]float64, error) {
	if len(b) == 0 {
		return DefaultBoundaries, nil
	}
	for k, x := range b {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return DefaultBoundaries, fmt.Errorf("otel: histogram %q: advisory boundary %v is not finite: using the default boundaries", name, x)
		}
		if k > 0 && !(x > b[k-1]) {
			return DefaultBoundaries, fmt.Errorf("otel: histogram %q: advisory boundaries %v are not strictly increasing: using the default boundaries", name, b)
		}
	}
	return slices.Clone(b), nil
}
