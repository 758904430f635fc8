package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerostat/zerostat/debugstats"
	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/exporter/receiver"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// The demo's instrumentation, as a service would declare it.
var (
	keyRoute  = tag.MustNewKey("http.route")
	keyMethod = tag.MustNewKey("http.method")
	keyStatus = tag.MustNewKey("http.status")

	mLatency  = stats.Float64("demo/latency", "Request latency", stats.UnitMilliseconds)
	mBytes    = stats.Int64("demo/response_bytes", "Response body size", stats.UnitBytes)
	mInFlight = stats.Int64("demo/in_flight", "Requests being served", stats.UnitDimensionless)

	demoViews = []*view.View{
		{Name: "demo/requests", Description: "Requests served", Measure: mLatency,
			Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, keyMethod, keyStatus}},
		{Name: "demo/latency", Measure: mLatency,
			Aggregation: view.Distribution(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000), TagKeys: []tag.Key{keyRoute}},
		{Name: "demo/response_bytes", Measure: mBytes, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		{Name: "demo/in_flight", Measure: mInFlight, Aggregation: view.LastValue()},
	}
)

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 5*time.Second, "how long to send load (the demo then stops by itself; Ctrl-C stops it earlier)")
	period := fs.Duration("period", time.Second, "export period")
	workers := fs.Int("workers", 4, "load generator goroutines")
	seed := fs.Uint64("seed", 1, "random seed of the load generator")
	listen := fs.String("listen", "127.0.0.1:0", "address of the sample service, /metrics and /debug/stats")
	exportTo := fs.String("export-to", "", "URL of a `zerostat receive` to export to (default: the demo's own receiver)")
	format := fs.String("format", "table", "how the demo's receiver prints snapshots: table or json")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *duration <= 0 || *period <= 0 || *workers <= 0 {
		fmt.Fprintln(stderr, "zerostat demo: -duration, -period and -workers must be positive")
		return 2
	}
	pr, err := newPrinter(stdout, *format)
	if err != nil {
		fmt.Fprintln(stderr, "zerostat demo:", err)
		return 2
	}
	if err := view.Register(demoViews...); err != nil {
		fmt.Fprintln(stderr, "zerostat demo:", err)
		return 1
	}
	defer view.Unregister(demoViews...)
	svc, err := newService()
	if err != nil {
		fmt.Fprintln(stderr, "zerostat demo:", err)
		return 1
	}

	// One listener: the instrumented service at /, and the demo's own
	// endpoints beside it.
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(stderr, "zerostat demo:", err)
		return 1
	}
	base := "http://" + ln.Addr().String()
	url := base + "/receive"
	if *exportTo != "" {
		url = *exportTo
	}
	exp, err := exporter.New(&exporter.HTTPSink{URL: url}, exporter.Options{
		Interval: *period,
		Resource: exporter.Resource{ServiceName: "zerostat-demo"},
		OnError:  func(err error) { fmt.Fprintln(stderr, "zerostat demo: export:", err) },
	})
	if err != nil {
		ln.Close()
		fmt.Fprintln(stderr, "zerostat demo:", err)
		return 1
	}
	began := time.Now()
	var sent atomic.Int64
	var last lastSnapshot
	mux := http.NewServeMux()
	mux.Handle("/", svc)
	mux.Handle("GET /metrics", prometheus.NewHandler(prometheus.Options{}))
	mux.Handle("GET /snapshot", exporter.NewSnapshotHandler(exporter.SnapshotOptions{}))
	mux.Handle("/debug/stats", debugstats.NewHandler(debugstats.Options{Title: "zerostat demo",
		ExporterStats: []debugstats.NamedStats{{Name: "msgpack over HTTP", Stats: exp.Stats}}}))
	mux.Handle("POST /receive", &receiver.Handler{OnPayload: func(p *wire.Payload) {
		last.add(p)
		n := sent.Load()
		el := time.Since(began)
		fmt.Fprintf(stdout, "\n[%5.1fs/%v] %d requests answered (%.0f/s)\n", el.Seconds(), *duration, n, float64(n)/el.Seconds())
		if err := pr.print(p); err != nil {
			fmt.Fprintln(stderr, "zerostat demo:", err)
		}
	}})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	exp.Start()
	fmt.Fprintf(stdout, "zerostat demo: service on %s/ (%d load generators for %v), exporting every %v to %s\n",
		base, *workers, *duration, *period, url)
	fmt.Fprintf(stdout, "zerostat demo: live stats page at %s/debug/stats, Prometheus metrics at %s/metrics, the snapshot at %s/snapshot\n", base, base, base)

	stop := make(chan struct{})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *workers}}
	var wg sync.WaitGroup
	for w := range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent.Add(loadGenerator(stop, client, base, rand.New(rand.NewPCG(*seed, uint64(w)))))
		}()
	}
	select {
	case <-time.After(*duration):
	case <-ctx.Done():
		fmt.Fprintln(stdout, "\nzerostat demo: interrupted, stopping")
	}
	close(stop)
	wg.Wait()
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	if err := exp.Stop(sctx); err != nil { // the final snapshot
		fmt.Fprintln(stderr, "zerostat demo: final export:", err)
		return 1
	}

	counted, err := totalRequests()
	if err != nil {
		fmt.Fprintln(stderr, "zerostat demo:", err)
		return 1
	}
	st := exp.Stats()
	ns, allocs := measureRecord()
	fmt.Fprintf(stdout, "\nsummary: %d requests answered, %d counted by demo/requests", sent.Load(), counted)
	received := int64(-1)
	if *exportTo == "" {
		received = last.requests()
		fmt.Fprintf(stdout, ", %d in the last snapshot received", received)
	}
	fmt.Fprintf(stdout, "\n         %d exports, %d payloads, %d bytes sent, %d failed; record cost %.1f ns/op, %d allocs/op\n",
		st.Exports, st.Sent, st.Bytes, st.Failures, ns, allocs)
	if counted != sent.Load() || (received >= 0 && received != counted) {
		fmt.Fprintln(stderr, "zerostat demo: the totals do not match: something was lost or invented")
		return 1
	}
	return 0
}

// lastSnapshot keeps the payloads of the most recent export cycle.
type lastSnapshot struct {
	mu    sync.Mutex
	parts []*wire.Payload
}

func (l *lastSnapshot) add(p *wire.Payload) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.parts) > 0 && l.parts[0].Sequence != p.Sequence {
		l.parts = l.parts[:0]
	}
	l.parts = append(l.parts, p)
}

// requests sums demo/requests over the last cycle's payloads.
func (l *lastSnapshot) requests() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, p := range l.parts {
		for _, v := range p.Views {
			if v.Name == "demo/requests" {
				for _, r := range v.Rows {
					n += int64(r.Count)
				}
			}
		}
	}
	return n
}

func totalRequests() (int64, error) {
	rows, err := view.RetrieveData("demo/requests")
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range rows {
		d, ok := r.Data.(*view.CountData)
		if !ok {
			return 0, errors.New("demo/requests: not count data")
		}
		n += d.Value
	}
	return n, nil
}

// measureRecord times the demo's record call in-process.
func measureRecord() (float64, int64) {
	ctx, _ := tag.New(context.Background(),
		tag.Upsert(keyRoute, "/bench"), tag.Upsert(keyMethod, "GET"), tag.Upsert(keyStatus, "200"))
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			stats.Record(ctx, mLatency.M(3))
		}
	})
	return float64(res.T.Nanoseconds()) / float64(res.N), res.AllocsPerOp()
}
