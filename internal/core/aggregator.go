package core

import (
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kind is an aggregation kind.
type Kind uint8

// Aggregation kinds, with OpenCensus's numbering (view.AggType).
const (
	KindCount Kind = 1 + iota
	KindSum
	KindDistribution
	KindLastValue
)

// Distribution cell layout, in 64-bit words. The sums are shifted by the
// series' first value (Series.shift) so that the sum of squared deviations
// computed from them does not lose precision to cancellation when the mean
// is large next to the spread ("shifted data" variance, see
// https://en.wikipedia.org/wiki/Algorithms_for_calculating_variance).
const (
	wS1      = 0 // Σ (x - shift), float64 bits
	wS2      = 1 // Σ (x - shift)², float64 bits
	wMin     = 2 // float64 bits
	wMax     = 3 // float64 bits
	wBuckets = 4 // len(bounds)+1 bucket counts follow
)

// wordsPerLine is a 64-byte cache line in words; stripes are aligned to it.
const wordsPerLine = 8

var nextSlot atomic.Uint32

// Aggregator holds the live series of one registered view.
//
// Concurrency protocol: recorders find their series with lock-free reads of
// table (or of a TagMap's cache) and update it with atomics. mu is taken
// only to insert a series that does not exist yet, or to detach the
// aggregator; no record that finds its series ever takes it. The table only
// grows while attached: a grown table is published with an atomic store, and
// a reader still on the old table that misses falls through to the locked
// path, which re-probes the current one.
type Aggregator struct {
	kind   Kind
	keys   []string  // the view's tag keys, in internal order, unique
	khs    []uint64  // HashString of each key
	order  []int     // order[i]: position in keys of the i-th key by name
	bounds []float64 // distribution bounds, sorted, positive, unique
	width  int       // words per cell
	slot   uint32    // TagMap cache slot
	start  time.Time // registration time

	table    atomic.Pointer[seriesTable]
	noTags   atomic.Pointer[Series] // the series of records without a tag map
	detached atomic.Bool

	mu sync.Mutex // guards inserts, growth, n, nextID and detaching
	n  int        // live series
	// nextID numbers series in creation order, so an exporter can keep
	// per-series state in a slice indexed by Series.ID.
	nextID uint32
}

// NewAggregator returns an aggregator for a view. keys must be unique,
// bounds sorted, finite, positive and unique (the view package validates
// them).
func NewAggregator(kind Kind, keys []string, bounds []float64) *Aggregator {
	a := &Aggregator{
		kind:   kind,
		bounds: bounds,
		width:  1,
		slot:   nextSlot.Add(1) - 1,
		start:  time.Now(),
	}
	byName := slices.Clone(keys)
	slices.Sort(byName)
	a.keys = slices.Clone(keys)
	slices.SortFunc(a.keys, func(x, y string) int {
		hx, hy := HashString(x), HashString(y)
		if less(hx, x, hy, y) {
			return -1
		}
		if less(hy, y, hx, x) {
			return 1
		}
		return 0
	})
	a.khs = make([]uint64, len(a.keys))
	for i, k := range a.keys {
		a.khs[i] = HashString(k)
	}
	a.order = make([]int, len(byName))
	for i, k := range byName {
		a.order[i] = slices.Index(a.keys, k)
	}
	if kind == KindDistribution {
		a.width = wBuckets + len(bounds) + 1
	}
	a.table.Store(newTable(8))
	return a
}

// Kind returns the aggregation kind.
func (a *Aggregator) Kind() Kind { return a.kind }

// NameOrder returns, for the i-th tag key in name order, its position in
// Series.Values. The caller must not modify it.
func (a *Aggregator) NameOrder() []int { return a.order }

// Bounds returns the distribution bounds. The caller must not modify them.
func (a *Aggregator) Bounds() []float64 { return a.bounds }

// Start returns when the aggregator was created.
func (a *Aggregator) Start() time.Time { return a.start }

// Len returns the number of live series.
func (a *Aggregator) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// Detach stops the aggregator: its series are released (to the garbage
// collector, once no TagMap cache points at them) and later records are
// dropped. Used by view.Unregister.
func (a *Aggregator) Detach() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.detached.Store(true)
	a.table.Store(newTable(1))
	a.noTags.Store(nil)
	a.n = 0
}

// RecordMap records v for the tags of m (nil: no tags). When m has
// resolved this view before (for nil: when any record without tags has),
// the cost is one atomic load of the cached series and its update;
// otherwise it is RecordTags plus one store.
func (a *Aggregator) RecordMap(m *TagMap, v float64) {
	slot := &a.noTags
	if m != nil {
		slot = &m.cache[a.slot%cacheSlots]
	}
	if s := slot.Load(); s != nil && s.agg == a {
		s.add(v)
		return
	}
	s, recorded := a.obtain(m.Tags(), v)
	if s == nil {
		return
	}
	slot.Store(s)
	if !recorded {
		s.add(v)
	}
}

// RecordTags records v for tags (internal order, unique keys), which need
// not be a TagMap: RecordWithTags passes a stack buffer. Cost: projecting the
// tags on the view's keys while combining their value hashes, and a
// lock-free probe; creating a series (first sight of a tag combination) takes mu and
// allocates.
func (a *Aggregator) RecordTags(tags []Tag, v float64) {
	s, recorded := a.obtain(tags, v)
	if s != nil && !recorded {
		s.add(v)
	}
}

// obtain finds or creates the series for tags. When it creates one, it
// records v into it before publishing it (so snapshots never see an empty
// series) and reports recorded=true. It returns nil when detached.
func (a *Aggregator) obtain(tags []Tag, v float64) (s *Series, recorded bool) {
	var buf [16]string
	vals, h := a.project(buf[:0], tags)
	if s := a.table.Load().find(h, vals); s != nil {
		return s, false
	}
	return a.create(h, vals, v)
}

func (a *Aggregator) create(h uint64, vals []string, v float64) (*Series, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.detached.Load() {
		return nil, false
	}
	t := a.table.Load()
	if s := t.find(h, vals); s != nil {
		return s, false
	}
	s := a.newSeries(h, vals, v)
	if (a.n+1)*2 > len(t.slots) {
		t = t.grow()
		a.table.Store(t)
	}
	t.insert(s)
	a.n++
	return s, true
}

// project appends the value of each of the view's keys found in tags, or ""
// when absent (OpenCensus does not tell a missing key from an empty value
// either: both leave the tag out of the row), and returns the series hash.
// Both lists are in internal order, so this is one merge.
func (a *Aggregator) project(dst []string, tags []Tag) ([]string, uint64) {
	h := uint64(fnvOffset)
	j := 0
	for i, k := range a.keys {
		kh := a.khs[i]
		for j < len(tags) && less(tags[j].KeyHash, tags[j].Key, kh, k) {
			j++
		}
		if j < len(tags) && tags[j].KeyHash == kh && tags[j].Key == k {
			dst = append(dst, tags[j].Value)
			h = combine(h, tags[j].ValueHash)
		} else {
			dst = append(dst, "")
			h = combine(h, emptyHash)
		}
	}
	return dst, h ^ h>>29
}

// combine mixes one value hash into a series hash; the final h ^ h>>29 in
// project spreads the high bits into the low ones the table indexes by.
func combine(h, vh uint64) uint64 { return (h ^ vh) * fnvPrime }

// hashValues is project's hash of vals, for tests.
func hashValues(vals []string) uint64 {
	h := uint64(fnvOffset)
	for _, v := range vals {
		h = combine(h, HashString(v))
	}
	return h ^ h>>29
}

// seriesTable is an open-addressing hash table with linear probing.
// Slots are written once (under Aggregator.mu) and read lock-free.
type seriesTable struct {
	mask  uint64
	slots []atomic.Pointer[Series]
}

func newTable(n int) *seriesTable {
	return &seriesTable{mask: uint64(n - 1), slots: make([]atomic.Pointer[Series], n)}
}

func (t *seriesTable) find(h uint64, vals []string) *Series {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := t.slots[i].Load()
		if s == nil {
			return nil
		}
		if s.hash == h && equalValues(s.vals, vals) {
			return s
		}
	}
}

func (t *seriesTable) insert(s *Series) {
	for i := s.hash & t.mask; ; i = (i + 1) & t.mask {
		if t.slots[i].Load() == nil {
			t.slots[i].Store(s)
			return
		}
	}
}

func (t *seriesTable) grow() *seriesTable {
	n := newTable(2 * len(t.slots))
	for i := range t.slots {
		if s := t.slots[i].Load(); s != nil {
			n.insert(s)
		}
	}
	return n
}

func equalValues(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// AppendSeries appends the live series, in table order, to dst.
func (a *Aggregator) AppendSeries(dst []*Series) []*Series {
	t := a.table.Load()
	for i := range t.slots {
		if s := t.slots[i].Load(); s != nil {
			dst = append(dst, s)
		}
	}
	return dst
}

// Series is the aggregate of one tag-value combination of one view.
//
// Its cell is updated with atomics only. A series starts with a single cell
// (8 bytes for Count, Sum and LastValue); the first time an update loses a
// compare-and-swap race it grows one cell per P, each on its own cache
// lines, and recorders then add to the cell of the P they run on
// (the shape of Java's LongAdder: cold series stay small, hot ones stop
// sharing a cache line). Readers sum the cells.
type Series struct {
	agg     *Aggregator
	vals    []string // projected values, "" when absent
	vids    []uint32 // interned ids of vals, in the view's key-name order
	id      uint32   // creation index within the aggregator
	hash    uint64
	start   int64   // creation time, Unix nanoseconds
	shift   float64 // distribution: the first value recorded
	cell    []atomic.Uint64
	stripes atomic.Pointer[stripes]
	one     [1]atomic.Uint64 // cell storage for one-word kinds
}

func (a *Aggregator) newSeries(h uint64, vals []string, v float64) *Series {
	s := &Series{agg: a, hash: h, start: time.Now().UnixNano(), id: a.nextID}
	a.nextID++
	s.vals = make([]string, len(vals))
	for i, x := range vals {
		// Own the bytes: a value may be a slice of a large request buffer.
		s.vals[i] = strings.Clone(x)
	}
	s.vids = make([]uint32, len(vals))
	for i, p := range a.order {
		s.vids[i] = Intern(s.vals[p])
	}
	if a.width == 1 {
		s.cell = s.one[:]
	} else {
		s.cell = make([]atomic.Uint64, a.width)
	}
	if a.kind == KindDistribution {
		s.shift = v
		initDistCell(s.cell)
	}
	s.addTo(s.cell, v)
	return s
}

func initDistCell(c []atomic.Uint64) {
	c[wMin].Store(math.Float64bits(math.Inf(1)))
	c[wMax].Store(math.Float64bits(math.Inf(-1)))
}

// Values returns the projected tag values, in the view's key order, "" for
// an absent key. The caller must not modify them.
func (s *Series) Values() []string { return s.vals }

// Start returns when the series was created.
func (s *Series) Start() time.Time { return time.Unix(0, s.start) }

// ID returns the series' creation index within its aggregator (0, 1, ...).
func (s *Series) ID() uint32 { return s.id }

// ValueIDs returns the interned ids of the tag values in key-name order (0
// for an absent key). The caller must not modify them.
func (s *Series) ValueIDs() []uint32 { return s.vids }

// NextID returns the ID the next series will get: an upper bound of the
// IDs of the live series.
func (a *Aggregator) NextID() uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.nextID
}

// add records v. Cost: for an uncontended series, one compare-and-swap
// (Count, Sum), one store (LastValue), or two CAS, one add and a bound
// search (Distribution).
func (s *Series) add(v float64) {
	if st := s.stripes.Load(); st != nil {
		s.addTo(st.cell(procID()), v)
		return
	}
	if s.addTo(s.cell, v) {
		s.inflate()
	}
}

// addTo records v into cell c and reports whether an update found
// contention (a failed CAS).
func (s *Series) addTo(c []atomic.Uint64, v float64) (contended bool) {
	a := s.agg
	switch a.kind {
	case KindCount:
		return addInt(&c[0], 1)
	case KindSum:
		return addFloat(&c[0], v)
	case KindLastValue:
		c[0].Store(math.Float64bits(v))
		return false
	}
	// Distribution. Extremes and sums first, bucket count last: a reader
	// reads bucket counts first, so every sample it counts has already
	// reached the extremes and sums it reads next.
	if v < math.Float64frombits(c[wMin].Load()) {
		minFloat(&c[wMin], v)
	}
	if v > math.Float64frombits(c[wMax].Load()) {
		maxFloat(&c[wMax], v)
	}
	d := v - s.shift
	contended = addFloat(&c[wS1], d)
	addFloat(&c[wS2], d*d)
	c[wBuckets+bucketIndex(a.bounds, v)].Add(1)
	return contended
}

// bucketIndex returns i such that bounds[i-1] <= v < bounds[i], the
// OpenCensus bucketing; NaN goes to the last bucket, as in OpenCensus
// (and in Prometheus's +Inf bucket).
func bucketIndex(bounds []float64, v float64) int {
	if len(bounds) <= 16 {
		i := 0
		for i < len(bounds) && !(v < bounds[i]) {
			i++
		}
		return i
	}
	if v != v {
		return len(bounds)
	}
	lo, hi := 0, len(bounds)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if v < bounds[m] {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

func addInt(p *atomic.Uint64, d uint64) (contended bool) {
	old := p.Load()
	if p.CompareAndSwap(old, old+d) {
		return false
	}
	p.Add(d)
	return true
}

func addFloat(p *atomic.Uint64, d float64) (contended bool) {
	for {
		old := p.Load()
		if p.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return contended
		}
		contended = true
	}
}

func minFloat(p *atomic.Uint64, v float64) {
	for {
		old := p.Load()
		if !(v < math.Float64frombits(old)) || p.CompareAndSwap(old, math.Float64bits(v)) {
			return
		}
	}
}

func maxFloat(p *atomic.Uint64, v float64) {
	for {
		old := p.Load()
		if !(v > math.Float64frombits(old)) || p.CompareAndSwap(old, math.Float64bits(v)) {
			return
		}
	}
}

// stripes are the per-P cells of a contended series.
type stripes struct {
	mask   int
	stride int // words per cell, a whole number of cache lines
	words  []atomic.Uint64
}

func (st *stripes) cell(p int) []atomic.Uint64 {
	i := (p & st.mask) * st.stride
	return st.words[i : i+st.stride]
}

func (s *Series) inflate() {
	if s.stripes.Load() != nil {
		return
	}
	a := s.agg
	n := stripeCount()
	stride := (a.width + wordsPerLine - 1) / wordsPerLine * wordsPerLine
	words := make([]atomic.Uint64, n*stride+wordsPerLine)
	off := alignOffset(words)
	st := &stripes{mask: n - 1, stride: stride, words: words[off : off+n*stride]}
	if a.kind == KindDistribution {
		for p := 0; p < n; p++ {
			initDistCell(st.cell(p))
		}
	}
	s.stripes.CompareAndSwap(nil, st)
}

// cells calls fn for the base cell and each stripe.
func (s *Series) cells(fn func(c []atomic.Uint64)) {
	fn(s.cell)
	if st := s.stripes.Load(); st != nil {
		for p := 0; p <= st.mask; p++ {
			fn(st.cell(p))
		}
	}
}

// ReadCount returns a Count series' value.
func (s *Series) ReadCount() int64 {
	var n uint64
	s.cells(func(c []atomic.Uint64) { n += c[0].Load() })
	return int64(n)
}

// ReadSum returns a Sum series' value.
func (s *Series) ReadSum() float64 {
	var f float64
	s.cells(func(c []atomic.Uint64) { f += math.Float64frombits(c[0].Load()) })
	return f
}

// ReadLast returns a LastValue series' value.
func (s *Series) ReadLast() float64 {
	return math.Float64frombits(s.cell[0].Load())
}

// DistStats are a distribution's summary statistics, with OpenCensus's
// definitions.
type DistStats struct {
	Count                    int64
	Min, Max, Mean, SumSqDev float64
}

// DistRaw is a distribution's state as stored: the sums are of the values
// minus Shift (the series' first value), so that they subtract exactly
// between two reads (delta temporality) and the sum of squared deviations
// keeps its precision.
type DistRaw struct {
	Count    int64
	S1, S2   float64 // Σ(x-Shift), Σ(x-Shift)²
	Min, Max float64
	Shift    float64
}

// Stats derives the OpenCensus statistics of n samples whose shifted sums
// are s1 and s2.
func Stats(n int64, s1, s2, shift float64) (mean, sumSqDev float64) {
	if n == 0 {
		return 0, 0
	}
	f := float64(n)
	mean = shift + s1/f
	sumSqDev = s2 - s1*s1/f
	if sumSqDev < 0 { // rounding; the true value is never negative
		sumSqDev = 0
	}
	return mean, sumSqDev
}

// ReadDistRaw fills buckets (len(bounds)+1) with the bucket counts and
// returns the raw state. A read concurrent with records may count a sample
// in its sums but not yet in its bucket; every counted sample is in the
// sums, extremes included. It does not allocate.
func (s *Series) ReadDistRaw(buckets []int64) DistRaw {
	clear(buckets)
	s.cells(func(c []atomic.Uint64) {
		for i := range buckets {
			buckets[i] += int64(c[wBuckets+i].Load())
		}
	})
	r := DistRaw{Min: math.Inf(1), Max: math.Inf(-1), Shift: s.shift}
	for _, b := range buckets {
		r.Count += b
	}
	s.cells(func(c []atomic.Uint64) {
		r.S1 += math.Float64frombits(c[wS1].Load())
		r.S2 += math.Float64frombits(c[wS2].Load())
		r.Min = math.Min(r.Min, math.Float64frombits(c[wMin].Load()))
		r.Max = math.Max(r.Max, math.Float64frombits(c[wMax].Load()))
	})
	return r
}

// ReadDist fills buckets and returns the statistics; see ReadDistRaw.
func (s *Series) ReadDist(buckets []int64) DistStats {
	r := s.ReadDistRaw(buckets)
	if r.Count == 0 {
		return DistStats{}
	}
	st := DistStats{Count: r.Count, Min: r.Min, Max: r.Max}
	st.Mean, st.SumSqDev = Stats(r.Count, r.S1, r.S2, r.Shift)
	return st
}
