package benchmarks

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	zotel "github.com/zerostat/zerostat/otel"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// zotelSetup is otelSetup for zerostat's MeterProvider (package otel): a
// fresh provider whose views have a unique prefix, and a collect that
// reads them (view.RetrieveData) into the SDK's metricdata types, so the
// OTel scenarios check zerostat's totals with the SDK's code.
func zotelSetup(b *testing.B) (metric.Meter, func() metricdata.ResourceMetrics) {
	b.Helper()
	prefix := uniq("zotel") + "."
	mp := zotel.NewMeterProvider(zotel.WithViewPrefix(prefix))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return mp.Meter("bench"), func() metricdata.ResourceMetrics {
		var ms []metricdata.Metrics
		for _, v := range mp.Views() {
			rows, err := view.RetrieveData(v.Name)
			if err != nil {
				b.Fatalf("zerostat otel: RetrieveData(%q): %v", v.Name, err)
			}
			m := metricdata.Metrics{Name: strings.TrimPrefix(v.Name, prefix)}
			switch v.Aggregation.Type {
			case view.AggTypeSum:
				var s metricdata.Sum[int64]
				for _, r := range rows {
					s.DataPoints = append(s.DataPoints, metricdata.DataPoint[int64]{
						Attributes: attrsOf(r.Tags), Value: int64(r.Data.(*view.SumData).Value)})
				}
				m.Data = s
			case view.AggTypeDistribution:
				var h metricdata.Histogram[float64]
				for _, r := range rows {
					d := r.Data.(*view.DistributionData)
					p := metricdata.HistogramDataPoint[float64]{Attributes: attrsOf(r.Tags), Count: uint64(d.Count),
						Sum: d.Sum(), Bounds: d.Bounds(), StartTime: d.StartTime(), Time: time.Now()}
					for _, c := range d.CountPerBucket {
						p.BucketCounts = append(p.BucketCounts, uint64(c))
					}
					h.DataPoints = append(h.DataPoints, p)
				}
				m.Data = h
			}
			ms = append(ms, m)
		}
		return metricdata.ResourceMetrics{ScopeMetrics: []metricdata.ScopeMetrics{{Metrics: ms}}}
	}
}

func attrsOf(tags []tag.Tag) attribute.Set {
	kvs := make([]attribute.KeyValue, len(tags))
	for i, t := range tags {
		kvs[i] = attribute.String(t.Key.Name(), t.Value)
	}
	return attribute.NewSet(kvs...)
}
