package statsd_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/zerostat/zerostat/exporter/statsd"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// An exporter sends what changed since the last export: here a counter,
// a gauge and a distribution, to a UDP listener standing in for the
// agent. The distribution's two values below 10 are sent as one value
// weighed 2 (the series' min, inside that bucket), its three in [10, 100)
// as the bucket's middle weighed 3.
func Example() {
	agent, _ := net.ListenPacket("udp", "127.0.0.1:0")
	defer agent.Close()

	latency := stats.Float64("example/latency", "Request latency", stats.UnitMilliseconds)
	queued := stats.Int64("example/queued", "Jobs waiting", stats.UnitDimensionless)
	route := tag.MustNewKey("route")
	views := []*view.View{
		{Name: "example/requests", Measure: latency, Aggregation: view.Count(), TagKeys: []tag.Key{route}},
		{Name: "example/latency", Measure: latency, Aggregation: view.Distribution(10, 100), TagKeys: []tag.Key{route}},
		{Name: "example/queued", Measure: queued, Aggregation: view.LastValue()},
	}
	view.Register(views...)
	defer view.Unregister(views...)

	ctx, _ := tag.New(context.Background(), tag.Upsert(route, "/home"))
	for _, ms := range []float64{4, 6, 40, 60, 80} {
		stats.Record(ctx, latency.M(ms))
	}
	stats.Record(ctx, queued.M(3))

	e, _ := statsd.New(statsd.Options{Addr: agent.LocalAddr().String(), Namespace: "app"})
	e.Export(context.Background())
	defer e.Stop(context.Background())

	buf := make([]byte, 1500)
	agent.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _, _ := agent.ReadFrom(buf)
	lines := strings.Split(string(buf[:n]), "\n")
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// app.example_latency:4|d|@0.5|#route:/home
	// app.example_latency:55|d|@0.3333333333333333|#route:/home
	// app.example_queued:3|g
	// app.example_requests:5|c|#route:/home
}
