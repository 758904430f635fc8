package stats_test

import (
	"context"
	"fmt"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func ExampleRecord() {
	route := tag.MustNewKey("route")
	latency := stats.Float64("example/latency", "Request latency", stats.UnitMilliseconds)
	v := &view.View{Measure: latency, Aggregation: view.Distribution(10, 100), TagKeys: []tag.Key{route}}
	if err := view.Register(v); err != nil {
		panic(err)
	}
	defer view.Unregister(v)

	// Build the tagged context once per route; recording with it is the
	// allocation-free fast path.
	ctx, _ := tag.New(context.Background(), tag.Upsert(route, "/users"))
	for _, ms := range []float64{4, 12, 250} {
		stats.Record(ctx, latency.M(ms))
	}

	rows, _ := view.RetrieveData("example/latency")
	d := rows[0].Data.(*view.DistributionData)
	fmt.Println(rows[0].Tags, d.Count, d.CountPerBucket, d.Min, d.Max)
	// Output: [{route /users}] 3 [1 1 1] 4 250
}

func ExampleRecordWithTags() {
	method := tag.MustNewKey("method")
	requests := stats.Int64("example/requests", "Requests", stats.UnitDimensionless)
	v := &view.View{Measure: requests, Aggregation: view.Count(), TagKeys: []tag.Key{method}}
	if err := view.Register(v); err != nil {
		panic(err)
	}
	defer view.Unregister(v)

	get := []tag.Mutator{tag.Upsert(method, "GET")} // build mutators once
	for range 3 {
		if err := stats.RecordWithTags(context.Background(), get, requests.M(1)); err != nil {
			panic(err)
		}
	}
	rows, _ := view.RetrieveData("example/requests")
	fmt.Println(rows[0].Tags, rows[0].Data.(*view.CountData).Value)
	// Output: [{method GET}] 3
}

func ExampleInt64Measure_Bind() {
	route := tag.MustNewKey("route")
	requests := stats.Int64("example/requests", "Requests", stats.UnitDimensionless)
	v := &view.View{Measure: requests, Aggregation: view.Count(), TagKeys: []tag.Key{route}}
	if err := view.Register(v); err != nil {
		panic(err)
	}
	defer view.Unregister(v)

	// Bind once per known tag set; each Record is then a few ns.
	ctx, _ := tag.New(context.Background(), tag.Upsert(route, "/users"))
	users := requests.Bind(tag.FromContext(ctx))
	for range 3 {
		users.Record(1)
	}

	rows, _ := view.RetrieveData("example/requests")
	fmt.Println(rows[0].Tags, rows[0].Data.(*view.CountData).Value)
	// Output: [{route /users}] 3
}
