package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/collector/internal/ingesttest"
	"github.com/zerostat/zerostat/exporter/wire"
)

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
	ingesttest.Register(b, ingesttest.Series)
	bodies := ingesttest.Bodies(b)
	for _, name := range []string{"msgpack/plain", "msgpack/gzip", "msgpack2/plain", "msgpack2/gzip", "otlp/plain", "otlp/gzip"} {
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
