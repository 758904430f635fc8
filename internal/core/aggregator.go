package core

import (
	"errors"
	"github.com/zerostat/zerostat/internal/attrval"
	"github.com/zerostat/zerostat/internal/exphist"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"weak"
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
	kind Kind
	// sch is the view's tag keys (see schema): replaced, never modified,
	// when a growable aggregator's keys grow (addKeys).
	sch    atomic.Pointer[schema]
	bounds []float64 // the bounds records are searched with (see CountUpperInclusive)
	slot   uint32    // TagMap cache slot
	// cellK is cellKind(), kept beside slot for the record path (a map's
	// own cell, mapcell.go): set with kind and intSum, before publication.
	cellK uint32
	start time.Time // registration time
	// What holds Sweep for the export readers (retire.go): retired, set
	// by RemoveView (Detach keeps the series it has then, sealed ones
	// included, for the view's last exports); shadowed, while a retiring
	// view of its name is exported before it; readFloor, the seal count
	// (sealsDone) every export reader must have read past before any
	// series of it is freed, set when it stops being shadowed.
	retired, shadowed atomic.Bool
	readFloor         atomic.Uint64

	table atomic.Pointer[seriesTable]
	// byID lists the table's series by ID (nil: a free ID), written under
	// mu with the table: AppendSeries walks it, so a snapshot visits the
	// series in creation order, which is their order in memory (and that
	// of their tag value ids and strings), rather than scattered by hash:
	// at a million series, most of an export's cache misses.
	byID     atomic.Pointer[[]atomic.Pointer[Series]]
	noTags   atomic.Pointer[Series] // the series of records without a tag map
	detached atomic.Bool
	// final is what a detached aggregator's view retiring for push
	// exporters still shows them (see retire.go): its series and overflow
	// at Detach. Nil otherwise, and once the exporters have read it.
	final atomic.Pointer[finalSeries]

	mu sync.Mutex // guards inserts, growth, IDs, sealing, freeing, overflow creation and detaching
	// n counts the series in the table, sealed ones included (written
	// under mu, read without it to turn records away once the limit is
	// reached).
	n atomic.Int64
	// Series IDs are dense, so an exporter can keep per-series state in a
	// slice indexed by Series.ID: nextID is the next unused one, freeIDs
	// those of freed series, gens the generation of each.
	nextID  uint32
	freeIDs []uint32
	gens    []uint16
	tombs   int // freed slots in the table

	// Eviction (evict.go): the sealed series not freed yet, the latest
	// seal's number, the delta readers' marks, and how many were freed.
	sealed  []*Series
	nsealed atomic.Int64
	sealSeq atomic.Uint64
	marks   []weak.Pointer[ReaderMark]
	evicted atomic.Uint64
	// keepErrs is set while a Sum or Distribution aggregator has a delta
	// reader: records then keep their additions' rounding errors and a
	// distribution's sum of squares (see addFloat, distCell.add), which
	// only a delta needs. A reader's first read covers the series' whole
	// life anyway, and every later one subtracts values both kept, so no
	// interval it reads misses what came before it registered.
	keepErrs atomic.Bool
	// firstFree is when the first series was freed (Unix nanoseconds, 0:
	// never): a series created since may hold tags a freed one had (see
	// Series.AfterFree).
	firstFree atomic.Int64
	// changes counts inserts and frees: a reader that caches the set of
	// series (sorted, say) knows it is current while changes is unchanged.
	changes atomic.Uint64

	// Cardinality limit: once the table holds limit series, records of new
	// tag combinations go to the overflow series (not in the table), and
	// overflowed counts them. Totals stay exact; memory stays bounded.
	limit      int64
	overflow   atomic.Pointer[Series]
	overflowed atomic.Uint64

	// Cold, read by exporters only (kept off the record path's lines).
	shown []float64 // distribution bounds, sorted, positive, unique, as registered
	upper bool      // buckets count b[i-1] < v <= b[i] (CountUpperInclusive)
	// intSum: a Sum whose series keep their own cell as an exact integer
	// (IntegerSums).
	intSum bool
	// growable: addKeys may add keys (MakeGrowable). Set under mu before
	// the first series, never cleared: its series' value ids carry their
	// count (Series.ValueIDs).
	growable atomic.Bool
	ex       exemplars // only written by records with attachments (exemplar.go)
	// keyTypes types the values of some keys (SetKeyType), copy on write.
	keyTypes atomic.Pointer[map[string]attrval.Type]
	// expSize and expScale size an exponential aggregator's histograms
	// (SetExponential).
	expSize, expScale int32
	// summary is a summary aggregator's quantiles and set-up (summary.go),
	// nil for another kind.
	summary *summaryAgg
}

// NewAggregator returns an aggregator for a view. keys must be unique,
// bounds sorted, finite, positive and unique (the view package validates
// them). limit caps the live series (0 or less: no cap).
func NewAggregator(kind Kind, keys []string, bounds []float64, limit int) *Aggregator {
	a := &Aggregator{
		kind:   kind,
		bounds: bounds,
		shown:  bounds,
		slot:   nextSlot.Add(1) - 1,
		start:  time.Now(),
		limit:  int64(limit),
	}
	a.cellK = a.fastCellKind()
	if kind == KindExponential {
		a.expSize, a.expScale = exphist.DefaultMaxSize, exphist.DefaultMaxScale
	}
	if kind == KindSummary {
		a.summary = new(summaryAgg)
	}
	byName := slices.Clone(keys)
	slices.Sort(byName)
	a.sch.Store(newSchema(byName))
	a.table.Store(newTable(8))
	return a
}

// schema is an aggregator's tag keys in the two orders it uses: view
// order, the order of Series.ValueIDs and of View.Keys (by name at
// registration, then the keys addKeys added, in the order added: a
// series' values stay valid when keys are added), and internal order, by
// (key hash, name), the order of tag sets, which project merges with.
type schema struct {
	names []string // view order
	keys  []string // internal order
	khs   []uint64 // HashString of each key, internal order
	inv   []int    // inv[p]: view-order position of keys[p]
}

func newSchema(names []string) *schema {
	sc := &schema{names: names, keys: slices.Clone(names)}
	slices.SortFunc(sc.keys, func(x, y string) int {
		hx, hy := HashString(x), HashString(y)
		if less(hx, x, hy, y) {
			return -1
		}
		if less(hy, y, hx, x) {
			return 1
		}
		return 0
	})
	sc.khs = make([]uint64, len(sc.keys))
	sc.inv = make([]int, len(sc.keys))
	for p, k := range sc.keys {
		sc.khs[p] = HashString(k)
		sc.inv[p] = slices.Index(names, k)
	}
	return sc
}

// Keys returns the view's tag keys in view order (the order of
// Series.ValueIDs): sorted by name, then those addKeys added. Load them
// after the series a reader reads (AppendSeries): every series it holds
// has at most that many values. The caller must not modify them. Cost:
// one atomic load.
func (a *Aggregator) Keys() []string { return a.sch.Load().names }

// MakeGrowable lets GrowView add tag keys to the aggregator later. It must
// be called before the first series exists (a growable aggregator's
// series record how many values they have), and the aggregator must have
// at least one key (records into a measure whose views have none skip the
// tags altogether). Set-up cost.
func (a *Aggregator) MakeGrowable() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.growable.Load():
		return nil
	case len(a.sch.Load().names) == 0:
		return errors.New("core: an aggregator without tag keys cannot grow")
	case a.nextID > 0 || a.overflow.Load() != nil:
		return errors.New("core: an aggregator can be made growable only before its first series")
	}
	a.growable.Store(true)
	return nil
}

// addKeys adds to a growable aggregator's keys those of names it does not
// have, after the others in view order, and returns the keys (view order)
// and whether any was added. Every series keeps its values: it has the
// value "" (absent) for the new keys, and its hash (see project) does not
// change. A record resolves its series with the keys of the moment; a
// TagMap or a bound handle that resolved a series before keys were added
// keeps it (its cache), so add a key before recording tag sets that have
// it. Set-up cost: a lock and the new schema. Outside tests, keys are
// added by GrowView, which publishes the view with them too (without it,
// exporters would leave out the series with the new keys: see
// View.AppendSeries).
func (a *Aggregator) addKeys(names []string) ([]string, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.addKeysLocked(names)
}

func (a *Aggregator) addKeysLocked(names []string) ([]string, bool, error) {
	old := a.sch.Load()
	if !a.growable.Load() {
		return old.names, false, errors.New("core: keys cannot be added to an aggregator not made growable (MakeGrowable)")
	}
	next := slices.Clone(old.names)
	for _, k := range names {
		if !slices.Contains(next, k) {
			next = append(next, k)
		}
	}
	if len(next) == len(old.names) {
		return old.names, false, nil
	}
	a.sch.Store(newSchema(next))
	return next, true, nil
}

// Kind returns the aggregation kind.
func (a *Aggregator) Kind() Kind { return a.kind }

// Bounds returns the distribution bounds. The caller must not modify them.
func (a *Aggregator) Bounds() []float64 { return a.shown }

// Start returns when the aggregator was created.
func (a *Aggregator) Start() time.Time { return a.start }

// Len returns the number of live series (the overflow series not counted).
func (a *Aggregator) Len() int { return int(a.n.Load()) }

// Limit returns the cardinality limit (0: none).
func (a *Aggregator) Limit() int {
	if a.limit < 0 {
		return 0
	}
	return int(a.limit)
}

// Changes returns a number that changes whenever a series enters or leaves
// the table. Load it before AppendSeries: if it is the same next time, so
// is the set of series. Cost: one atomic load.
func (a *Aggregator) Changes() uint64 { return a.changes.Load() }

// Overflow returns the series that aggregates the records of tag
// combinations beyond the limit, or nil when there were none.
func (a *Aggregator) Overflow() *Series {
	if s := a.overflow.Load(); s != nil {
		return s
	}
	if f := a.final.Load(); f != nil {
		return f.overflow
	}
	return nil
}

// Overflowed returns how many records went to the overflow series.
func (a *Aggregator) Overflowed() uint64 { return a.overflowed.Load() }

// Detach stops the aggregator: its series are released (to the garbage
// collector, once no TagMap cache points at them) and later records are
// dropped. Used by view.Unregister. Cost: linear in the series (about
// 0.3 µs each, see releaseAllOnceUnreachable), of which the mutex is held
// for the pass that lists them only; it holds no lock other views use.
func (a *Aggregator) Detach() {
	a.mu.Lock()
	if a.detached.Load() {
		a.mu.Unlock()
		return
	}
	gone := a.AppendSeries(nil)
	keepFinal(a, gone, a.overflow.Load()) // for push exporters, while its view retires
	nextID := a.nextID
	a.detached.Store(true)
	a.changes.Add(1)
	a.table.Store(newTable(1))
	a.byID.Store(nil)
	a.noTags.Store(nil)
	a.overflow.Store(nil)
	a.n.Store(0)
	a.sealed, a.marks = nil, nil
	a.nsealed.Store(0)
	a.mu.Unlock()
	// Detached: no cell is attached any more (attachCell checks under
	// a.mu), and no series keeps its handles' and maps' cells.
	for _, s := range gone {
		s.boundCells().release(false)
	}
	// Nothing frees these series any more (Sweep stops), and gone keeps
	// them reachable until their cleanups are in place.
	releaseAllOnceUnreachable(gone, nextID)
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
		if sp := s.stripes.Load(); sp != nil {
			// Striped (recorders on several cores share the series): a
			// live Count's or integer Sum's stripe of this P first,
			// without the tries of the unstriped cell below and add's
			// call (as Bound's RecordInt does).
			if (s.fast == fastCount || s.fast == fastIntSum) && sp.seal == nil && !s.overflow {
				// Pinned from before the load of the stripes until
				// after the add (pinnedAdd).
				p := procPin()
				if sp := s.stripes.Load(); sp != nil && sp.seal == nil {
					if s.fast == fastCount {
						if sp.addCountAt(p) {
							procUnpin()
							return
						}
					} else if d, ok := smallInt(v); ok && sp.addIntSumAt(p, d) {
						procUnpin()
						return
					}
				}
				procUnpin()
			}
			// Sealed, the overflow series (add counts its records), an
			// inexact or contended sum, or another kind: add takes every
			// case (a sealed or failed try counted nothing).
			s.add(v, slot)
		} else if s.fast == fastDist {
			// A histogram (either kind): its cell's lock, without the
			// counters' tries below; an exponential one's without
			// tryAddDist's call and its load of the kind through the
			// series (a is s.agg).
			if a.kind != KindExponential {
				if !s.tryAddDist(v) {
					s.add(v, slot)
				}
				return
			}
			switch addExp(&s.expCell().h, v) {
			case addOK:
			case addContended:
				s.inflate()
			default:
				s.add(v, slot) // sealed
			}
		} else if ok, w := s.tryAdd(v); ok {
			if s.followUp(w) {
				s.finish(w, v)
			}
		} else if ok, w := s.tryAddFloat(v); ok {
			if s.followUp(w) {
				s.finish(w, v)
			}
		} else {
			s.add(v, slot)
		}
		return
	}
	a.recordSlot(slot, m.Tags(), v)
}

// recordIn records v without tags through slot, a cache of a's series
// for no tags that only a uses (RecordOne).
func (a *Aggregator) recordIn(slot *atomic.Pointer[Series], v float64) {
	if s := slot.Load(); s != nil {
		if ok, w := s.tryAdd(v); ok {
			if s.followUp(w) {
				s.finish(w, v)
			}
		} else if ok, w := s.tryAddFloat(v); ok {
			if s.followUp(w) {
				s.finish(w, v)
			}
		} else if s.fast != fastDist || !s.tryAddDist(v) {
			s.add(v, slot)
		}
		return
	}
	a.recordSlot(slot, nil, v)
}

// recordSlot records v for tags (internal order) by resolving the series
// and caching it in slot: the miss path of RecordMap and Bound.Record.
func (a *Aggregator) recordSlot(slot *atomic.Pointer[Series], tags []Tag, v float64) {
	s, recorded := a.obtain(tags, v)
	if s == nil {
		return
	}
	if !s.overflow {
		// The overflow series is not cached: once eviction makes room,
		// these tags get a row of their own.
		slot.Store(s)
	}
	if !recorded {
		s.add(v, slot)
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
		s.add(v, nil)
	}
}

// recordSealed records v for the tags of s, which a record found sealed
// (evicted, see evict.go): into s once revived, or, if s has been freed,
// into its successor (found or created from s's own tag values), which
// slot (unless nil) is pointed at.
//
// A freed s (seen lock-free: freed is set once, under mu) is not revived,
// so a stale cache costs no lock: its slot is cleared, which also lets s
// and its interned values go, and the record resolves its tags as an
// uncached one does (lock-free once they have a series, or once the
// overflow series exists).
func (a *Aggregator) recordSealed(s *Series, slot *atomic.Pointer[Series], v float64) {
	if s.freed() && slot != nil {
		slot.CompareAndSwap(s, nil)
	}
	if s.freed() || !a.revive(s) {
		var buf [16]string
		vals := buf[:0]
		strs := Interned() // after s, which holds its values
		for _, id := range s.ValueIDs() {
			vals = append(vals, strs[id])
		}
		var recorded bool
		if s, recorded = a.obtainValues(s.hash, vals, v); s == nil {
			return // detached
		}
		if slot != nil && !s.overflow {
			slot.Store(s)
		}
		if recorded {
			return
		}
	}
	s.add(v, slot) // sealed again meanwhile: round again
}

// obtain finds or creates the series for tags. When it creates one, it
// records v into it before publishing it (so snapshots never see an empty
// series) and reports recorded=true. It returns nil when detached.
func (a *Aggregator) obtain(tags []Tag, v float64) (s *Series, recorded bool) {
	var buf [16]string
	vals, h := a.project(buf[:0], tags)
	return a.obtainValues(h, vals, v)
}

// obtainValues is obtain for the values of the view's keys (internal
// order) and their hash.
func (a *Aggregator) obtainValues(h uint64, vals []string, v float64) (s *Series, recorded bool) {
	if s := a.table.Load().find(a, h, vals); s != nil {
		return s, false
	}
	if a.full() {
		// Look again: the series that filled the view may be ours, inserted
		// since the first look (n counts a series after its insertion, so
		// a fresh table load sees every series n counts).
		if s := a.table.Load().find(a, h, vals); s != nil {
			return s, false
		}
		return a.overflowSeries(v)
	}
	return a.create(h, vals, v)
}

func (a *Aggregator) full() bool { return a.limit > 0 && a.n.Load() >= a.limit }

func (a *Aggregator) create(h uint64, vals []string, v float64) (*Series, bool) {
	a.mu.Lock()
	if a.detached.Load() {
		a.mu.Unlock()
		return nil, false
	}
	t := a.table.Load()
	if s := t.find(a, h, vals); s != nil {
		a.mu.Unlock()
		return s, false
	}
	if a.full() { // filled up since the lock-free check
		a.mu.Unlock()
		return a.overflowSeries(v)
	}
	s := a.newSeries(h, vals, v)
	if (a.n.Load()+int64(a.tombs)+1)*4 > int64(len(t.slots))*3 { // load factor 0.75
		size := len(t.slots)
		if (a.n.Load()+1)*2 > int64(size) { // else mostly tombstones: same size
			size *= 2
		}
		t = t.rebuild(size, a.byID.Load())
		a.tombs = 0
		a.table.Store(t)
	}
	// In byID before the table: a lock-free find reads the series of a
	// slot from byID.
	a.setID(s.id, s)
	if t.insert(s) {
		a.tombs--
	}
	a.n.Add(1)
	a.changes.Add(1)
	a.mu.Unlock()
	return s, true
}

// setID makes s the series of id in byID (nil: id freed), growing it by
// doubling (a copy, published atomically: a reader of the old one misses
// only what came after, as with the table). Called under mu.
func (a *Aggregator) setID(id uint32, s *Series) {
	var ids []atomic.Pointer[Series]
	if p := a.byID.Load(); p != nil {
		ids = *p
	}
	if int(id) >= len(ids) {
		grown := make([]atomic.Pointer[Series], max(2*len(ids), int(id)+1, 8))
		for i := range ids {
			grown[i].Store(ids[i].Load())
		}
		ids = grown
		a.byID.Store(&grown)
	}
	ids[id].Store(s)
}

// overflowSeries returns the overflow series, creating it (with v recorded
// into it, and counted) on first use.
func (a *Aggregator) overflowSeries(v float64) (*Series, bool) {
	if s := a.overflow.Load(); s != nil {
		return s, false // the caller's add counts the record
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.detached.Load() {
		return nil, false
	}
	if s := a.overflow.Load(); s != nil {
		return s, false
	}
	s := a.newSeries(0, nil, v)
	s.overflow, s.fast = true, fastNone // add counts its records
	a.overflowed.Add(1)
	a.overflow.Store(s)
	return s, true
}

// project returns in dst the value of each of the view's keys found in
// tags, in view order, or "" when absent (OpenCensus does not tell a
// missing key from an empty value either: both leave the tag out of the
// row), and the series hash. It merges the tags with the keys (both in
// internal order) and combines the hash of each key and value present:
// an absent key adds nothing, so the hash of a series does not change
// when addKeys adds a key, which its values lack.
func (a *Aggregator) project(dst []string, tags []Tag) ([]string, uint64) {
	sc := a.sch.Load()
	n := len(sc.keys)
	if cap(dst) < n {
		dst = make([]string, n)
	}
	dst = dst[:n]
	h := uint64(fnvOffset)
	j := 0
	for p, k := range sc.keys {
		kh := sc.khs[p]
		for j < len(tags) && less(tags[j].KeyHash, tags[j].Key, kh, k) {
			j++
		}
		if j < len(tags) && tags[j].KeyHash == kh && tags[j].Key == k && tags[j].Value != "" {
			dst[sc.inv[p]] = tags[j].Value
			h = combine(h, kh, tags[j].ValueHash)
		} else {
			dst[sc.inv[p]] = ""
		}
	}
	return dst, h ^ h>>29
}

// combine mixes one present key's value hash into a series hash; the
// final h ^ h>>29 in project spreads the high bits into the low ones the
// table indexes by.
func combine(h, kh, vh uint64) uint64 { return (h ^ vh ^ bits.RotateLeft64(kh, 17)) * fnvPrime }

// hashValues is project's hash of vals (view order), for tests.
func (a *Aggregator) hashValues(vals []string) uint64 {
	sc := a.sch.Load()
	h := uint64(fnvOffset)
	for p, k := range sc.keys {
		if i := sc.inv[p]; i < len(vals) && vals[i] != "" {
			h = combine(h, HashString(k), HashString(vals[i]))
		}
	}
	return h ^ h>>29
}

// seriesTable is an open-addressing hash table with linear probing.
// Slots are written once (under Aggregator.mu) and read lock-free. A slot
// holds a series' ID plus one (0: empty; tombSlot: freed), not a pointer:
// 4 bytes where a pointer takes 8: at a load of 3/8 to 3/4 the table was
// the largest per-series structure after the series itself (at 100,000
// series, 262,144 slots: now 10.5 bytes a series, not 21; byID adds its
// own 8 to 10.5, for creation-order snapshots). The series is then read
// from the aggregator's byID list, where create puts it before the insert.
type seriesTable struct {
	mask  uint64
	slots []atomic.Uint32
}

// tombSlot marks a freed slot: probes go on past it.
const tombSlot = ^uint32(0)

func newTable(n int) *seriesTable {
	return &seriesTable{mask: uint64(n - 1), slots: make([]atomic.Uint32, n)}
}

// seriesByID returns the series of id in ids (byID, loaded by the
// caller), nil when ids predates it (the caller then misses, as a probe
// of an old table does, and the locked path looks again).
func seriesByID(ids *[]atomic.Pointer[Series], id uint32) *Series {
	if ids == nil || int(id) >= len(*ids) {
		return nil
	}
	return (*ids)[id].Load()
}

// find returns the series of vals (hash h), nil if none. Lock-free: it
// loads byID once, before the slots, so a slot may name an ID that list
// predates (seriesByID then gives nil: a miss, which the caller's locked
// path looks again at), and a series whose ID was freed and reused since
// is told apart by its hash and values.
func (t *seriesTable) find(a *Aggregator, h uint64, vals []string) *Series {
	ids := a.byID.Load()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		x := t.slots[i].Load()
		if x == 0 {
			return nil
		}
		if x != tombSlot {
			if s := seriesByID(ids, x-1); s != nil && s.hash == h && a.sameValues(s, vals) {
				return s
			}
		}
	}
}

// insert puts s in the first free or freed slot of its probe sequence and
// reports whether that slot was a tombstone. Called under Aggregator.mu,
// for a series not in the table.
func (t *seriesTable) insert(s *Series) (reused bool) {
	for i := s.hash & t.mask; ; i = (i + 1) & t.mask {
		if x := t.slots[i].Load(); x == 0 || x == tombSlot {
			t.slots[i].Store(s.id + 1)
			return x == tombSlot
		}
	}
}

// remove makes the slot of s a tombstone. Called under Aggregator.mu.
func (t *seriesTable) remove(s *Series) {
	for i := s.hash & t.mask; ; i = (i + 1) & t.mask {
		if t.slots[i].Load() == s.id+1 {
			t.slots[i].Store(tombSlot)
			return
		}
	}
}

// rebuild returns a table of size slots holding t's series (ids: the
// aggregator's byID, current under its mutex), without its tombstones.
// Readers still probing t find what they find there; a miss falls through
// to the locked path, which probes the new table.
func (t *seriesTable) rebuild(size int, ids *[]atomic.Pointer[Series]) *seriesTable {
	n := newTable(size)
	for i := range t.slots {
		if x := t.slots[i].Load(); x != 0 && x != tombSlot {
			n.insert(seriesByID(ids, x-1))
		}
	}
	return n
}

// sameValues reports whether s is the series of vals (view order). Either
// may be the shorter, when keys were added between their resolutions: the
// values past its end are "" (absent). The interner table is loaded after
// s: it holds s's values, interned before s was published.
func (a *Aggregator) sameValues(s *Series, vals []string) bool {
	strs := Interned()
	vids := s.ValueIDs()
	for i := range max(len(vids), len(vals)) {
		var x, y string
		if i < len(vids) {
			x = strs[vids[i]]
		}
		if i < len(vals) {
			y = vals[i]
		}
		if x != y {
			return false
		}
	}
	return true
}

// AppendSeries appends the series of the table (sealed ones included: a
// sealed series is read until it is freed), in ID order (creation order,
// reused IDs aside), to dst.
//
// A series freed during the pass is left out: its successor (same tags)
// may have taken an ID (the same one, possibly) the pass reaches later, and a snapshot must not
// carry both. Leaving it out loses nothing: it was freed because every
// registered delta reader had read its final values.
func (a *Aggregator) AppendSeries(dst []*Series) []*Series {
	if f := a.final.Load(); f != nil {
		return append(dst, f.series...) // detached, its view retiring
	}
	base := len(dst)
	if p := a.byID.Load(); p != nil {
		ids := *p
		for i := range ids {
			if s := ids[i].Load(); s != nil {
				dst = append(dst, s)
			}
		}
	}
	if a.nsealed.Load() == 0 && a.evicted.Load() == 0 {
		return dst // never evicted: nothing was freed
	}
	out := dst[:base]
	for _, s := range dst[base:] {
		if !s.freed() {
			out = append(out, s)
		}
	}
	clear(dst[len(out):])
	return out
}
