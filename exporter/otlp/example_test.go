package otlp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func Example() {
	route := tag.MustNewKey("route")
	latency := stats.Float64("example/latency", "Request latency", stats.UnitMilliseconds)
	v := &view.View{Measure: latency, Aggregation: view.Distribution(10, 100, 1000), TagKeys: []tag.Key{route}}
	if err := view.Register(v); err != nil {
		panic(err)
	}
	defer view.Unregister(v)
	ctx, _ := tag.New(context.Background(), tag.Upsert(route, "/users"))
	stats.Record(ctx, latency.M(42))

	// A stand-in for an OpenTelemetry Collector's OTLP/HTTP receiver.
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Println(r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Content-Encoding"), len(body) > 0)
	}))
	defer collector.Close()

	e, err := otlp.New(otlp.Options{
		Endpoint:    collector.URL,
		Compression: otlp.Gzip,
		Resource:    exporter.Resource{ServiceName: "example"},
	})
	if err != nil {
		panic(err)
	}
	e.Start()
	if err := e.Stop(context.Background()); err != nil { // the final snapshot
		panic(err)
	}
	st := e.Stats()
	fmt.Println("points:", st.Points, "failures:", st.Failures)
	// Output:
	// POST /v1/metrics application/x-protobuf gzip true
	// points: 1 failures: 0
}
