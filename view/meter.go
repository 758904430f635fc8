package view

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/resource"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
)

// Meter is a set of views with its own exporters and reporting period
// (OpenCensus's view.Meter), for a process that reports about several
// objects — several databases, several tenants — separately. The
// package-level functions act on the default meter; a Meter from NewMeter
// is independent of it: its views see only what is recorded into it with
// stats.WithRecorder(meter) (or its Record method), never what
// stats.Record records, and the default meter's views never see what is
// recorded into it.
//
// SetResource says what entity the meter's data is about
// (package resource); the OpenCensus bridge's meter producer
// (bridge/opencensus, RegisterMeter) sets it on the meter's metrics as
// OpenCensus does, and zerostat's own
// exporters, which read the default meter and carry their own resource
// (exporter.Options.Resource, otlp.Options.Resource), do not read it. All
// methods are safe for concurrent use.
//
// Besides Meter's methods, the meters NewMeter returns have
// Views() []*View (the registered views, by name) and
// Resource() *resource.Resource (the last SetResource), for bridges, as
// OpenCensus's meters have its metricproducer's Read.
type Meter interface {
	stats.Recorder
	// Find returns the view registered in this meter under name, or nil.
	Find(name string) *View
	// Register starts aggregating for the views in this meter, with the
	// rules of the package-level Register.
	Register(views ...*View) error
	// Unregister stops aggregating for the views; the meter's exporters
	// receive their data one last time.
	Unregister(views ...*View)
	// SetReportingPeriod sets how often the meter's exporters receive its
	// views' data; d <= 0 restores DefaultReportingPeriod.
	SetReportingPeriod(time.Duration)
	// RegisterExporter adds an exporter of this meter's views.
	RegisterExporter(Exporter)
	// UnregisterExporter removes one.
	UnregisterExporter(Exporter)
	// Start starts the periodic reports to the meter's exporters.
	Start()
	// Stop stops them and waits for a report in progress.
	Stop()
	// RetrieveData returns the rows of a view of this meter.
	RetrieveData(viewName string) ([]*Row, error)
	// SetResource sets the resource the meter's data is about (nil for
	// none), replacing any earlier one. The meter keeps r itself, not a
	// copy (as OpenCensus does): do not change it afterwards.
	SetResource(r *resource.Resource)
}

// worker is a meter: its registered views, its exporters and its
// reporting goroutine. The default meter's views are also published to
// the exporters that read the process's registry (internal/core) and are
// fed by stats.Record; a meter from NewMeter is fed only by its Record.
//
// Locks: regMu guards views and the writers of subs; expMu guards the
// exporter set, the period, started and the loop channels; reportMu
// serialises periodic reports with Unregister's final ones. Record takes
// none: it loads subs atomically.
type worker struct {
	isDefault bool

	regMu sync.Mutex
	views map[string]*registered
	// subs maps a measure's name to the aggregators of this meter's views
	// over it, replaced as a whole (copy on write) under regMu.
	subs atomic.Pointer[map[string][]*core.Aggregator]

	reportMu sync.Mutex

	res atomic.Pointer[resource.Resource] // SetResource's

	expMu                         sync.Mutex
	expSet                        []Exporter
	period                        time.Duration
	started                       bool
	loopStop, loopReset, loopDone chan struct{}
}

var _ Meter = (*worker)(nil)

// defaultWorker is the default meter. It counts as started from the
// beginning (OpenCensus starts it in init), but its reporting goroutine
// runs only while it has an exporter.
var defaultWorker = newWorker(true)

func newWorker(isDefault bool) *worker {
	return &worker{isDefault: isDefault, views: map[string]*registered{},
		period: DefaultReportingPeriod, started: isDefault}
}

// SetResource sets the meter's resource. Cost: one atomic store.
func (w *worker) SetResource(r *resource.Resource) { w.res.Store(r) }

// Resource returns the meter's resource, the last SetResource's argument
// (nil before any). Cost: one atomic load.
func (w *worker) Resource() *resource.Resource { return w.res.Load() }

// Views returns the views registered in the meter, sorted by name.
// Allocates the slice; takes the registration lock briefly.
func (w *worker) Views() []*View {
	w.regMu.Lock()
	out := make([]*View, 0, len(w.views))
	for _, r := range w.views {
		out = append(out, r.view)
	}
	w.regMu.Unlock()
	slices.SortFunc(out, func(a, b *View) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// NewMeter returns a meter independent of the default one, with no views
// and no exporters. As in OpenCensus, its exporters receive reports once
// Start is called; unlike OpenCensus, Register, Record and RetrieveData
// work before Start too (records are never queued or lost). Set-up cost.
func NewMeter() Meter { return newWorker(false) }

// Start starts the meter's periodic reports (the reporting goroutine runs
// while the meter is started and has an exporter). Calling it on a started
// meter does nothing.
func (w *worker) Start() {
	w.expMu.Lock()
	defer w.expMu.Unlock()
	w.started = true
	w.startLoop()
}

// Stop stops the meter's periodic reports and waits for a report in
// progress to end (so do not call it from an Exporter's ExportView). Views
// keep aggregating and RetrieveData keeps working; Start resumes the
// reports. Calling it on a stopped meter does nothing.
func (w *worker) Stop() {
	w.expMu.Lock()
	w.started = false
	done := w.stopLoop()
	w.expMu.Unlock()
	if done != nil {
		<-done
	}
}

// Stop stops the default meter's periodic reports; see Meter.Stop. In
// OpenCensus it also stops recording (a later record panics); here views
// keep aggregating, and RegisterExporter after Stop does not restart the
// reports (view.Stop is meant for shutdown).
func Stop() { defaultWorker.Stop() }

// Record records the measurements ms (a []stats.Measurement; anything else
// is ignored, as a stats.Recorder receives them) with the tags into this
// meter's views. A nil tags records without tags. attachments are kept as
// the exemplar of the value's bucket by the meter's distribution views.
//
// Cost: per measurement a map lookup by measure name and, per view, the
// same series lookup and atomic update as stats.Record; no allocation
// without attachments. Safe for concurrent use.
func (w *worker) Record(tags *tag.Map, ms interface{}, attachments map[string]interface{}) {
	measurements, ok := ms.([]stats.Measurement)
	if !ok {
		return
	}
	p := w.subs.Load()
	if p == nil {
		return
	}
	tm := (*core.TagMap)(tags)
	for _, m := range measurements {
		if m.Measure() == nil {
			continue
		}
		for _, a := range (*p)[m.Measure().Name()] {
			recordInto(a, tm, m.Value(), attachments)
		}
	}
}

// subscribe makes Record reach a for the measure named name. Called under
// regMu.
func (w *worker) subscribe(name string, a *core.Aggregator) {
	next := w.copySubs()
	next[name] = append(next[name][:len(next[name]):len(next[name])], a)
	w.subs.Store(&next)
}

// unsubscribe undoes subscribe. Called under regMu.
func (w *worker) unsubscribe(name string, a *core.Aggregator) {
	next := w.copySubs()
	var keep []*core.Aggregator
	for _, x := range next[name] {
		if x != a {
			keep = append(keep, x)
		}
	}
	if len(keep) == 0 {
		delete(next, name)
	} else {
		next[name] = keep
	}
	w.subs.Store(&next)
}

func (w *worker) copySubs() map[string][]*core.Aggregator {
	next := map[string][]*core.Aggregator{}
	if p := w.subs.Load(); p != nil {
		for k, v := range *p {
			next[k] = v
		}
	}
	return next
}

// recordInto records v with the tags tm into a.
func recordInto(a *core.Aggregator, tm *core.TagMap, v float64, attachments map[string]interface{}) {
	if len(attachments) == 0 {
		a.RecordMap(tm, v)
		return
	}
	a.RecordMapExemplar(tm, v, core.NewExemplar(v, time.Now().UnixNano(), attachments))
}
