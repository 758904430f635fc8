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
