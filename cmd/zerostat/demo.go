package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerostat/zerostat/debugstats"
	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/exporter/receiver"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/plugin/runmetrics"
	"github.com/zerostat/zerostat/plugin/zhttp"
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

const demoAbout = `Starts an instrumented sample HTTP service on 127.0.0.1 and a load
generator that calls it for -duration, printing every second how many
requests have been answered. A snapshot of the views is exported every
-period over HTTP to the demo's own receiver, which prints it as a table
(or, with -export-to, to another receiver). The demo ends with a summary
that checks the totals exported against the requests answered.`

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("demo", "demo [flags]", demoAbout)
	duration := fs.Duration("duration", 5*time.Second, "how long to send load; the demo then stops by itself (Ctrl-C stops it earlier)")
	period := fs.Duration("period", time.Second, "how often a snapshot is exported")
	workers := fs.Int("workers", 4, "load generator goroutines")
	seed := fs.Uint64("seed", 1, "random seed of the load generator")
	listen := fs.String("listen", "127.0.0.1:0", "`address` of the sample service, /metrics, /snapshot and /debug/stats")
	exportTo := fs.String("export-to", "", "`URL` of a receiver to export to, such as one started by 'zerostat receive' (default: the demo's own receiver)")
	format := fs.String("format", "table", "how the demo's receiver prints snapshots: table or json (JSON lines on stdout, progress on stderr)")
	wireVersion := fs.Int("wire-version", 2, "wire format `version` of the exported payloads: 2 (rows as columns, the compact one) or 1 (for a receiver of a release before 2026-12-01)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(fs, stderr, "unexpected argument %q", fs.Arg(0))
	}
	if *duration <= 0 || *period <= 0 || *workers <= 0 {
		return usageError(fs, stderr, "-duration, -period and -workers must be positive")
	}
	if *wireVersion != 1 && *wireVersion != 2 {
		return usageError(fs, stderr, "-wire-version %d: want 1 or 2", *wireVersion)
	}
	if *exportTo != "" {
		if err := checkExportURL(*exportTo); err != nil {
			return usageError(fs, stderr, "-export-to: %v", err)
		}
	}
	pr, err := newPrinter(stdout, *format)
	if err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	// Progress and the summary go beside the tables, or to stderr when
	// stdout carries JSON lines.
	info := stdout
	if *format == "json" {
		info = stderr
	}
	if err := view.Register(demoViews...); err != nil {
		fmt.Fprintln(stderr, "zerostat demo:", err)
		return 1
	}
	defer view.Unregister(demoViews...)
	// The plug-ins a service adds on day one: the HTTP server and client
	// views (ochttp's names and OpenTelemetry's), the runtime and process
	// metrics, and a callback counter.
	if err := view.Register(pluginViews()...); err != nil {
		fmt.Fprintln(stderr, "zerostat demo:", err)
		return 1
	}
	defer view.Unregister(pluginViews()...)
	if err := runmetrics.Enable(runmetrics.Options{}); err != nil {
		fmt.Fprintln(stderr, "zerostat demo:", err)
		return 1
	}
	defer runmetrics.Disable()
	var answered atomic.Int64 // the load generator's count of answers
	answeredCounter, err := metric.NewCounter("demo/answered", "Requests answered, as the load generator counts them (a callback counter)",
		stats.UnitDimensionless, nil, func(o *metric.Observer) { o.Observe(float64(answered.Load())) })
	if err != nil {
		fmt.Fprintln(stderr, "zerostat demo:", err)
		return 1
	}
	defer answeredCounter.Unregister()
	pr.show = showInTable
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
	target := base + "/receive"
	if *exportTo != "" {
		target = *exportTo
	}
	// The exporter and /snapshot describe the process alike.
	resource := exporter.Resource{ServiceName: "zerostat-demo"}
	exp, err := exporter.New(&exporter.HTTPSink{URL: target}, exporter.Options{
		Interval:    *period,
		Resource:    resource,
		WireVersion: *wireVersion,
		// Once when exports start failing, once when they recover (not
		// once per failure, and not twice: no OnError as well).
		Logger: slog.New(slog.NewTextHandler(printerWriter{pr, stderr}, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{} // the progress lines say when
				}
				return a
			}})),
	})
	if err != nil {
		ln.Close()
		fmt.Fprintln(stderr, "zerostat demo:", err)
		return 1
	}
	var last lastSnapshot
	mux := http.NewServeMux()
	mux.Handle("/", zhttp.NewHandler(svc, zhttp.Options{})) // the route: svc's ServeMux pattern
	mux.Handle("GET /metrics", prometheus.NewHandler(prometheus.Options{}))
	mux.Handle("GET /snapshot", exporter.NewSnapshotHandler(exporter.SnapshotOptions{Resource: resource}))
	mux.Handle("/debug/stats", debugstats.NewHandler(debugstats.Options{Title: "zerostat demo",
		ExporterStats: []debugstats.NamedStats{{Name: "msgpack over HTTP", Stats: exp.Stats}}}))
	mux.Handle("POST /receive", &receiver.Handler{OnPayload: func(p *wire.Payload) {
		last.add(p)
		if err := pr.print(p); err != nil {
			fmt.Fprintln(stderr, "zerostat demo:", err)
		}
	}})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	exp.Start()
	// Lines of at most 100 columns, as the tables (an -export-to URL aside).
	pr.printf(info, "zerostat demo: service on %s/ (%d load generators for %v),\n"+
		"               exporting a snapshot every %v to %s\n", base, *workers, *duration, *period, target)
	pr.printf(info, "zerostat demo: live stats page at %s/debug/stats,\n"+
		"               Prometheus metrics at %s/metrics,\n"+
		"               the snapshot at %s/snapshot\n", base, base, base)
	if *exportTo == "" && *format == "table" {
		pr.printf(info, "zerostat demo: each table is snapshot N, the N-th export: the totals since the start\n")
	}

	// The load, counted as each answer arrives; progress every second.
	began := time.Now()
	progress := func(suffix string) {
		el := time.Since(began)
		n := answered.Load()
		pr.printf(info, "\n[%5.1fs/%v] %d requests answered (%.0f/s)%s\n", el.Seconds(), *duration, n, float64(n)/max(el.Seconds(), 1e-3), suffix)
	}
	stop := make(chan struct{})
	client := &http.Client{Transport: zhttp.NewTransport(&http.Transport{MaxIdleConnsPerHost: *workers})}
	var wg sync.WaitGroup
	for w := range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loadGenerator(stop, client, base, rand.New(rand.NewPCG(*seed, uint64(w))), &answered)
		}()
	}
	end := time.NewTimer(*duration)
	tick := time.NewTicker(time.Second)
	interrupted := false
wait:
	for {
		select {
		case <-tick.C:
			if time.Since(began) >= *duration {
				break wait // the end: its own line follows
			}
			progress("")
		case <-end.C:
			break wait
		case <-ctx.Done():
			interrupted = true
			break wait
		}
	}
	tick.Stop()
	end.Stop()
	close(stop)
	wg.Wait()
	if interrupted {
		progress("; interrupted, stopping")
	} else {
		progress("; load done")
	}
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	code := 0
	if err := exp.Stop(sctx); err != nil { // the final snapshot
		fmt.Fprintln(stderr, "zerostat demo: final export:", err)
		code = 1
	}

	counted, err := totalRequests()
	if err != nil {
		fmt.Fprintln(stderr, "zerostat demo:", err)
		return 1
	}
	st := exp.Stats()
	ns, allocs := measureRecord()
	sum := fmt.Sprintf("\nsummary: %d requests answered, %d counted by demo/requests", answered.Load(), counted)
	received, receivedAnswered := int64(-1), int64(-1)
	if *exportTo == "" {
		received, receivedAnswered = last.requests(), last.answered()
		sum += fmt.Sprintf(",\n         %d in the last snapshot received (callback counter demo/answered: %d)", received, receivedAnswered)
	}
	pr.printf(info, "%s\n         %d exports, %d payloads, %d bytes sent, %d failed\n         record cost %.1f ns/op, %d allocs/op\n",
		sum, st.Exports, st.Sent, st.Bytes, st.Failures, ns, allocs)
	if err := answeredCounter.Err(); err != nil {
		// A callback that timed out (a stalled machine) is reported, not
		// taken for lost data.
		fmt.Fprintln(stderr, "zerostat demo: callback counter:", err)
		receivedAnswered = counted
	}
	if counted != answered.Load() || (code == 0 && received >= 0 && (received != counted || receivedAnswered != counted)) {
		fmt.Fprintln(stderr, "zerostat demo: the totals do not match: something was lost or invented")
		return 1
	}
	return code
}

// printerWriter writes through the printer's lock, so that log lines do
// not interleave with the tables.
type printerWriter struct {
	p *printer
	w io.Writer
}

func (w printerWriter) Write(b []byte) (int, error) {
	w.p.printf(w.w, "%s", b)
	return len(b), nil
}

// checkExportURL refuses, before the demo starts, a URL HTTPSink could
// never send to: one that does not parse, or lacks an http or https
// scheme or a host.
func checkExportURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q is not an http:// or https:// URL (want one such as http://127.0.0.1:4319/)", s)
	case u.Host == "":
		return fmt.Errorf("%q has no host (want one such as http://127.0.0.1:4319/)", s)
	}
	return nil
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

// answered returns demo/answered (the callback counter) of the last
// cycle's payloads, -1 when absent.
func (l *lastSnapshot) answered() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.parts {
		for _, v := range p.Views {
			if v.Name == "demo/answered" && len(v.Rows) == 1 {
				return int64(v.Rows[0].Sum)
			}
		}
	}
	return -1
}

// pluginViews are the plug-ins' views the demo registers.
func pluginViews() []*view.View {
	vs := append([]*view.View{}, zhttp.DefaultServerViews...)
	vs = append(vs, zhttp.OTelServerViews...)
	return append(vs, zhttp.ClientCompletedCount, zhttp.OTelClientDurationView)
}

// showInTable picks the views the demo's tables print: its own, and one
// or two of each plug-in's. /metrics, /snapshot and /debug/stats show all.
func showInTable(name string) bool {
	switch name {
	case "http.server.request.duration", "opencensus.io/http/client/completed_count",
		"go_goroutines", "go_memstats_heap_alloc_bytes", "go_sched_latencies_seconds",
		"process_cpu_seconds", "process_resident_memory_bytes":
		return true
	}
	return strings.HasPrefix(name, "demo/")
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
