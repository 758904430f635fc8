package opencensus

import (
	"reflect"
	"slices"
	"sync"

	"go.opencensus.io/metric/metricdata"
	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"
	octag "go.opencensus.io/tag"

	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// Exporter is a zerostat view.Exporter that passes each report it
// receives, converted to OpenCensus's view.Data, to an OpenCensus
// view.Exporter (Datadog's, one a team wrote for itself): the views of
// the meter it is registered with, each reporting period, as
// OpenCensus's worker reports its own (see the package doc). Register it
// with a meter from view.NewMeter (m.RegisterExporter), or use
// RegisterExporter for the default meter.
//
// Exporter keeps nothing between reports: ExportView converts the data
// it is given (a few allocations per view, one per row, one per tag and
// exemplar) and calls the OpenCensus exporter with it, on the calling
// goroutine — the meter's reporting goroutine, or the caller of
// view.Unregister for a view's last report — so a slow or blocked
// OpenCensus exporter delays the meter's other exporters, as it delays
// OpenCensus's, and never a recorder. Safe for concurrent use.
type Exporter struct {
	oc ocview.Exporter // never nil
}

var _ view.Exporter = (*Exporter)(nil)

// NewExporter returns an Exporter passing zerostat's view data to e; nil
// if e is nil.
func NewExporter(e ocview.Exporter) *Exporter {
	if e == nil {
		return nil
	}
	return &Exporter{oc: e}
}

// ExportView passes d, converted to OpenCensus's view.Data, to the
// OpenCensus exporter. A view of an aggregation OpenCensus does not have
// is not passed.
func (x *Exporter) ExportView(d *view.Data) {
	if vd := viewData(d); vd != nil {
		x.oc.ExportView(vd)
	}
}

// registered holds the OpenCensus exporters RegisterExporter added to the
// default meter, each with the Exporter that feeds it. mu is held across
// view.UnregisterExporter, so that every UnregisterExporter(e) returns
// only after the last report to e.
var registered struct {
	mu sync.Mutex
	m  map[ocview.Exporter]*Exporter
}

// RegisterExporter adds an OpenCensus view.Exporter, such as Datadog's
// (github.com/DataDog/opencensus-go-exporter-datadog), to the exporters
// of zerostat's default meter: from then on it receives every view
// registered with zerostat's view.Register, each reporting period, as
// OpenCensus's view.Data. It is OpenCensus's view.RegisterExporter for
// zerostat's views; OpenCensus's own, which such exporters call in
// their examples, reports only views registered with OpenCensus.
//
// The period is zerostat's: view.SetReportingPeriod of
// github.com/zerostat/zerostat/view, default 10 s as in OpenCensus
// (OpenCensus's SetReportingPeriod does not change it). As for zerostat's
// own exporters, the first registered exporter starts the reporting
// goroutine and the last one unregistered stops it. Registering e again
// is a no-op; an exporter of a type that cannot be compared (a func type)
// can be registered but never unregistered, as with zerostat's
// view.RegisterExporter. Set-up cost; safe for concurrent use.
func RegisterExporter(e ocview.Exporter) {
	if e == nil {
		return
	}
	if !isComparable(e) {
		view.RegisterExporter(NewExporter(e))
		return
	}
	registered.mu.Lock()
	defer registered.mu.Unlock()
	if _, ok := registered.m[e]; ok {
		return
	}
	if registered.m == nil {
		registered.m = make(map[ocview.Exporter]*Exporter)
	}
	x := NewExporter(e)
	registered.m[e] = x
	view.RegisterExporter(x)
}

// UnregisterExporter removes e, added by RegisterExporter, and waits for
// a report in progress to return, as zerostat's view.UnregisterExporter
// does: once it returns, no report calls e, so e can be flushed and
// closed (Datadog's Stop). It must not be called from an ExportView (it
// would wait for itself). Safe for concurrent use.
func UnregisterExporter(e ocview.Exporter) {
	if e == nil || !isComparable(e) {
		return
	}
	registered.mu.Lock()
	defer registered.mu.Unlock()
	if x, ok := registered.m[e]; ok {
		delete(registered.m, e)
		view.UnregisterExporter(x)
	}
}

// isComparable reports whether e can be a map key without panicking.
func isComparable(e ocview.Exporter) bool { return reflect.TypeOf(e).Comparable() }

// viewData is d as OpenCensus's worker builds a report (stats/view
// worker.go, reportView): the view, its start (when it was registered),
// the end (the report's time), and its rows, none for a view without
// rows; nil for a view of an aggregation OpenCensus does not have.
func viewData(d *view.Data) *ocview.Data {
	// An exponential view's rows share one layout (a report has one view,
	// and so one list of bounds): see the package doc.
	var layout *exphist.Layout
	var snaps []*exphist.Snapshot
	if a := d.View.Aggregation; a.Type == view.AggTypeExponentialDistribution {
		snaps = make([]*exphist.Snapshot, len(d.Rows))
		for i, r := range d.Rows {
			if e, ok := r.Data.(*view.ExponentialDistributionData); ok {
				snaps[i] = snapshotOf(e)
			}
		}
		maxSize := a.MaxSize
		if maxSize == 0 {
			maxSize = view.DefaultExponentialMaxSize
		}
		layout = commonLayout(snaps, maxSize)
	}
	v := ocView(d.View, layout)
	if v == nil {
		return nil
	}
	lastValue := v.Aggregation.Type == ocview.AggTypeLastValue
	rows := make([]*ocview.Row, 0, len(d.Rows))
	for i, r := range d.Rows {
		var data ocview.AggregationData
		if e, ok := r.Data.(*view.ExponentialDistributionData); ok && layout != nil && snaps[i] != nil {
			data = expDistributionData(e, snaps[i], layout)
		} else {
			data = aggregationData(r.Data, lastValue)
		}
		if data != nil {
			rows = append(rows, &ocview.Row{Tags: tags(r.Tags, v.TagKeys), Data: data})
		}
	}
	return &ocview.Data{View: v, Start: d.Start, End: d.End, Rows: rows}
}

// expDistributionData is an exponential row (d, as snap) as OpenCensus's
// DistributionData on layout l: the count, min, max, mean, its counts on
// l's buckets, an empty exemplar slot per bucket, and SumOfSquaredDev 0
// (an exponential histogram keeps none).
func expDistributionData(d *view.ExponentialDistributionData, snap *exphist.Snapshot, l *exphist.Layout) *ocview.DistributionData {
	counts := l.Counts(nil, snap)
	return &ocview.DistributionData{
		Count:              d.Count,
		Min:                d.Min,
		Max:                d.Max,
		Mean:               d.Mean(),
		CountPerBucket:     counts,
		ExemplarsPerBucket: make([]*metricdata.Exemplar, len(counts)),
		Start:              d.Start,
	}
}

// ocView is v as an OpenCensus view: the same name, description and tag
// keys (sorted, as both SDKs keep them), the aggregation v is published as
// (ocAggType; a distribution keeps its bounds, an exponential one has
// layout's), over an OpenCensus measure
// of v's measure's type, name, description and unit. That measure is
// OpenCensus's stats.Int64 or stats.Float64 of those, so it is the
// program's own OpenCensus measure of that name if there is one (and
// then has its description and unit).
func ocView(v *view.View, layout *exphist.Layout) *ocview.View {
	// Buckets as OpenCensus's Register leaves them (canonicalize): never
	// nil. Count and Sum are OpenCensus's shared aggregations, whose
	// Buckets its Register sets.
	var agg *ocview.Aggregation
	switch ocAggType(v.Aggregation) {
	case ocview.AggTypeCount:
		agg = ocview.Count()
	case ocview.AggTypeSum:
		agg = ocview.Sum()
	case ocview.AggTypeDistribution:
		if layout != nil { // an exponential distribution
			agg = ocview.Distribution(append([]float64{}, layout.Bounds...)...)
			break
		}
		agg = ocview.Distribution(append([]float64{}, v.Aggregation.Buckets...)...)
	case ocview.AggTypeLastValue:
		agg = ocview.LastValue()
		agg.Buckets = []float64{}
	default:
		return nil
	}
	var m ocstats.Measure
	if _, ok := v.Measure.(*stats.Int64Measure); ok {
		m = ocstats.Int64(v.Measure.Name(), v.Measure.Description(), v.Measure.Unit())
	} else {
		m = ocstats.Float64(v.Measure.Name(), v.Measure.Description(), v.Measure.Unit())
	}
	keys := make([]octag.Key, 0, len(v.TagKeys))
	for _, k := range v.TagKeys {
		// zerostat's key rules are OpenCensus's (printable ASCII, 1 to 255
		// bytes): the error cannot happen.
		if key, err := octag.NewKey(k.Name()); err == nil {
			keys = append(keys, key)
		}
	}
	return &ocview.View{Name: v.Name, Description: v.Description, TagKeys: keys, Measure: m, Aggregation: agg}
}

// tags returns a row's tags with keys's OpenCensus keys (a row has only
// keys of its view), in the same order (by key name); nil for none, as
// OpenCensus's rows have.
func tags(ts []tag.Tag, keys []octag.Key) []octag.Tag {
	if len(ts) == 0 {
		return nil
	}
	out := make([]octag.Tag, 0, len(ts))
	for _, t := range ts {
		if i := slices.IndexFunc(keys, func(k octag.Key) bool { return k.Name() == t.Key.Name() }); i >= 0 {
			out = append(out, octag.Tag{Key: keys[i], Value: t.Value})
		}
	}
	return out
}

// aggregationData is d as OpenCensus's data of the same aggregation (a
// sum published as a LastValue, lastValue, as LastValueData), with fresh
// slices; nil for a type it does not know. A DistributionData has
// ExemplarsPerBucket as OpenCensus allocates it, one (possibly nil)
// exemplar per bucket; its Sum() is OpenCensus's, Mean × Count.
func aggregationData(d view.AggregationData, lastValue bool) ocview.AggregationData {
	switch d := d.(type) {
	case *view.CountData:
		return &ocview.CountData{Start: d.Start, Value: d.Value}
	case *view.SumData:
		if lastValue {
			return &ocview.LastValueData{Value: d.Value}
		}
		return &ocview.SumData{Start: d.Start, Value: d.Value}
	case *view.LastValueData:
		return &ocview.LastValueData{Value: d.Value}
	case *view.DistributionData:
		c := &ocview.DistributionData{
			Count:              d.Count,
			Min:                d.Min,
			Max:                d.Max,
			Mean:               d.Mean,
			SumOfSquaredDev:    d.SumOfSquaredDev,
			CountPerBucket:     slices.Clone(d.CountPerBucket),
			ExemplarsPerBucket: make([]*metricdata.Exemplar, len(d.CountPerBucket)),
			Start:              d.Start,
		}
		for i, e := range d.ExemplarsPerBucket {
			if i < len(c.ExemplarsPerBucket) {
				c.ExemplarsPerBucket[i] = exemplar(e)
			}
		}
		return c
	}
	return nil
}
