// Command quickstart is the README's "Use" example as a program that
// compiles and runs: it registers a view, records one latency and exports
// it to a receiver before exiting. Start the receiver first:
//
//	go run ./cmd/zerostat receive                # listens on 127.0.0.1:4319
//	go run ./examples/quickstart                 # or -to another receiver's URL
//
// With no receiver it prints the export's error and exits within about
// 2 s (Stop's timeout). The test keeps the README's snippet and this file
// the same.
package main

import (
	"context"
	"flag"
	"log"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var (
	keyRoute = tag.MustNewKey("http.route")
	latency  = stats.Float64("http/latency", "Request latency", stats.UnitMilliseconds)
	to       = flag.String("to", "http://127.0.0.1:4319/", "`URL` of a running zerostat receive")
)

func main() {
	flag.Parse()
	err := view.Register(&view.View{Measure: latency, TagKeys: []tag.Key{keyRoute},
		Aggregation: view.Distribution(1, 5, 10, 50, 100, 500)})
	if err != nil {
		log.Fatal(err)
	}
	users, err := tag.New(context.Background(), tag.Upsert(keyRoute, "/users")) // once per route
	if err != nil {
		log.Fatal(err)
	}
	exp, err := exporter.New(&exporter.HTTPSink{URL: *to}, exporter.Options{})
	if err != nil {
		log.Fatal(err)
	}
	exp.Start()
	defer func() { // exports a final snapshot, waiting at most 2 s for the receiver
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := exp.Stop(ctx); err != nil {
			log.Print(err)
		}
	}()

	stats.Record(users, latency.M(4.2)) // 0 allocs, ~20-40 ns
}
