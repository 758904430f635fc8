package core

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync/atomic"
)

// Retiring views: what push exporters read of a view after RemoveView.
//
// A push exporter reads the registered views once per export. A view
// unregistered between two exports would take with it what it recorded
// since the last one: the records of a view's last interval, or of a
// MeterProvider's before its Shutdown. So while push exporters are
// registered (AddExportReader), RemoveView keeps the view it removes in a
// list of retiring views: Views, FindView and every pull reader no longer
// see it (OpenCensus's Unregister: RetrieveData fails at once), but
// ExportViews(r), what a push exporter r reads, still holds it, with its
// final values (its aggregator is detached: no record changes them),
// until r has acknowledged an export that read it; it goes when every
// export reader registered when it retired has. While a started exporter
// keeps failing, the views unregistered meanwhile stay, with their series,
// until it succeeds or stops. (Detach empties an aggregator's table; for a
// retiring view it keeps the series it took, which AppendSeries and
// Overflow then return.) It then goes, and a delta reader forgets it, a
// remote-write writer marks its series stale, as for any view that went.
//
// RemoveView publishes the export set holding the view as retiring before
// the registry without it, so an export always finds the view, registered
// or retiring. (Before, an export in between found it in neither: a delta
// reader forgot its state for the view, and its final read then sent the
// view's whole total again.)
//
// A view registered under the name of a view still retiring for r does not
// replace it. A payload holds one view of a name, so r's exports hold the
// oldest of them r has not acknowledged; the others, the registered one and
// any retired since, wait for the exports after it (Ack acknowledges none
// of them). Nothing recorded is lost: the new registration is a new set of
// series with its own start, which the export after the retiring view's
// last one reads whole. A service that registers its views again on a
// configuration reload loses none of their last interval. (Before, the new
// registration dropped the retiring view, and with it up to an interval of
// records for every exporter that had not read it yet.)
//
// Export readers hold eviction (Sweep) so that each reads every series
// another exporter evicts: a sealed series is freed only once every
// export reader has read the views after its seal (ExportReader.Read); a
// view held back for a retiring one of its name (shadowed) frees nothing,
// nor, once no longer held back, before every reader has read it since
// (readFloor); and an unregistered view (retired) frees nothing: Detach
// keeps its series, sealed ones included, for its last exports. An
// exporter whose exports fail still reads (Read): it holds only the views
// it holds back. Guarded by regMu; ExportViews is two atomic loads while
// no view is retiring.

type finalSeries struct {
	series   []*Series
	overflow *Series
}

// keepFinal keeps, for a's view if it is retiring, a copy of the series
// and the overflow series Detach takes from a: what its last export reads.
// A copy: Detach then sorts its own slice for their release while exports
// read this one. Called by Detach under a.mu, before it empties a's
// table, so that no export sees the view without its series (a.mu, then
// regMu: the order GrowView takes them in too).
func keepFinal(a *Aggregator, series []*Series, overflow *Series) {
	regMu.Lock()
	defer regMu.Unlock()
	if slices.ContainsFunc(retiring, func(r retiringView) bool { return r.v.Agg == a }) {
		a.final.Store(&finalSeries{series: slices.Clone(series), overflow: overflow})
	}
}

// forget drops the final series of the views leaving the retiring list:
// a series a TagMap cache still holds no longer keeps the others alive.
func forget(gone []retiringView) {
	for _, r := range gone {
		r.v.Agg.final.Store(nil)
	}
}

// ExportReader is a push exporter's registration (see the top of this
// file): Ticket before an export reads ExportViews, Read(t) once it has
// read them, Ack(t) once it delivered them.
type ExportReader struct {
	acked atomic.Uint64 // the retirements it has exported (retireSeq)
	seals atomic.Uint64 // the seals it has read (sealsDone)
}

// Ticket is what an export's Read and Ack say it read: the views retired,
// and the series sealed, before it began (ExportReader.Ticket).
type Ticket struct{ retire, seals uint64 }

type retiringView struct {
	v   *View
	seq uint64
}

// exportSet is the registered views and the retiring ones by name, a
// name's retiring views by seq and its registered view last, with each
// retiring view's seq (0 for a registered view); shared says whether two
// of them have one name.
type exportSet struct {
	views  []*View
	seqs   []uint64
	shared bool
}

var (
	exportViews atomic.Pointer[exportSet] // nil: no view is retiring
	retireSeq   atomic.Uint64             // the seq of the last retirement
	retiring    []retiringView            // guarded by regMu, in retirement order
	readers     = map[*ExportReader]struct{}{}
	// sealsDone counts the seals of every aggregator (Series.Evict), and
	// each end of a shadow (readFloor); readSeals is the least count every
	// export reader has read the views after (ExportReader.seals;
	// MaxUint64 with no reader): Sweep frees no series sealed later.
	sealsDone atomic.Uint64
	readSeals atomic.Uint64
)

func init() { readSeals.Store(math.MaxUint64) }

// ExportViews returns what r exports (see the top of this file): the
// registered views, and the retiring ones r has not acknowledged, sorted
// by name, one view a name (the oldest r has not exported); nil r: the
// registered views only. The caller must not modify the slice. Cost: one
// atomic load while no view is retiring; while one is, a filtered copy
// when r has acknowledged some or a name is shared (an allocation).
func ExportViews(r *ExportReader) []*View {
	// The registry first: RemoveView publishes the set holding the view
	// as retiring before the registry without it, so a nil set loaded
	// after the registry means the registry still held the view.
	reg := Views()
	set := exportViews.Load()
	if r == nil || set == nil {
		return reg
	}
	acked := r.acked.Load()
	n := 0
	for _, q := range set.seqs {
		if q != 0 && q <= acked {
			n++
		}
	}
	if n == 0 && !set.shared {
		return set.views
	}
	out := make([]*View, 0, len(set.views)-n)
	for i, v := range set.views {
		if q := set.seqs[i]; q != 0 && q <= acked {
			continue // exported
		}
		if k := len(out); k > 0 && out[k-1].Name == v.Name {
			continue // waits for the export after the one that holds out[k-1]
		}
		out = append(out, v)
	}
	return out
}

// AddExportReader registers a push exporter: views retiring from now on
// stay in ExportViews until it has acknowledged an export that read them
// (or is removed), and series sealed from now on are freed only once it
// has read their views (Read). Set-up cost; safe for concurrent use.
func AddExportReader() *ExportReader {
	regMu.Lock()
	defer regMu.Unlock()
	r := &ExportReader{}
	r.acked.Store(retireSeq.Load())
	// It needs no series sealed before it was added; one sealed later
	// waits for its first export.
	r.seals.Store(sealsDone.Load())
	readers[r] = struct{}{}
	updateReadSeals()
	return r
}

// RemoveExportReader unregisters r (the exporter stopped), dropping the
// retiring views only it had not read. Safe for concurrent use; removing
// r again does nothing.
func RemoveExportReader(r *ExportReader) {
	regMu.Lock()
	defer regMu.Unlock()
	delete(readers, r)
	updateReadSeals()
	pruneRetiring()
}

// Ticket returns what to pass to Read and Ack once an export that reads
// ExportViews after this call has read them (Read) and delivered them
// (Ack). Two atomic loads.
func (r *ExportReader) Ticket() Ticket {
	return Ticket{retire: retireSeq.Load(), seals: sealsDone.Load()}
}

// Read records that an export that took t (Ticket) before it began has
// read every view ExportViews gave it, whether or not it delivered them:
// the series sealed up to t may be freed, but for those of views it held
// back (see Sweep). Cost: one atomic load when nothing was sealed since
// r's last Read; else regMu.
func (r *ExportReader) Read(t Ticket) {
	if r.seals.Load() >= t.seals {
		return
	}
	regMu.Lock()
	defer regMu.Unlock()
	if _, ok := readers[r]; !ok {
		return // removed (the exporter stopped): holds nothing
	}
	if t.seals > r.seals.Load() {
		r.seals.Store(t.seals)
		updateReadSeals()
	}
}

// Ack records that r delivered an export that took t before it began
// (Read records that it read it): the views retired up to t that the
// export held are dropped once every reader has delivered them. A
// retiring view the export held back (its name shared with an older
// one: see the top of this file) stays. Cost: one atomic load when
// nothing retired since r's last Ack (no lock).
func (r *ExportReader) Ack(t Ticket) {
	if r.acked.Load() >= t.retire {
		return
	}
	regMu.Lock()
	defer regMu.Unlock()
	acked := r.acked.Load()
	upTo := t.retire
	for i, v := range retiring {
		if v.seq <= acked || v.seq > upTo {
			continue
		}
		// A later view of v's name retired up to t was held back from the
		// export that held v.
		for _, w := range retiring[i+1:] {
			if w.v.Name == v.v.Name && w.seq <= upTo {
				upTo = w.seq - 1
				break
			}
		}
	}
	if upTo > acked {
		r.acked.Store(upTo)
		pruneRetiring()
	}
}

// updateReadSeals recomputes readSeals. Called under regMu.
func updateReadSeals() {
	least := uint64(math.MaxUint64)
	for r := range readers {
		least = min(least, r.seals.Load())
	}
	readSeals.Store(least)
}

// retire keeps v, being removed from the registry (next: the registry
// without it), for the export readers, if any, and publishes ExportViews
// and then next. Called under regMu.
//
// The export set is published first, with v retiring, and the registry
// without v after: an export always finds v, registered (in Views, for a
// reader while no view is retiring) or retiring. The new seq is stored
// after both: an export that read it (Ticket, before it reads ExportViews)
// reads v as retiring, and so may acknowledge it. Stored first, an export
// could read the seq, then the views published before v retired, and
// acknowledge v without having sent it.
func retire(v *View, next []*View) {
	v.Agg.retired.Store(true) // before any export can miss it: see Sweep
	if len(readers) == 0 {
		publishExportViews(next)
		registry.Store(&next)
		return
	}
	seq := retireSeq.Load() + 1
	retiring = append(retiring, retiringView{v: v, seq: seq})
	publishExportViews(next)
	if retireHook != nil {
		retireHook(v)
	}
	registry.Store(&next)
	retireSeq.Store(seq)
}

// retireHook, when set (tests), runs in retire between the publication of
// the export set and that of the registry.
var retireHook func(v *View)

// pruneRetiring drops the retiring views every reader has read. Called
// under regMu.
func pruneRetiring() {
	if len(retiring) == 0 {
		return
	}
	read := retireSeq.Load() // what every reader has read
	for r := range readers {
		read = min(read, r.acked.Load())
	}
	keep := retiring[:0]
	for _, r := range retiring {
		if r.seq <= read {
			forget([]retiringView{r})
		} else {
			keep = append(keep, r)
		}
	}
	clear(retiring[len(keep):])
	retiring = keep
	publishExportViews(Views())
}

// publishExportViews publishes ExportViews for views, the registry as it
// is or is about to be published, and the retiring views. Called under
// regMu.
func publishExportViews(views []*View) {
	if len(retiring) == 0 {
		exportViews.Store(nil)
		unshadow(views, nil)
		return
	}
	type entry struct {
		v   *View
		seq uint64 // MaxUint64: registered, after the name's retiring views
	}
	var all []entry
	for _, v := range views {
		all = append(all, entry{v, math.MaxUint64})
	}
	for _, r := range retiring {
		all = append(all, entry{r.v, r.seq})
	}
	slices.SortFunc(all, func(a, b entry) int {
		if c := strings.Compare(a.v.Name, b.v.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	set := &exportSet{views: make([]*View, len(all)), seqs: make([]uint64, len(all))}
	for i, e := range all {
		set.views[i] = e.v
		if e.seq != math.MaxUint64 {
			set.seqs[i] = e.seq
		}
		held := i > 0 && all[i-1].v.Name == e.v.Name
		set.shared = set.shared || held
		if held && e.seq == math.MaxUint64 {
			e.v.Agg.shadowed.Store(true) // before a reader can find it here
		}
	}
	exportViews.Store(set)
	unshadow(views, set)
}

// unshadow ends the shadow of each view of views that set does not hold
// back (nil: none is held back). Every export reader must then read the
// view before a series of it is freed, also one sealed while it was held
// back: its readFloor is a seal count bumped after set was published, so
// only a Ticket taken since (whose export reads set or a later one)
// reaches it; the floor is stored before the flag is cleared, which Sweep
// reads first. Called under regMu.
func unshadow(views []*View, set *exportSet) {
	for _, v := range views {
		a := v.Agg
		if !a.shadowed.Load() || set != nil && heldBack(set, v) {
			continue
		}
		a.readFloor.Store(sealsDone.Add(1))
		a.shadowed.Store(false)
	}
}

// heldBack reports whether set holds registered view v back for a
// retiring view of its name (which sorts before it).
func heldBack(set *exportSet, v *View) bool {
	i := slices.Index(set.views, v)
	return i > 0 && set.views[i-1].Name == v.Name
}
