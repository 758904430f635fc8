package otel_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

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
