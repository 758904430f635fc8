package core

import (
	"cmp"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// View is a registered view as exporters read it: names resolved to
// stable string ids (see Intern) at registration, so an export maps them
// to payload ids with an array lookup instead of hashing strings.
type View struct {
	Name, Description, Unit string
	// Keys are the tag keys in the order of Series.ValueIDs: by name, then
	// for a growable aggregator the keys added since it was registered
	// (GrowView, which publishes a View with more keys in this one's
	// place). A View is never modified once published.
	Keys []string
	Agg  *Aggregator
	// Measure is the view's measure; Int reports an integer measure
	// (stats.Int64), whose sums and last values export as integers.
	Measure *Measure
	Int     bool
	// UpDown marks a sum that may go down (view.UpDownSum): a gauge or a
	// non-monotonic sum to exporters, never a counter.
	UpDown bool
	// Observed marks a sum a callback reports (view.ObservedSum: an
	// asynchronous counter), which the lowmemory preference reads
	// cumulatively (delta.Kinds.Reads).
	Observed bool

	// Help is the metric's description as the one mapping gives it
	// (internal/promname, which the view package asks before AddView):
	// the view's description, or for a Count view that took its measure's
	// "Count of <measure> recordings: <description>". The msgpack exporter
	// writes it as the view's description, so that a payload's reader
	// gets what the other exporters write. "" means Description.
	Help string

	NameID, DescriptionID, UnitID, HelpID uint32
	KeyIDs                                []uint32 // ids of Keys
}

var registry atomic.Pointer[[]*View]

// Views returns the registered views sorted by name. The caller must not
// modify the slice. Cost: one atomic load.
func Views() []*View {
	p := registry.Load()
	if p == nil {
		return nil
	}
	return *p
}

// AddView publishes v (set-up cost; copy on write). The view package calls
// it once v is registered. v's strings are interned for as long as v is
// reachable (see RemoveView), not for the life of the process: per-tenant
// or per-job views come and go without growing the interner.
func AddView(v *View) {
	internView(v)
	regMu.Lock()
	defer regMu.Unlock()
	next := append(slices.Clone(Views()), v)
	slices.SortFunc(next, func(a, b *View) int { return strings.Compare(a.Name, b.Name) })
	// A retiring view of v's name stays: each export reader exports it
	// before v (see retire.go). The export set first: v is marked held
	// back there before any reader can find it (a nil set: none is).
	publishExportViews(next)
	registry.Store(&next)
}

// internView interns v's names and keys (counted: see RemoveView).
func internView(v *View) {
	v.NameID, v.DescriptionID, v.UnitID = internValue(v.Name), internValue(v.Description), internValue(v.Unit)
	if v.Help == "" {
		v.Help = v.Description
	}
	v.HelpID = internValue(v.Help)
	// The interned forms, valid UTF-8 (see intern), for readers that
	// take the strings rather than their ids.
	t := Interned()
	v.Name, v.Description, v.Unit, v.Help = t[v.NameID], t[v.DescriptionID], t[v.UnitID], t[v.HelpID]
	v.KeyIDs = make([]uint32, len(v.Keys))
	for i, k := range v.Keys {
		v.KeyIDs[i] = internValue(k)
	}
}

// FindView returns the published view named name, nil when none is.
// Cost: a binary search of Views.
func FindView(name string) *View {
	vs := Views()
	if i, ok := slices.BinarySearchFunc(vs, name, func(v *View, n string) int { return strings.Compare(v.Name, n) }); ok {
		return vs[i]
	}
	return nil
}

// RemoveView unpublishes the view of v's aggregator (v, or the view
// GrowView published in its place); push exporters still read it until
// each has exported it (ExportViews). Its interned strings are released
// once it is unreachable (an exporter that still holds it, in a snapshot
// or a cache keyed by it, may still read them). Set-up cost.
func RemoveView(v *View) {
	regMu.Lock()
	defer regMu.Unlock()
	before := Views()
	i := slices.IndexFunc(before, func(x *View) bool { return x.Agg == v.Agg })
	if i < 0 {
		return // not published (or removed already): nothing to release
	}
	cur := before[i]
	next := slices.Delete(slices.Clone(before), i, i+1)
	retire(cur, next) // for the push exporters (see retire.go); publishes ExportViews, then next
	releaseViewOnceUnreachable(cur)
}

func releaseViewOnceUnreachable(v *View) { runtime.AddCleanup(v, releaseValues, viewIDs(v)) }

// viewIDs returns the ids internView interned for v.
func viewIDs(v *View) []uint32 {
	return append([]uint32{v.NameID, v.DescriptionID, v.UnitID, v.HelpID}, v.KeyIDs...)
}

// GrowView adds to the keys of the view of v's aggregator (which
// Aggregator.MakeGrowable made growable) those of names it lacks, and
// publishes a copy of that view with them in its place; it returns the
// view now published (v's successor, or the current one when nothing was
// added). The copy is published before any series can have a value for
// a new key, and a reader that holds the previous view does not see such
// series (View.AppendSeries): what it reads is consistent with its keys.
// Delta state kept by aggregator carries over; state kept by view
// (an exporter's naming of a view, say) is rebuilt for the successor, as
// for a view registered anew. Set-up cost: locks, the copy, and interning
// the copy's strings.
func GrowView(v *View, names []string) (*View, error) {
	a := v.Agg
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := publishedView(a)
	if cur == nil {
		return nil, errors.New("core: GrowView of a view not published")
	}
	keys, grew, err := a.addKeysLocked(names)
	if err != nil || !grew {
		return cur, err
	}
	next := *cur
	next.Keys = keys
	internView(&next)
	// The successor is published while a.mu is held: a series with a
	// value for a new key (a.sch, stored by addKeysLocked) can be created
	// only after, by create, which takes a.mu.
	if !replaceView(a, &next) {
		// Unregistered meanwhile (RemoveView takes no a.mu): nothing to
		// publish; the copy's strings go back.
		releaseValues(viewIDs(&next))
		return nil, errors.New("core: GrowView of a view unregistered meanwhile")
	}
	releaseViewOnceUnreachable(cur)
	return &next, nil
}

// publishedView returns the published view of a, nil when none is.
func publishedView(a *Aggregator) *View {
	regMu.Lock()
	defer regMu.Unlock()
	views := Views()
	if i := slices.IndexFunc(views, func(x *View) bool { return x.Agg == a }); i >= 0 {
		return views[i]
	}
	return nil
}

// replaceView publishes next in place of the view of a and reports
// whether there was one.
func replaceView(a *Aggregator, next *View) bool {
	regMu.Lock()
	defer regMu.Unlock()
	views := Views()
	i := slices.IndexFunc(views, func(x *View) bool { return x.Agg == a })
	if i < 0 {
		return false
	}
	swapped := slices.Clone(views)
	swapped[i] = next
	registry.Store(&swapped)
	publishExportViews(swapped)
	return true
}

// AppendSeries appends the series of the view's aggregator to dst, as
// Aggregator.AppendSeries does, leaving out those that have values for
// keys added after this view (by GrowView: they are its successor's to
// export, which a reader sees the next time it loads Views), and reports
// whether it left none out. Every series it appends has at most
// len(v.Keys) values. A delta reader that was left series must not
// acknowledge the view's seals (delta.View.LeftOut): one of them may be
// sealed, and it has not read it.
func (v *View) AppendSeries(dst []*Series) ([]*Series, bool) {
	base := len(dst)
	dst = v.Agg.AppendSeries(dst)
	if !v.Agg.growable.Load() || len(v.Agg.Keys()) == len(v.Keys) {
		return dst, true
	}
	out := dst[:base]
	for _, s := range dst[base:] {
		if len(s.ValueIDs()) <= len(v.Keys) {
			out = append(out, s)
		}
	}
	clear(dst[len(out):])
	return out, len(out) == len(dst)
}

// The interner gives every string an exporter writes (view names, units,
// tag keys and the tag values of series) a stable id. Tag values are
// interned when their series is created, on the slow path, never per
// record. Id 0 is "", the value of an absent key.
//
// Strings interned with Intern (an exporter's resource attributes) are
// kept for good. A view's names and a series' tag values are counted
// (internValue): when a view is unregistered, or a series leaves its view
// (freed after eviction, or its view unregistered), and is no longer
// reachable — no TagMap cache, no
// reader, no recorder holds it — a runtime cleanup releases its values,
// and a value no series uses any more gives its id back for reuse. A
// reader that holds a series may therefore trust the strings of its ids; it
// must load the table (Interned) after the series (a reused id is written
// before the series that uses it is published).
var (
	internMu   sync.Mutex
	internIDs  = map[string]uint32{"": 0}
	internRefs = []int32{pinned} // by id: series using it, or pinned
	internFree []uint32          // released ids
	internTab  atomic.Pointer[[]string]
)

const pinned = -1

func init() {
	t := []string{""}
	internTab.Store(&t)
}

// Intern returns the stable id of s, which keeps it for the life of the
// process. Set-up cost: a mutex and a map lookup; an unseen string is
// copied and appended.
func Intern(s string) uint32 {
	internMu.Lock()
	defer internMu.Unlock()
	id := intern(s)
	internRefs[id] = pinned
	return id
}

// internValue returns the id of a series' tag value and counts the use
// (see releaseValues). Called when a series is created.
func internValue(s string) uint32 {
	internMu.Lock()
	defer internMu.Unlock()
	id := intern(s)
	if internRefs[id] != pinned {
		internRefs[id]++
	}
	return id
}

// intern returns the id of s, assigning one (a released one first) if s is
// unseen. Called under internMu.
//
// Every string a payload's string table holds is interned here, and the
// wire format (docs/wire-format.md) takes valid UTF-8 only: invalid bytes
// are replaced with U+FFFD, one per run of them (a description or resource value read from a
// file, say; tag keys and values are printable ASCII already). Cost when
// valid: one utf8.ValidString scan, no allocation.
func intern(s string) uint32 {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if id, ok := internIDs[s]; ok {
		return id
	}
	s = strings.Clone(s) // a value may be a slice of a large request buffer
	if n := len(internFree); n > 0 {
		// No reachable series uses id, so nobody reads its slot; the
		// series that will is published after this write.
		id := internFree[n-1]
		internFree = internFree[:n-1]
		(*internTab.Load())[id] = s
		internIDs[s] = id
		return id
	}
	t := *internTab.Load()
	id := uint32(len(t))
	t = append(t, s)
	internTab.Store(&t)
	internRefs = append(internRefs, 0)
	internIDs[s] = id
	return id
}

// releaseValues drops one use of each id (a series' tag values); an id
// left unused is forgotten and its slot cleared for reuse. It runs as the
// runtime cleanup of a series that left its view: once nothing can reach
// the series, nothing reads these ids for it.
func releaseValues(ids []uint32) {
	internMu.Lock()
	defer internMu.Unlock()
	t := *internTab.Load()
	for _, id := range ids {
		if id == 0 || internRefs[id] <= 0 { // "", or pinned
			continue
		}
		if internRefs[id]--; internRefs[id] == 0 {
			delete(internIDs, t[id])
			t[id] = ""
			internFree = append(internFree, id)
		}
	}
}

// releaseOnceUnreachable arranges for s's tag values to be released when
// s is no longer reachable. Called when s leaves its view.
func releaseOnceUnreachable(s *Series) {
	if ids := s.ValueIDs(); len(ids) > 0 {
		runtime.AddCleanup(s, releaseValues, ids)
		if releaseHook != nil {
			releaseHook(s)
		}
	}
}

// releaseAllOnceUnreachable is releaseOnceUnreachable for each of ss (the
// series of one aggregator), which it sorts by ID. Called without the
// aggregator's mutex: a view with a million series takes a fraction of a
// second here, and no other view waits for it.
//
// The order is what keeps the cost linear. The runtime keeps each span's
// cleanups in a list sorted by address, and AddCleanup walks it to find the
// insertion point (mspan.specialFindSplicePoint). In table (hash) order
// every call lands on another span and walks a list of records scattered
// in memory: a cache miss per step, 5 µs per series at 1M series, 0.3 µs at
// 1k. IDs are handed out in creation order, which is allocation order, so
// in ID order successive calls append to the same span's list, whose
// records were just allocated next to each other: about 0.3 µs per series
// at any size. nextID bounds the IDs (Aggregator.nextID).
func releaseAllOnceUnreachable(ss []*Series, nextID uint32) {
	if len(ss) > int(nextID)/4 {
		// Dense (a detached view): place each series at its ID, O(n).
		byID := make([]*Series, nextID)
		for _, s := range ss {
			byID[s.id] = s
		}
		ss = byID
	} else {
		slices.SortFunc(ss, func(a, b *Series) int { return cmp.Compare(a.id, b.id) })
	}
	for _, s := range ss {
		if s != nil {
			releaseOnceUnreachable(s)
		}
	}
}

// releaseHook, when set (tests), is called after the release of each
// series is arranged.
var releaseHook func(s *Series)

// SetReleaseHook makes f (nil: none) be called after the release of each
// series that leaves its view is arranged, and returns a function that
// restores the previous hook. For tests only; not safe for concurrent use
// with Detach or Sweep.
func SetReleaseHook(f func(s *Series)) (restore func()) {
	old := releaseHook
	releaseHook = f
	return func() { releaseHook = old }
}

// InternedLive returns how many strings are interned, the released ones
// not counted (for tests and self-observability).
func InternedLive() int {
	internMu.Lock()
	defer internMu.Unlock()
	return len(internIDs)
}

// Interned returns the table of interned strings, indexed by id. The
// entries a caller reads are those of the series it holds, loaded before
// the table: they do not change while it holds them. Cost: one atomic
// load.
func Interned() []string { return *internTab.Load() }

// ValueID returns vids[i], or 0 (absent) past the end of vids: a series
// of a growable view has no values for keys added after it. Cost: a
// compare, inlined.
func ValueID(vids []uint32, i int) uint32 {
	if uint(i) < uint(len(vids)) {
		return vids[i]
	}
	return 0
}

// PadValueIDs returns vids with n values: vids itself when it has them,
// else a copy in *buf (reused) with 0 (absent) for the keys past its end
// (a series older than keys added to its view). Cost: none in the common
// case; a copy of a few ids otherwise, no allocation once buf has grown.
func PadValueIDs(buf *[]uint32, vids []uint32, n int) []uint32 {
	if len(vids) >= n {
		return vids
	}
	b := append((*buf)[:0], vids...)
	for len(b) < n {
		b = append(b, 0)
	}
	*buf = b
	return b
}
