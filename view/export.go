package view

import (
	"reflect"
	"slices"
	"sync"
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

var (
	// reportMu serialises periodic reports with Unregister's final ones.
	reportMu sync.Mutex

	expMu     sync.Mutex
	expSet    []Exporter
	period    = DefaultReportingPeriod
	loopStop  chan struct{}
	loopReset chan struct{}
)

// RegisterExporter adds e to the exporters. The first registered exporter
// starts the reporting goroutine (none runs before: nothing starts in
// init); the last one unregistered stops it. Safe for concurrent use.
func RegisterExporter(e Exporter) {
	if e == nil {
		return
	}
	expMu.Lock()
	defer expMu.Unlock()
	if indexOf(expSet, e) >= 0 {
		return
	}
	expSet = append(expSet, e)
	if loopStop == nil {
		loopStop, loopReset = make(chan struct{}), make(chan struct{}, 1)
		go reportLoop(loopStop, loopReset)
	}
}

// UnregisterExporter removes e and waits for a report in progress (a
// periodic one, or Unregister's final one) to return, as OpenCensus does:
// once it returns, no report calls e, so e can be closed. It must not be
// called from an ExportView (it would wait for itself). Safe for
// concurrent use.
func UnregisterExporter(e Exporter) {
	if !removeExporter(e) {
		return
	}
	// A report that loaded the set before the removal may still call e:
	// reports hold reportMu throughout, so taking it waits them out.
	reportMu.Lock()
	reportMu.Unlock() //nolint:staticcheck // an empty critical section: waiting is the point
}

// removeExporter removes e from the set and reports whether it was there.
func removeExporter(e Exporter) bool {
	expMu.Lock()
	defer expMu.Unlock()
	i := indexOf(expSet, e)
	if i < 0 {
		return false
	}
	expSet = slices.Delete(slices.Clone(expSet), i, i+1)
	if len(expSet) == 0 && loopStop != nil {
		close(loopStop)
		loopStop, loopReset = nil, nil
	}
	return true
}

// SetReportingPeriod sets how often the exporters receive view data; d <= 0
// restores DefaultReportingPeriod.
func SetReportingPeriod(d time.Duration) {
	if d <= 0 {
		d = DefaultReportingPeriod
	}
	expMu.Lock()
	defer expMu.Unlock()
	period = d
	if loopReset != nil {
		select {
		case loopReset <- struct{}{}:
		default:
		}
	}
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

func exporters() []Exporter {
	expMu.Lock()
	defer expMu.Unlock()
	return expSet
}

func reportingPeriod() time.Duration {
	expMu.Lock()
	defer expMu.Unlock()
	return period
}

func reportLoop(stop, reset chan struct{}) {
	t := time.NewTicker(reportingPeriod())
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-reset:
			t.Reset(reportingPeriod())
		case now := <-t.C:
			reportAll(now)
		}
	}
}

// reportAll sends every registered view, in name order, to every exporter.
func reportAll(now time.Time) {
	reportMu.Lock() // see Unregister
	defer reportMu.Unlock()
	regMu.Lock()
	rs := make([]*registered, 0, len(views))
	for _, r := range views {
		rs = append(rs, r)
	}
	regMu.Unlock()
	slices.SortFunc(rs, func(a, b *registered) int {
		switch {
		case a.view.Name < b.view.Name:
			return -1
		case a.view.Name > b.view.Name:
			return 1
		}
		return 0
	})
	exps := exporters()
	if len(exps) == 0 {
		return
	}
	for _, r := range rs {
		d := r.data(now)
		for _, e := range exps {
			e.ExportView(d)
		}
	}
}
