package exporter_test

import (
	"context"
	"fmt"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func Example() {
	route := tag.MustNewKey("route")
	bytesSent := stats.Int64("example/bytes_sent", "Bytes sent", stats.UnitBytes)
	v := &view.View{Measure: bytesSent, Aggregation: view.Sum(), TagKeys: []tag.Key{route}}
	if err := view.Register(v); err != nil {
		panic(err)
	}
	defer view.Unregister(v)
	ctx, _ := tag.New(context.Background(), tag.Upsert(route, "/users"))
	stats.Record(ctx, bytesSent.M(512))
	stats.Record(ctx, bytesSent.M(1024))

	// An in-process sink that decodes what it receives.
	sink := exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
		pl, err := wire.Decode(p.Data)
		if err != nil {
			return err
		}
		for _, v := range pl.Views {
			if v.Name == "example/bytes_sent" {
				fmt.Println(v.Name, v.Unit, v.Keys, v.Rows[0].Values, v.Rows[0].Sum)
			}
		}
		return nil
	})
	e, err := exporter.New(sink, exporter.Options{Resource: exporter.Resource{ServiceName: "example"}})
	if err != nil {
		panic(err)
	}
	e.Start()
	if err := e.Stop(context.Background()); err != nil { // the final snapshot
		panic(err)
	}
	// Output: example/bytes_sent By [route] [/users] 1536
}

// With delta temporality, EvictIdleAfter frees the series of tag values
// that stopped being recorded: here jobs that ran once. Each export prints
// the rows it carried and how many rows the view still holds.
func ExampleOptions_evictIdleAfter() {
	job := tag.MustNewKey("job")
	runs := stats.Int64("example/job_runs", "Job runs", stats.UnitDimensionless)
	v := &view.View{Measure: runs, Aggregation: view.Count(), TagKeys: []tag.Key{job}}
	if err := view.Register(v); err != nil {
		panic(err)
	}
	defer view.Unregister(v)
	sink := exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
		pl, err := wire.Decode(p.Data)
		if err != nil {
			return err
		}
		for _, pv := range pl.Views {
			if pv.Name == v.Name {
				for _, r := range pv.Rows {
					fmt.Print(r.Values[0], "+", r.Count, " ")
				}
			}
		}
		return nil
	})
	e, err := exporter.New(sink, exporter.Options{Temporality: exporter.Delta, EvictIdleAfter: 1})
	if err != nil {
		panic(err)
	}
	for i := range 5 {
		if i < 2 { // two jobs run in the first two intervals, then none
			ctx, _ := tag.New(context.Background(), tag.Upsert(job, fmt.Sprint("job-", i)))
			stats.Record(ctx, runs.M(1))
		}
		if err := e.Export(context.Background()); err != nil {
			panic(err)
		}
		rows, _ := view.RetrieveData(v.Name)
		fmt.Println("| held:", len(rows))
	}
	// Output:
	// job-0+1 | held: 1
	// job-1+1 | held: 2
	// | held: 1
	// | held: 0
	// | held: 0
}
