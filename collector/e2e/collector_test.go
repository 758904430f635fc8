package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/otlp/otlpgrpc"
	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/testbackend"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// collectorBinary builds (or finds cached) the test Collector.
func collectorBinary(t testing.TB) string {
	t.Helper()
	cmd := exec.Command("bash", "../../scripts/build-collector.sh")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/build-collector.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// collector is a running Collector process.
type collector struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  bytes.Buffer // its stderr; read after done
}

// startCollector runs bin with config and waits until every address in
// ready accepts connections (at most 60 s).
func startCollector(t testing.TB, bin, config string, ready ...string) *collector {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &collector{cmd: exec.Command(bin, "--config=file:"+path), done: make(chan struct{})}
	c.cmd.Stderr = &c.log
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		<-c.done
		if t.Failed() {
			t.Logf("collector log:\n%s", c.log.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for _, addr := range ready {
		for {
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				conn.Close()
				break
			}
			select {
			case <-c.done:
				t.Fatalf("the collector exited: %v\n%s", c.cmd.ProcessState, c.log.String())
			case <-time.After(50 * time.Millisecond): // polling a port: no event to wait for
			}
			if time.Now().After(deadline) {
				t.Fatalf("the collector does not listen on %s after 60 s", addr)
			}
		}
	}
	return c
}

// stop ends the Collector gracefully (SIGTERM: it flushes its exporters)
// and waits for it, at most 60 s.
func (c *collector) stop(t *testing.T) {
	t.Helper()
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(60 * time.Second):
		t.Fatal("the collector did not stop within 60 s of SIGTERM")
	}
	if !c.cmd.ProcessState.Success() {
		t.Errorf("the collector exited with %v", c.cmd.ProcessState)
	}
}

// otlpSink is an OTLP/HTTP receiver that refuses with 503 while closed.
type otlpSink struct {
	mu       sync.Mutex
	closed   bool
	refused  int
	accepted []pmetric.Metrics
}

func (s *otlpSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.refused++
		w.Header().Set("Retry-After", "1")
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	}
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.accepted = append(s.accepted, req.Metrics())
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := pmetricotlp.NewExportResponse().MarshalProto()
	w.Write(b)
}

func (s *otlpSink) setClosed(c bool) {
	s.mu.Lock()
	s.closed = c
	s.mu.Unlock()
}

// series is a point's identity: its metric and attributes.
func series(metric string, attrs pcommon.Map) string {
	var kv []string
	for k, v := range attrs.All() {
		kv = append(kv, k+"="+v.AsString())
	}
	slices.Sort(kv)
	return metric + "{" + strings.Join(kv, ",") + "}"
}

// values returns each series' value in mds, from the resources whose
// service.name is service ("" for any): the sum over batches (delta) or
// the last (cumulative). A Sum's point counts its value, a histogram's
// its count and sum (as name_count and name_sum).
func values(mds []pmetric.Metrics, service string, delta bool) map[string]float64 {
	out := map[string]float64{}
	add := func(k string, v float64) {
		if delta {
			out[k] += v
		} else {
			out[k] = v
		}
	}
	for _, md := range mds {
		rms := md.ResourceMetrics()
		for i := range rms.Len() {
			if name, _ := rms.At(i).Resource().Attributes().Get("service.name"); service != "" && name.Str() != service {
				continue
			}
			sms := rms.At(i).ScopeMetrics()
			for j := range sms.Len() {
				ms := sms.At(j).Metrics()
				for k := range ms.Len() {
					m := ms.At(k)
					switch m.Type() {
					case pmetric.MetricTypeSum:
						dps := m.Sum().DataPoints()
						for l := range dps.Len() {
							dp := dps.At(l)
							v := dp.DoubleValue()
							if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
								v = float64(dp.IntValue())
							}
							add(series(m.Name(), dp.Attributes()), v)
						}
					case pmetric.MetricTypeHistogram:
						dps := m.Histogram().DataPoints()
						for l := range dps.Len() {
							dp := dps.At(l)
							add(series(m.Name()+"_count", dp.Attributes()), float64(dp.Count()))
							add(series(m.Name()+"_sum", dp.Attributes()), dp.Sum())
						}
					}
				}
			}
		}
	}
	return out
}

// readFile reads a fileexporter's output: one OTLP/JSON batch a line.
func readFile(t *testing.T, path string) []pmetric.Metrics {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pmetric.Metrics
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		md, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, md)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// workload is views of each aggregation and the totals recorded.
type workload struct {
	record func(round int)
	want   map[string]float64 // series → total, as values names them
}

const rows = 20

func newWorkload(t *testing.T) *workload {
	kRoute, kCode := tag.MustNewKey("route"), tag.MustNewKey("code")
	lat := stats.Float64("e2e/latency", "Latency", stats.UnitMilliseconds)
	size := stats.Int64("e2e/size", "Response size", stats.UnitBytes)
	depth := stats.Float64("e2e/depth", "Queue depth", stats.UnitDimensionless)
	views := []*view.View{
		{Name: "e2e/requests", Description: "Requests", Measure: lat, TagKeys: []tag.Key{kRoute, kCode}, Aggregation: view.Count()},
		{Name: "e2e/latency", Description: "Latency", Measure: lat, TagKeys: []tag.Key{kRoute}, Aggregation: view.Distribution(1, 5, 10, 50)},
		{Name: "e2e/response_size", Description: "Bytes sent", Measure: size, TagKeys: []tag.Key{kRoute}, Aggregation: view.Sum()},
		{Name: "e2e/queue_depth", Description: "Depth", Measure: depth, Aggregation: view.LastValue()},
	}
	if err := view.Register(views...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(views...) })
	w := &workload{want: map[string]float64{}}
	w.record = func(round int) {
		for i := range rows {
			route, code := "/r"+strconv.Itoa(i), []string{"200", "404"}[i%2]
			ctx, err := tag.New(context.Background(), tag.Upsert(kRoute, route), tag.Upsert(kCode, code))
			if err != nil {
				t.Fatal(err)
			}
			for n := range round { // round r records r times per row
				v := float64((i+n)%60) + 0.25
				stats.Record(ctx, lat.M(v), size.M(int64(100+i)), depth.M(float64(i)))
				w.want["e2e/requests{code="+code+",route="+route+"}"]++
				w.want["e2e/latency_count{route="+route+"}"]++
				w.want["e2e/latency_sum{route="+route+"}"] += v
				w.want["e2e/response_size{route="+route+"}"] += float64(100 + i)
			}
		}
	}
	return w
}

func checkValues(t *testing.T, what string, got, want map[string]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d series; want %d", what, len(got), len(want))
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v && !(strings.Contains(k, "_sum{") && nearly(g, v)) {
			t.Errorf("%s: %s = %v; want %v", what, k, got[k], v)
		}
	}
}

func nearly(a, b float64) bool { d := a - b; return d < 1e-9*b && -d < 1e-9*b }

// TestCollector runs zerostat's exporters through a real Collector with
// the zerostat receiver: cumulative into the fileexporter and, by
// prometheusremotewrite, a real Prometheus; delta (wire format version 2)
// into the fileexporter;
// delta through an exporter whose backend refuses for a while, so the
// receiver answers 503 and zerostat's exporter retries and queues; and
// zerostat's OTLP exporter through the otlp receiver into the same
// Prometheus. Totals are exact on every path, and the series the
// Collector's Prometheus translation makes are those zerostat's own
// Prometheus handler exposes.
func TestCollector(t *testing.T) {
	bin := collectorBinary(t)
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{RemoteWriteReceiver: true})
	sink := &otlpSink{}
	sinkSrv := httptest.NewServer(sink)
	defer sinkSrv.Close()

	dir := t.TempDir()
	cumAddr, deltaAddr, bpAddr, otlpAddr, grpcAddr := freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t)
	cfg := fmt.Sprintf(`
receivers:
  zerostat/cumulative: {endpoint: %q}
  zerostat/delta: {endpoint: %q}
  zerostat/backpressure: {endpoint: %q}
  otlp: {protocols: {http: {endpoint: %q}, grpc: {endpoint: %q}}}
exporters:
  file/cumulative: {path: %q}
  file/delta: {path: %q}
  prometheusremotewrite:
    endpoint: %q
    target_info: {enabled: false}
  otlphttp/refusing:
    metrics_endpoint: %q
    compression: none
    retry_on_failure: {enabled: false}
    sending_queue: {enabled: false}
service:
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    metrics/cumulative: {receivers: [zerostat/cumulative], exporters: [file/cumulative, prometheusremotewrite]}
    metrics/delta: {receivers: [zerostat/delta], exporters: [file/delta]}
    metrics/backpressure: {receivers: [zerostat/backpressure], exporters: [otlphttp/refusing]}
    metrics/otlp: {receivers: [otlp], exporters: [prometheusremotewrite]}
`, cumAddr, deltaAddr, bpAddr, otlpAddr, grpcAddr, filepath.Join(dir, "cumulative.json"), filepath.Join(dir, "delta.json"),
		prom.URL+"/api/v1/write", sinkSrv.URL+"/v1/metrics")
	col := startCollector(t, bin, cfg, cumAddr, deltaAddr, bpAddr, otlpAddr, grpcAddr)

	w := newWorkload(t)
	// Wire format version 1 and, on the delta paths, version 2 (rows as
	// columns): the receiver reads both.
	newExp := func(name, addr string, temporality wire.Temporality, version int) *exporter.Exporter {
		e, err := exporter.New(&exporter.HTTPSink{URL: "http://" + addr + "/"}, exporter.Options{
			Temporality: temporality, Compression: exporter.Gzip, Timeout: 5 * time.Second,
			Resource: exporter.Resource{ServiceName: name}, WireVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	cum := newExp("e2e-cumulative", cumAddr, exporter.Cumulative, wire.Version)
	del := newExp("e2e-delta", deltaAddr, exporter.Delta, wire.Version2)
	bp := newExp("e2e-backpressure", bpAddr, exporter.Delta, wire.Version2)
	bpCum := newExp("e2e-backpressure-cumulative", bpAddr, exporter.Cumulative, wire.Version)
	ot, err := otlp.New(otlp.Options{Endpoint: "http://" + otlpAddr, Timeout: 5 * time.Second,
		Resource: exporter.Resource{ServiceName: "e2e-otlp"}})
	if err != nil {
		t.Fatal(err)
	}
	// The same encoder and pipeline over gRPC, to the same otlpreceiver.
	og, err := otlpgrpc.New(otlp.Options{Protocol: otlp.ProtocolGRPC, Endpoint: grpcAddr, TLS: otlp.TLS{Insecure: true},
		Timeout: 5 * time.Second, Resource: exporter.Resource{ServiceName: "e2e-otlpgrpc"}})
	if err != nil {
		t.Fatal(err)
	}
	defer og.Stop(context.Background())
	exportAll := func(bpCtx context.Context) {
		for _, e := range []interface{ Export(context.Context) error }{cum, del, ot, og} {
			if err := e.Export(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		bp.Export(bpCtx)    // fails while the sink refuses: queued
		bpCum.Export(bpCtx) // fails while the sink refuses: the next export has the totals
	}
	const refusingRounds = 2
	for round := 1; round <= 6; round++ {
		w.record(round)
		bpCtx, cancel := context.Background(), context.CancelFunc(func() {})
		switch round {
		case 2: // the backend behind the Collector refuses for two rounds
			sink.setClosed(true)
			fallthrough
		case 3:
			bpCtx, cancel = context.WithTimeout(context.Background(), 3*time.Second)
		case 4:
			sink.setClosed(false)
		}
		exportAll(bpCtx)
		cancel()
	}
	st, stCum := bp.Stats(), bpCum.Stats()
	col.stop(t)

	t.Logf("back-pressure: the backend refused %d requests; the exporter: %d exports, %d failed, %d requests, %d retries",
		sink.refused, st.Exports, st.Failures, st.Requests, st.Retries)
	if sink.refused == 0 || st.Failures != refusingRounds || st.Retries == 0 || st.Dropped != 0 || st.Queued != 0 {
		t.Errorf("back-pressure: %d refusals at the backend; exporter stats %+v; want refusals, %d failed exports "+
			"with retries, nothing dropped or still queued", sink.refused, st, refusingRounds)
	}
	if stCum.Failures != refusingRounds || stCum.Sent == 0 {
		t.Errorf("back-pressure, cumulative: exporter stats %+v; want %d failed exports", stCum, refusingRounds)
	}
	checkValues(t, "file, cumulative", values(readFile(t, filepath.Join(dir, "cumulative.json")), "", false), w.want)
	checkValues(t, "file, delta", values(readFile(t, filepath.Join(dir, "delta.json")), "", true), w.want)
	sink.mu.Lock()
	checkValues(t, "otlphttp behind a refusing backend, delta", values(sink.accepted, "e2e-backpressure", true), w.want)
	checkValues(t, "otlphttp behind a refusing backend, cumulative",
		values(sink.accepted, "e2e-backpressure-cumulative", false), w.want)
	sink.mu.Unlock()

	// Prometheus, by remote write: the msgpack path and the OTLP path
	// give the same series (names, labels, values) as zerostat's own
	// Prometheus handler exposes for the views.
	// Two differences are the Collector's translation: it labels every
	// series with its instrumentation scope (otel_scope_name), and it
	// appends "_ratio" to a gauge in unit "1" (otlptranslator's unit
	// rule), which zerostat's handler names without a suffix
	// (docs/collector.md).
	own := ownSeries(t)
	ratio := map[string]float64{}
	for s, v := range own {
		if name, labels, _ := strings.Cut(s, "{"); name == "e2e_queue_depth" {
			s = name + "_ratio{" + labels
		}
		ratio[s] = v
	}
	own = ratio
	for _, job := range []string{"e2e-cumulative", "e2e-otlp", "e2e-otlpgrpc"} {
		got := map[string]float64{}
		for _, smp := range prom.WaitQuery(t, `{job="`+job+`"}`, len(own), 30*time.Second) {
			v, err := strconv.ParseFloat(smp.Value, 64)
			if err != nil {
				t.Fatal(err)
			}
			name := smp.Metric["__name__"]
			delete(smp.Metric, "__name__")
			delete(smp.Metric, "job")
			delete(smp.Metric, "instance")
			delete(smp.Metric, "otel_scope_name")
			got[promSeries(name, smp.Metric)] = v
		}
		var missing, extra []string
		for s := range own {
			if _, ok := got[s]; !ok {
				missing = append(missing, s)
			}
		}
		for s := range got {
			if _, ok := own[s]; !ok {
				extra = append(extra, s)
			}
		}
		slices.Sort(missing)
		slices.Sort(extra)
		if len(missing)+len(extra) > 0 {
			t.Errorf("job %s: series zerostat's handler exposes but Prometheus lacks: %v; the reverse: %v", job, missing, extra)
		}
		for s, v := range own {
			if pv, ok := got[s]; ok && pv != v && !nearly(pv, v) {
				t.Errorf("job %s: %s = %v in Prometheus; zerostat's handler says %v", job, s, pv, v)
			}
		}
	}
}

// promSeries names a Prometheus series: name{labels, sorted}, with le
// spelled as a number (strconv 'g'), since Prometheus 2 stores le as
// each path spelled it (zerostat's handler "1.0", the Collector's "1").
func promSeries(name string, labels map[string]string) string {
	var kv []string
	for k, v := range labels {
		if k == "le" {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				v = strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
		kv = append(kv, k+"="+v)
	}
	slices.Sort(kv)
	return name + "{" + strings.Join(kv, ",") + "}"
}

// ownSeries returns the series zerostat's Prometheus handler exposes for
// the registered views, with their values (the text format, parsed).
func ownSeries(t *testing.T) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	prometheus.NewHandler(prometheus.Options{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	out := map[string]float64{}
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		name, labels := line[:sp], map[string]string{}
		if b := strings.IndexByte(name, '{'); b >= 0 {
			for _, kv := range strings.Split(strings.TrimSuffix(name[b+1:], "}"), ",") {
				k, val, _ := strings.Cut(kv, "=")
				labels[k] = strings.Trim(val, `"`)
			}
			name = name[:b]
		}
		out[promSeries(name, labels)] = v
	}
	if len(out) == 0 {
		t.Fatal("zerostat's handler exposes nothing")
	}
	return out
}

// TestStalledBodyGets408 (issue 42, item 15): a request whose body stalls
// gets the 408 docs/collector.md promises, under the Collector's default
// timeouts (write_timeout 30 s): the receiver stops reading 5 s before the
// server's write deadline, so the answer is written. Before, both were
// 30 s, and the Collector closed the connection with no answer.
func TestStalledBodyGets408(t *testing.T) {
	bin := collectorBinary(t)
	addr := freeAddr(t)
	startCollector(t, bin, fmt.Sprintf(`
receivers:
  zerostat: {endpoint: %q}
exporters:
  debug: {verbosity: basic}
service:
  telemetry:
    logs: {level: error}
    metrics: {level: none}
  pipelines:
    metrics: {receivers: [zerostat], exporters: [debug]}
`, addr), addr)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// 100 bytes promised, 10 sent, then nothing.
	if _, err := fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/msgpack\r\nContent-Length: 100\r\n\r\n0123456789", addr); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(2 * time.Minute)) // a bound, not a timing: the answer comes at 25 s
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v; want 408", err)
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("answer %s; want 408 Request Timeout", resp.Status)
	}
}
