package otel_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	zotel "github.com/zerostat/zerostat/otel"
	"github.com/zerostat/zerostat/view"
)

// Instruments of the OTel API record into zerostat views, which every
// zerostat exporter reads.
func ExampleMeterProvider() {
	ctx := context.Background()
	mp := zotel.NewMeterProvider()
	defer mp.Shutdown(ctx)
	meter := mp.Meter("shop")

	orders, _ := meter.Int64Counter("shop.orders", metric.WithDescription("Orders placed"))
	latency, _ := meter.Float64Histogram("shop.checkout.duration", metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.1, 0.5, 1))

	// The fastest form: an attribute set and option slice built once.
	eu := []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("region", "eu")))}
	orders.Add(ctx, 2, eu...)
	orders.Add(ctx, 1, metric.WithAttributes(attribute.String("region", "us")))
	for _, s := range []float64{0.1, 0.3, 2} {
		latency.Record(ctx, s)
	}

	rows, _ := view.RetrieveData("shop.orders")
	for _, r := range rows {
		fmt.Println(r.Tags, r.Data.(*view.SumData).Value)
	}
	rows, _ = view.RetrieveData("shop.checkout.duration")
	d := rows[0].Data.(*view.DistributionData)
	fmt.Println(d.Count, d.Min, d.Max, d.CountPerBucket)
	// Output:
	// [{region eu}] 2
	// [{region us}] 1
	// 3 0.1 2 [1 1 0 1]
}

// Every attribute set is a point of its own, as in the OTel SDK: a set
// with a key the instrument's view did not group by yet adds the key.
func ExampleMeterProvider_attributeKeys() {
	ctx := context.Background()
	mp := zotel.NewMeterProvider()
	defer mp.Shutdown(ctx)
	jobs, _ := mp.Meter("worker").Int64Counter("worker.jobs")

	jobs.Add(ctx, 1, metric.WithAttributes(attribute.String("queue", "mail")))
	// A key the first measurement did not have: a point of its own.
	jobs.Add(ctx, 1, metric.WithAttributes(attribute.String("queue", "mail"), attribute.Bool("retry", true)))
	jobs.Add(ctx, 1, metric.WithAttributes(attribute.String("queue", "mail")))

	rows, _ := view.RetrieveData("worker.jobs")
	for _, r := range rows {
		fmt.Println(r.Tags, r.Data.(*view.SumData).Value)
	}
	// Output:
	// [{queue mail}] 2
	// [{queue mail} {retry true}] 1
}

// A histogram measurement made in a sampled span is kept as its bucket's
// exemplar (the trace_based filter, the default); exporters write it
// with the span's trace and span ids (OpenMetrics, OTLP, remote write).
// WithExemplarFilter(ExemplarsAlwaysOn) would keep the others too.
func ExampleWithExemplarFilter() {
	mp := zotel.NewMeterProvider(zotel.WithExemplarFilter(zotel.ExemplarsTraceBased))
	defer mp.Shutdown(context.Background())
	latency, _ := mp.Meter("shop").Float64Histogram("shop.pay.duration", metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.1, 1))

	sampled := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 15: 1}, SpanID: trace.SpanID{0xf0, 7: 1}, TraceFlags: trace.FlagsSampled}))
	latency.Record(sampled, 0.05)              // kept: le=0.1
	latency.Record(context.Background(), 0.5)  // no span: not kept
	latency.Record(sampled, 0.08)              // kept, replaces 0.05
	latency.Record(context.Background(), 0.09) // not kept: 0.08 stays

	rows, _ := view.RetrieveData("shop.pay.duration")
	for i, e := range rows[0].Data.(*view.DistributionData).ExemplarsPerBucket {
		if e != nil {
			fmt.Println("bucket", i, "exemplar", e.Value)
		}
	}
	// Output:
	// bucket 0 exemplar 0.08
}
