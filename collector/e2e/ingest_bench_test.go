package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// ingestSeries is the size of the snapshot BenchmarkCollectorIngest sends.
const ingestSeries = 10000

// registerSeries registers four views (Count, Sum, LastValue, and a
// 10-bound Distribution, each over route and code tags) and records into
// n/4 series of each, with varied values.
func registerSeries(b testing.TB, n int) {
	kRoute, kCode := tag.MustNewKey("route"), tag.MustNewKey("code")
	lat := stats.Float64("ingest/latency", "Latency", stats.UnitMilliseconds)
	size := stats.Int64("ingest/size", "Size", stats.UnitBytes)
	keys := []tag.Key{kRoute, kCode}
	views := []*view.View{
		{Name: "ingest/requests", Description: "Requests", Measure: lat, TagKeys: keys, Aggregation: view.Count()},
		{Name: "ingest/latency", Description: "Latency", Measure: lat, TagKeys: keys,
			Aggregation: view.Distribution(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)},
		{Name: "ingest/bytes", Description: "Bytes", Measure: size, TagKeys: keys, Aggregation: view.Sum()},
		{Name: "ingest/last_size", Description: "Last size", Measure: size, TagKeys: keys, Aggregation: view.LastValue()},
	}
	if err := view.Register(views...); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { view.Unregister(views...) })
	codes := []string{"200", "201", "204", "301", "400", "404", "429", "500", "503", "504"}
	for i := range n / len(views) {
		ctx, err := tag.New(context.Background(),
			tag.Upsert(kRoute, "/api/v1/resource"+strconv.Itoa(i/len(codes))), tag.Upsert(kCode, codes[i%len(codes)]))
		if err != nil {
			b.Fatal(err)
		}
		for r := range 3 {
			stats.Record(ctx, lat.M(float64((i*37+r*11)%1500)+0.5), size.M(int64(100+i*7+r)))
		}
	}
}

// ingestBodies returns the snapshot of the registered views as one
// msgpack payload and one OTLP request, each plain and gzipped (level
// gzip.BestSpeed, both exporters' default).
func ingestBodies(b testing.TB) map[string][]byte {
	var msg []byte
	e, err := exporter.New(exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
		if msg != nil {
			return fmt.Errorf("the snapshot was split")
		}
		msg = bytes.Clone(p.Data)
		return nil
	}), exporter.Options{MaxPayloadBytes: 64 << 20, Resource: exporter.Resource{ServiceName: "ingest"}})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		b.Fatal(err)
	}
	enc, err := otlp.NewEncoder(otlp.Cumulative, exporter.Resource{ServiceName: "ingest"})
	if err != nil {
		b.Fatal(err)
	}
	pb := bytes.Clone(enc.Encode(time.Now()))
	if enc.Points() != ingestSeries {
		b.Fatalf("OTLP request of %d points; want %d", enc.Points(), ingestSeries)
	}
	gz := func(p []byte) []byte {
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		w.Write(p)
		w.Close()
		return buf.Bytes()
	}
	return map[string][]byte{"msgpack/plain": msg, "msgpack/gzip": gz(msg), "otlp/plain": pb, "otlp/gzip": gz(pb)}
}

// processCPU returns the CPU time pid's threads have used, in ns
// (/proc/PID/task/*/schedstat: the first field, ns on CPU).
func processCPU(b testing.TB, pid int) int64 {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		b.Skipf("no /proc/%d/task/*/schedstat: %v", pid, err)
	}
	var ns int64
	for _, f := range tasks {
		s, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that ended
		}
		v, _ := strconv.ParseInt(strings.Fields(string(s))[0], 10, 64)
		ns += v
	}
	return ns
}

// BenchmarkCollectorIngest sends a snapshot of 10,000 series to a real
// Collector, as msgpack to the zerostat receiver and as OTLP/HTTP to the
// otlp receiver, each into the debug exporter (basic: counts only), and
// reports the bytes on the wire and the Collector process's CPU time per
// request (collector-ns/op, from /proc; the client's time is in ns/op).
// Run:
//
//	cd collector && go test -run '^$' -bench CollectorIngest -benchtime 100x -count 6 ./e2e
func BenchmarkCollectorIngest(b *testing.B) {
	bin := collectorBinary(b)
	zsAddr, otlpAddr := freeAddr(b), freeAddr(b)
	cfg := fmt.Sprintf(`
receivers:
  zerostat: {endpoint: %q}
  otlp: {protocols: {http: {endpoint: %q}}}
exporters:
  debug: {verbosity: basic}
service:
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    metrics: {receivers: [zerostat, otlp], exporters: [debug]}
`, zsAddr, otlpAddr)
	col := startCollector(b, bin, cfg, zsAddr, otlpAddr)
	registerSeries(b, ingestSeries)
	bodies := ingestBodies(b)
	for _, name := range []string{"msgpack/plain", "msgpack/gzip", "otlp/plain", "otlp/gzip"} {
		body := bodies[name]
		url, ctype := "http://"+zsAddr+"/", wire.ContentType
		if strings.HasPrefix(name, "otlp") {
			url, ctype = "http://"+otlpAddr+"/v1/metrics", "application/x-protobuf"
		}
		send := func() {
			req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
			req.Header.Set("Content-Type", ctype)
			if strings.HasSuffix(name, "gzip") {
				req.Header.Set("Content-Encoding", "gzip")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				b.Fatalf("%s: %s", name, resp.Status)
			}
		}
		b.Run(name, func(b *testing.B) {
			send() // warm: connections, buffers
			pid := col.cmd.Process.Pid
			cpu0 := processCPU(b, pid)
			b.ResetTimer()
			for b.Loop() {
				send()
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU(b, pid)-cpu0)/float64(b.N), "collector-ns/op")
			b.ReportMetric(float64(len(body)), "wire-bytes/op")
			b.SetBytes(int64(len(body)))
		})
	}
}
