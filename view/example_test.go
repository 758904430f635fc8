package view_test

import (
	"context"
	"fmt"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func ExampleRetrieveData() {
	status := tag.MustNewKey("status")
	bytes := stats.Int64("example/bytes", "Bytes sent", stats.UnitBytes)
	v := &view.View{Measure: bytes, Aggregation: view.Sum(), TagKeys: []tag.Key{status}}
	if err := view.Register(v); err != nil {
		panic(err)
	}
	defer view.Unregister(v)

	ok, _ := tag.New(context.Background(), tag.Upsert(status, "200"))
	bad, _ := tag.New(context.Background(), tag.Upsert(status, "500"))
	stats.Record(ok, bytes.M(1024))
	stats.Record(bad, bytes.M(12))
	stats.Record(ok, bytes.M(2048))

	rows, _ := view.RetrieveData("example/bytes")
	for _, r := range rows { // sorted by tag values
		fmt.Println(r.Tags, r.Data.(*view.SumData).Value)
	}
	// Output:
	// [{status 200}] 3072
	// [{status 500}] 12
}

func ExampleDistribution() {
	// Bounds are sorted and zero dropped at registration, as in OpenCensus:
	// buckets (-Inf,1) [1,5) [5,+Inf).
	agg := view.Distribution(5, 0, 1)
	v := &view.View{Name: "example/dist", Measure: stats.Float64("example/dist", "", ""), Aggregation: agg}
	if err := view.Register(v); err != nil {
		panic(err)
	}
	defer view.Unregister(v)
	fmt.Println(agg.Buckets)
	// Output: [1 5]
}

// A meter of its own per tenant: its views see only what is recorded into
// it.
func ExampleNewMeter() {
	queries := stats.Int64("example/queries", "Queries", stats.UnitDimensionless)
	tenantA := view.NewMeter()
	v := &view.View{Measure: queries, Aggregation: view.Count()}
	if err := tenantA.Register(v); err != nil {
		panic(err)
	}
	tenantA.Start()
	defer tenantA.Stop()

	ctx := context.Background()
	stats.RecordWithOptions(ctx, stats.WithRecorder(tenantA), stats.WithMeasurements(queries.M(1), queries.M(1)))
	stats.Record(ctx, queries.M(1)) // the default meter: no view

	rows, _ := tenantA.RetrieveData("example/queries")
	fmt.Println(rows[0].Data.(*view.CountData).Value)
	fmt.Println(view.Find("example/queries") == nil)
	// Output:
	// 2
	// true
}

// The latest value of each bucket recorded with attachments is kept as
// the bucket's exemplar.
func ExampleDistributionData_exemplarsPerBucket() {
	latency := stats.Float64("example/latency", "", stats.UnitMilliseconds)
	v := &view.View{Measure: latency, Aggregation: view.Distribution(100)}
	if err := view.Register(v); err != nil {
		panic(err)
	}
	defer view.Unregister(v)
	ctx := context.Background()
	stats.RecordWithOptions(ctx, stats.WithMeasurements(latency.M(12)),
		stats.WithAttachments(map[string]interface{}{"request": "r-1"}))
	stats.RecordWithOptions(ctx, stats.WithMeasurements(latency.M(250)),
		stats.WithAttachments(map[string]interface{}{"request": "r-2"}))

	rows, _ := view.RetrieveData("example/latency")
	for i, e := range rows[0].Data.(*view.DistributionData).ExemplarsPerBucket {
		fmt.Println(i, e.Value, e.Attachments["request"])
	}
	// Output:
	// 0 12 r-1
	// 1 250 r-2
}
