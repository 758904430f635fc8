package view

import (
	"reflect"
	"slices"
	"time"
)

// Exporter receives the data of every registered view each reporting
// period, and of a view being unregistered. ExportView is called from the
// reporting goroutine (from Unregister's caller for the last report of a
// view), with a *Data freshly built for that report and shared by all
// exporters: an exporter may keep it but must not modify it. Exporters are
// kept in a set, compared with ==: use a pointer. An exporter of a type
// that cannot be compared (a func type) can be registered but never
// unregistered (OpenCensus panics on one).
type Exporter interface {
	ExportView(viewData *Data)
}

// DefaultReportingPeriod is the reporting period until SetReportingPeriod
// changes it (OpenCensus's default).
const DefaultReportingPeriod = 10 * time.Second

// RegisterExporter adds e to the default meter's exporters. The first
// registered exporter starts the reporting goroutine (none runs before:
// nothing starts in init); the last one unregistered stops it. Safe for
// concurrent use.
func RegisterExporter(e Exporter) { defaultWorker.RegisterExporter(e) }

// RegisterExporter adds e to this meter's exporters; see the package-level
// RegisterExporter. A meter from NewMeter reports only once started.
func (w *worker) RegisterExporter(e Exporter) {
	if e == nil {
		return
	}
	w.expMu.Lock()
	defer w.expMu.Unlock()
	if indexOf(w.expSet, e) >= 0 {
		return
	}
	w.expSet = append(w.expSet, e)
	w.startLoop()
}

// UnregisterExporter removes e from the default meter's exporters and
// waits for a report in progress (a periodic one, or Unregister's final
// one) to return, as OpenCensus does: once it returns, no report calls e,
// so e can be closed. It must not be called from an ExportView (it would
// wait for itself). Safe for concurrent use.
func UnregisterExporter(e Exporter) { defaultWorker.UnregisterExporter(e) }

// UnregisterExporter removes e from this meter's exporters and waits for a
// report in progress; see the package-level UnregisterExporter.
func (w *worker) UnregisterExporter(e Exporter) {
	if !w.removeExporter(e) {
		return
	}
	// A report that loaded the set before the removal may still call e:
	// reports hold reportMu throughout, so taking it waits them out.
	w.reportMu.Lock()
	w.reportMu.Unlock() //nolint:staticcheck // an empty critical section: waiting is the point
}

// removeExporter removes e from the set and reports whether it was there.
func (w *worker) removeExporter(e Exporter) bool {
	w.expMu.Lock()
	defer w.expMu.Unlock()
	i := indexOf(w.expSet, e)
	if i < 0 {
		return false
	}
	w.expSet = slices.Delete(slices.Clone(w.expSet), i, i+1)
	if len(w.expSet) == 0 {
		w.stopLoop()
	}
	return true
}

// SetReportingPeriod sets how often the default meter's exporters receive
// view data; d <= 0 restores DefaultReportingPeriod (as in OpenCensus).
func SetReportingPeriod(d time.Duration) { defaultWorker.SetReportingPeriod(d) }

// SetReportingPeriod sets how often this meter's exporters receive view
// data; d <= 0 restores DefaultReportingPeriod.
func (w *worker) SetReportingPeriod(d time.Duration) {
	if d <= 0 {
		d = DefaultReportingPeriod
	}
	w.expMu.Lock()
	defer w.expMu.Unlock()
	w.period = d
	if w.loopReset != nil {
		select {
		case w.loopReset <- struct{}{}:
		default:
		}
	}
}

// startLoop starts the reporting goroutine if the meter is started, has an
// exporter and none runs. Called under expMu.
func (w *worker) startLoop() {
	if w.loopStop != nil || !w.started || len(w.expSet) == 0 {
		return
	}
	w.loopStop, w.loopReset = make(chan struct{}), make(chan struct{}, 1)
	w.loopDone = make(chan struct{})
	go w.reportLoop(w.loopStop, w.loopReset, w.loopDone)
}

// stopLoop stops the reporting goroutine, if any, and returns a channel
// closed once it has returned. Called under expMu.
func (w *worker) stopLoop() chan struct{} {
	if w.loopStop == nil {
		return nil
	}
	done := w.loopDone
	close(w.loopStop)
	w.loopStop, w.loopReset, w.loopDone = nil, nil, nil
	return done
}

// indexOf finds e in exps without panicking on an exporter whose dynamic
// type cannot be compared (a func type, say): such an exporter is never
// found, so it can be registered but not unregistered.
func indexOf(exps []Exporter, e Exporter) int {
	t := reflect.TypeOf(e)
	if t == nil || !t.Comparable() {
		return -1
	}
	for i, x := range exps {
		if reflect.TypeOf(x) == t && x == e {
			return i
		}
	}
	return -1
}

func (w *worker) exporters() []Exporter {
	w.expMu.Lock()
	defer w.expMu.Unlock()
	return w.expSet
}

func (w *worker) reportingPeriod() time.Duration {
	w.expMu.Lock()
	defer w.expMu.Unlock()
	return w.period
}

func (w *worker) reportLoop(stop, reset, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(w.reportingPeriod())
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-reset:
			t.Reset(w.reportingPeriod())
		case now := <-t.C:
			w.reportAll(now)
		}
	}
}

// reportAll sends every registered view, in name order, to every exporter.
func (w *worker) reportAll(now time.Time) {
	w.reportMu.Lock() // see Unregister
	defer w.reportMu.Unlock()
	exps := w.exporters()
	if len(exps) == 0 {
		return
	}
	for _, r := range w.sorted() {
		d := r.data(now)
		for _, e := range exps {
			e.ExportView(d)
		}
	}
}

// sorted returns the registered views in name order.
func (w *worker) sorted() []*registered {
	w.regMu.Lock()
	rs := make([]*registered, 0, len(w.views))
	for _, r := range w.views {
		rs = append(rs, r)
	}
	w.regMu.Unlock()
	slices.SortFunc(rs, func(a, b *registered) int {
		switch {
		case a.view.Name < b.view.Name:
			return -1
		case a.view.Name > b.view.Name:
			return 1
		}
		return 0
	})
	return rs
}
