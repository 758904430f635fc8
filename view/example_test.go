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
