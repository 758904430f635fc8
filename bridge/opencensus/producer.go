package opencensus

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.opencensus.io/metric/metricdata"
	"go.opencensus.io/metric/metricproducer"
	"go.opencensus.io/resource"
	ocview "go.opencensus.io/stats/view"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/exphist"
	zsresource "github.com/zerostat/zerostat/resource"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// Options configure a Producer.
type Options struct {
	// Resource, when not nil, is set on every metric. When nil, a meter's
	// producer (NewMeterProducer) sets the meter's resource
	// (view.Meter.SetResource) as OpenCensus's meters do, and the default
	// meter's sets none (OpenCensus's default meter has none either).
	Resource *resource.Resource
}

// Producer is a metricproducer.Producer of the views of zerostat's default
// meter or of one meter from view.NewMeter. Safe for concurrent use.
type Producer struct {
	res   *resource.Resource
	meter meterSource // nil: the default meter

	// conv caches the OpenCensus form of the meter's resource, so that
	// every Read returns one pointer per SetResource, as OpenCensus does.
	conv atomic.Pointer[convResource]
}

// meterSource is what the meters view.NewMeter returns offer bridges
// besides view.Meter (see view.Meter's doc).
type meterSource interface {
	view.Meter
	Views() []*view.View
	Resource() *zsresource.Resource
}

type convResource struct {
	zs *zsresource.Resource
	oc *resource.Resource
}

var _ metricproducer.Producer = (*Producer)(nil)

// NewProducer returns a producer of the default meter's views; add it to
// a metricproducer.Manager yourself, or use Register.
func NewProducer(opts Options) *Producer { return &Producer{res: opts.Resource} }

// Register returns a producer added to metricproducer.GlobalManager(),
// which OpenCensus's contrib exporters read. Set-up cost.
func Register(opts Options) *Producer {
	p := NewProducer(opts)
	metricproducer.GlobalManager().AddProducer(p)
	return p
}

// NewMeterProducer returns a producer of the views registered in m, a
// meter from view.NewMeter: OpenCensus's meters are producers themselves,
// zerostat's root module cannot import metricproducer, so this is the
// producer a zerostat meter needs. Each metric carries m's resource (the
// latest m.SetResource, converted to OpenCensus's type with the same Type
// and the same Labels map) unless opts.Resource is set. An error if m is
// not from view.NewMeter (it cannot list its views).
func NewMeterProducer(m view.Meter, opts Options) (*Producer, error) {
	src, ok := m.(meterSource)
	if !ok {
		return nil, fmt.Errorf("opencensus: meter %T does not list its views: use a meter from view.NewMeter", m)
	}
	return &Producer{res: opts.Resource, meter: src}, nil
}

// RegisterMeter returns NewMeterProducer(m, opts) added to
// metricproducer.GlobalManager(), where OpenCensus puts a meter when it
// is started; remove it with Unregister (OpenCensus: Meter.Stop).
// Set-up cost.
func RegisterMeter(m view.Meter, opts Options) (*Producer, error) {
	p, err := NewMeterProducer(m, opts)
	if err != nil {
		return nil, err
	}
	metricproducer.GlobalManager().AddProducer(p)
	return p, nil
}

// resource returns the resource of p's metrics.
func (p *Producer) resource() *resource.Resource {
	if p.res != nil || p.meter == nil {
		return p.res
	}
	zs := p.meter.Resource()
	if zs == nil {
		return nil
	}
	if c := p.conv.Load(); c != nil && c.zs == zs {
		return c.oc
	}
	c := &convResource{zs: zs, oc: &resource.Resource{Type: zs.Type, Labels: zs.Labels}}
	p.conv.Store(c)
	return c.oc
}

// Unregister removes p from metricproducer.GlobalManager().
func (p *Producer) Unregister() { metricproducer.GlobalManager().DeleteProducer(p) }

// Read returns the metrics of the registered views (see the package doc
// for the mapping), in view name order.
func (p *Producer) Read() []*metricdata.Metric {
	now := time.Now()
	res := p.resource()
	var out []*metricdata.Metric
	if p.meter != nil {
		for _, v := range p.meter.Views() {
			rows, err := p.meter.RetrieveData(v.Name)
			if err != nil || len(rows) == 0 {
				continue // unregistered meanwhile, or no rows
			}
			if m := toMetric(v, rows, now, res); m != nil {
				out = append(out, m)
			}
		}
		return out
	}
	for _, cv := range core.Views() {
		v := view.Find(cv.Name)
		if v == nil {
			continue // unregistered meanwhile
		}
		rows, err := view.RetrieveData(cv.Name)
		if err != nil || len(rows) == 0 {
			continue
		}
		if m := toMetric(v, rows, now, res); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// unit is OpenCensus's getUnit/convertUnit.
func unit(v *view.View) metricdata.Unit {
	if v.Aggregation.Type == view.AggTypeCount {
		return metricdata.UnitDimensionless
	}
	switch v.Measure.Unit() {
	case "ms":
		return metricdata.UnitMilliseconds
	case "By":
		return metricdata.UnitBytes
	}
	return metricdata.UnitDimensionless
}

// metricType is OpenCensus's getType of the aggregation v is published
// as (ocAggType); ok is false for an aggregation OpenCensus does not know.
func metricType(v *view.View) (t metricdata.Type, ok bool) {
	if v.Aggregation.Type == view.AggTypeSummary { // not an OpenCensus aggregation, but a metric type (summary.go)
		return metricdata.TypeSummary, true
	}
	_, isInt := v.Measure.(*stats.Int64Measure)
	switch ocAggType(v.Aggregation) {
	case ocview.AggTypeCount:
		return metricdata.TypeCumulativeInt64, true
	case ocview.AggTypeSum:
		if isInt {
			return metricdata.TypeCumulativeInt64, true
		}
		return metricdata.TypeCumulativeFloat64, true
	case ocview.AggTypeDistribution:
		return metricdata.TypeCumulativeDistribution, true
	case ocview.AggTypeLastValue:
		if isInt {
			return metricdata.TypeGaugeInt64, true
		}
		return metricdata.TypeGaugeFloat64, true
	}
	return 0, false
}

// ocAggType is the OpenCensus aggregation a zerostat aggregation is
// published as, by Producer and by Exporter alike: its own, but LastValue
// for an UpDownSum. OpenCensus has no sum that may go down, and its
// exporters show a Sum as a counter (a cumulative metric, a Prometheus
// counter), which a falling total would break; what OpenCensus exports
// for such a total is a gauge of it, a LastValue: Producer's GaugeInt64
// or GaugeFloat64, Exporter's LastValueData, as zerostat's own exporters
// show it (a gauge, never a counter); Distribution for an exponential
// distribution, which OpenCensus has not (its buckets' edges as explicit
// bounds, see the package doc). AggTypeNone for a type OpenCensus does
// not have.
func ocAggType(a *view.Aggregation) ocview.AggType {
	switch a.Type {
	case view.AggTypeCount:
		return ocview.AggTypeCount
	case view.AggTypeSum:
		if a.UpDown {
			return ocview.AggTypeLastValue
		}
		return ocview.AggTypeSum
	case view.AggTypeDistribution, view.AggTypeExponentialDistribution:
		return ocview.AggTypeDistribution
	case view.AggTypeLastValue:
		return ocview.AggTypeLastValue
	}
	return ocview.AggTypeNone
}

func toMetric(v *view.View, rows []*view.Row, now time.Time, res *resource.Resource) *metricdata.Metric {
	typ, ok := metricType(v)
	if !ok {
		return nil
	}
	keys := make([]metricdata.LabelKey, 0, len(v.TagKeys)+1)
	for _, k := range v.TagKeys {
		keys = append(keys, metricdata.LabelKey{Key: k.Name()})
	}
	// A growable view (an otel instrument's) may have gained keys since v
	// was registered: its rows say which.
	for _, r := range rows {
		for _, t := range r.Tags {
			if !r.IsOverflow() && !slices.ContainsFunc(keys, func(k metricdata.LabelKey) bool { return k.Key == t.Key.Name() }) {
				keys = append(keys, metricdata.LabelKey{Key: t.Key.Name()})
			}
		}
	}
	slices.SortFunc(keys, func(a, b metricdata.LabelKey) int { return strings.Compare(a.Key, b.Key) })
	if last := rows[len(rows)-1]; isOverflow(last) {
		keys = append(keys, metricdata.LabelKey{Key: view.OverflowKey.Name()})
	}
	m := &metricdata.Metric{
		Descriptor: metricdata.Descriptor{Name: v.Name, Description: v.Description, Unit: unit(v),
			Type: typ, LabelKeys: keys},
		TimeSeries: make([]*metricdata.TimeSeries, 0, len(rows)),
		Resource:   res,
	}
	for _, r := range rows {
		m.TimeSeries = append(m.TimeSeries, &metricdata.TimeSeries{
			LabelValues: labelValues(r, keys),
			Points:      []metricdata.Point{point(r.Data, typ, now)},
			StartTime:   r.Data.StartTime(),
		})
	}
	return m
}

func isOverflow(r *view.Row) bool { return r.IsOverflow() }

// labelValues gives a row's value of each key, absent where the row has
// none. Both lists are sorted by key name but for the overflow key, last,
// which only the overflow row has ("true"; its view keys, which
// RetrieveData sets to view.OverflowValue, are absent here).
func labelValues(r *view.Row, keys []metricdata.LabelKey) []metricdata.LabelValue {
	out := make([]metricdata.LabelValue, len(keys))
	if r.IsOverflow() {
		out[len(out)-1] = metricdata.NewLabelValue("true")
		return out
	}
	for _, t := range r.Tags {
		if i := slices.IndexFunc(keys, func(k metricdata.LabelKey) bool { return k.Key == t.Key.Name() }); i >= 0 {
			out[i] = metricdata.NewLabelValue(t.Value)
		}
	}
	return out
}

func point(d view.AggregationData, typ metricdata.Type, now time.Time) metricdata.Point {
	switch d := d.(type) {
	case *view.CountData:
		return metricdata.NewInt64Point(now, d.Value)
	case *view.SumData:
		if typ == metricdata.TypeCumulativeInt64 || typ == metricdata.TypeGaugeInt64 {
			return metricdata.NewInt64Point(now, int64(d.Value))
		}
		return metricdata.NewFloat64Point(now, d.Value)
	case *view.LastValueData:
		if typ == metricdata.TypeGaugeInt64 {
			return metricdata.NewInt64Point(now, int64(d.Value))
		}
		return metricdata.NewFloat64Point(now, d.Value)
	case *view.DistributionData:
		buckets := make([]metricdata.Bucket, len(d.CountPerBucket))
		for i, c := range d.CountPerBucket {
			buckets[i].Count = c
			if i < len(d.ExemplarsPerBucket) {
				buckets[i].Exemplar = exemplar(d.ExemplarsPerBucket[i])
			}
		}
		return metricdata.NewDistributionPoint(now, &metricdata.Distribution{
			Count:                 d.Count,
			Sum:                   d.Sum(),
			SumOfSquaredDeviation: d.SumOfSquaredDev,
			BucketOptions:         &metricdata.BucketOptions{Bounds: d.Bounds()},
			Buckets:               buckets,
		})
	case *view.SummaryData:
		return summaryPoint(d, now)
	case *view.ExponentialDistributionData:
		// The row's own buckets, at its own scale (a point carries its
		// bounds).
		snap := snapshotOf(d)
		var l exphist.Layout
		l.Reset(snap)
		counts := l.Counts(nil, snap)
		buckets := make([]metricdata.Bucket, len(counts))
		for i, c := range counts {
			buckets[i].Count = c
		}
		return metricdata.NewDistributionPoint(now, &metricdata.Distribution{
			Count:         d.Count,
			Sum:           d.Sum,
			BucketOptions: &metricdata.BucketOptions{Bounds: l.Bounds},
			Buckets:       buckets,
		})
	}
	return metricdata.Point{Time: now}
}

// exemplar is e as OpenCensus's type, attachments unchanged (the same
// map); nil for nil.
func exemplar(e *view.Exemplar) *metricdata.Exemplar {
	if e == nil {
		return nil
	}
	return &metricdata.Exemplar{Value: e.Value, Timestamp: e.Timestamp, Attachments: e.Attachments}
}
