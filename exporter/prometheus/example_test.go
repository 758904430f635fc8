package prometheus_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func Example() {
	route := tag.MustNewKey("route")
	latency := stats.Float64("example/latency", "Request latency", stats.UnitMilliseconds)
	views := []*view.View{
		{Name: "example/requests", Measure: latency, Description: "Requests served", Aggregation: view.Count(), TagKeys: []tag.Key{route}},
		{Name: "example/latency", Measure: latency, Aggregation: view.Distribution(10, 100), TagKeys: []tag.Key{route}},
	}
	if err := view.Register(views...); err != nil {
		panic(err)
	}
	defer view.Unregister(views...)
	ctx, _ := tag.New(context.Background(), tag.Upsert(route, "/users"))
	stats.Record(ctx, latency.M(4))
	stats.Record(ctx, latency.M(40))

	srv := httptest.NewServer(prometheus.NewHandler(prometheus.Options{Namespace: "app"}))
	defer srv.Close()
	resp, err := http.Get(srv.URL) // no Accept header: the text format 0.0.4
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.Contains(line, "app_example_") { // other views may be registered
			fmt.Println(line)
		}
	}
	// Output:
	// # HELP app_example_latency_milliseconds Request latency
	// # TYPE app_example_latency_milliseconds histogram
	// app_example_latency_milliseconds_bucket{route="/users",le="10.0"} 1
	// app_example_latency_milliseconds_bucket{route="/users",le="100.0"} 2
	// app_example_latency_milliseconds_bucket{route="/users",le="+Inf"} 2
	// app_example_latency_milliseconds_sum{route="/users"} 44
	// app_example_latency_milliseconds_count{route="/users"} 2
	// # HELP app_example_requests_total Requests served
	// # TYPE app_example_requests_total counter
	// app_example_requests_total{route="/users"} 2
}
