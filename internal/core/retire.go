package core

import (
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
// A view registered under the name of a retiring view takes its place:
// the retiring view is dropped, so that a payload never holds two views of
// one name (its tail since the last export is then lost to readers that
// had not exported it). Guarded by regMu; ExportViews is one atomic load.

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
// file): Seq before an export reads ExportViews, Ack(seq) after that
// export succeeded.
type ExportReader struct {
	acked atomic.Uint64
}

type retiringView struct {
	v   *View
	seq uint64
}

// exportSet is the registered views and the retiring ones, by name, with
// each retiring view's seq (0 for a registered view).
type exportSet struct {
	views []*View
	seqs  []uint64
}

var (
	exportViews atomic.Pointer[exportSet] // nil: no view is retiring
	retireSeq   atomic.Uint64             // the seq of the last retirement
	retiring    []retiringView            // guarded by regMu
	readers     = map[*ExportReader]struct{}{}
)

// ExportViews returns what r exports (see the top of this file): the
// registered views, and the retiring ones r has not acknowledged, sorted
// by name; nil r: the registered views only. The caller must not modify
// the slice. Cost: one atomic load while no view is retiring; while one
// is, a filtered copy when r has acknowledged some (an allocation).
func ExportViews(r *ExportReader) []*View {
	set := exportViews.Load()
	if r == nil || set == nil {
		return Views()
	}
	acked := r.acked.Load()
	n := 0
	for _, q := range set.seqs {
		if q != 0 && q <= acked {
			n++
		}
	}
	if n == 0 {
		return set.views
	}
	out := make([]*View, 0, len(set.views)-n)
	for i, v := range set.views {
		if q := set.seqs[i]; q == 0 || q > acked {
			out = append(out, v)
		}
	}
	return out
}

// AddExportReader registers a push exporter: views retiring from now on
// stay in ExportViews until it has acknowledged an export that read them
// (or is removed). Set-up cost; safe for concurrent use.
func AddExportReader() *ExportReader {
	regMu.Lock()
	defer regMu.Unlock()
	r := &ExportReader{}
	r.acked.Store(retireSeq.Load())
	readers[r] = struct{}{}
	return r
}

// RemoveExportReader unregisters r (the exporter stopped), dropping the
// retiring views only it had not read. Safe for concurrent use; removing
// r again does nothing.
func RemoveExportReader(r *ExportReader) {
	regMu.Lock()
	defer regMu.Unlock()
	delete(readers, r)
	pruneRetiring()
}

// Seq returns what to pass to Ack once an export that reads ExportViews
// after this call has succeeded. One atomic load.
func (r *ExportReader) Seq() uint64 { return retireSeq.Load() }

// Ack records that r exported every view retired up to seq, dropping
// those every reader has. Cost: one atomic load when nothing retired since
// r's last Ack (no lock).
func (r *ExportReader) Ack(seq uint64) {
	if r.acked.Load() >= seq {
		return
	}
	regMu.Lock()
	defer regMu.Unlock()
	r.acked.Store(seq)
	pruneRetiring()
}

// retire keeps v, just removed from the registry, for the export readers,
// if any, and publishes ExportViews. Called under regMu.
//
// The new seq is stored after the views holding v are published: an
// export that read it (ExportReader.Seq, before it reads ExportViews)
// reads v, and so may acknowledge it. Stored first, an export could read
// the seq, then the views published before v retired, and acknowledge v
// without having sent it.
func retire(v *View) {
	if len(readers) == 0 {
		publishExportViews()
		return
	}
	seq := retireSeq.Load() + 1
	retiring = append(retiring, retiringView{v: v, seq: seq})
	publishExportViews()
	retireSeq.Store(seq)
}

// dropRetiring drops the retiring view named name, for a view registered
// under it. Called under regMu.
func dropRetiring(name string) {
	if i := slices.IndexFunc(retiring, func(r retiringView) bool { return r.v.Name == name }); i >= 0 {
		forget(retiring[i : i+1])
		retiring = slices.Delete(retiring, i, i+1)
	}
	publishExportViews()
}

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
	publishExportViews()
}

// publishExportViews publishes ExportViews after a change of the registry
// or of the retiring views. Called under regMu.
func publishExportViews() {
	if len(retiring) == 0 {
		exportViews.Store(nil)
		return
	}
	type entry struct {
		v   *View
		seq uint64
	}
	var all []entry
	for _, v := range Views() {
		all = append(all, entry{v, 0})
	}
	for _, r := range retiring {
		all = append(all, entry{r.v, r.seq})
	}
	slices.SortFunc(all, func(a, b entry) int { return strings.Compare(a.v.Name, b.v.Name) })
	set := &exportSet{views: make([]*View, len(all)), seqs: make([]uint64, len(all))}
	for i, e := range all {
		set.views[i], set.seqs[i] = e.v, e.seq
	}
	exportViews.Store(set)
}
