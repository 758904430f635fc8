// Package testbackend starts real metrics backends for integration tests:
// Prometheus (Debian package prometheus, 2.42) and VictoriaMetrics
// (Debian package victoria-metrics, 1.79), each on a free 127.0.0.1 port
// with a data directory from t.TempDir, and stops them (by PID: SIGTERM,
// then SIGKILL after a bound) when the test ends.
//
// A test that needs a backend whose binary is not installed is skipped
// with a message naming scripts/install-backends.sh, unless the
// environment sets ZEROSTAT_REQUIRE_BACKENDS=1 (as `make test` does once
// the script installed them): then it fails.
//
// Every wait is bounded. Servers only listen on, and are only asked on,
// 127.0.0.1.
package testbackend

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/promnative"
)

// EnvRequire names the variable that turns a missing backend from a skip
// into a failure.
const EnvRequire = "ZEROSTAT_REQUIRE_BACKENDS"

// Binary names of the Debian packages.
const (
	PrometheusBinary      = "prometheus"
	VictoriaMetricsBinary = "victoria-metrics"
)

// startTimeout bounds a server's start (it is ready in well under a
// second on the development VM).
const startTimeout = 20 * time.Second

// Require returns the path of binary name, or skips t (fails it when
// ZEROSTAT_REQUIRE_BACKENDS=1) when it is not installed.
func Require(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("%s not installed; run scripts/install-backends.sh", name)
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("%s (%s=1 requires it)", msg, EnvRequire)
	}
	t.Skip("SKIPPED: " + msg)
	return ""
}

// Server is a running backend.
type Server struct {
	Name string
	URL  string // http://127.0.0.1:<port>
	PID  int

	cmd    *exec.Cmd
	exited chan struct{}
	log    *tailBuffer
	client *http.Client
}

// ScrapeJob is a Prometheus scrape job of one target.
type ScrapeJob struct {
	Name   string // job_name, and the "job" label of its series
	Target string // host:port
	Path   string // metrics_path; default /metrics
}

// PrometheusOptions configure StartPrometheus.
type PrometheusOptions struct {
	// Jobs are scraped every second (timeout 900 ms). Prometheus 2.42
	// still waits about 5 s before its first scrape (its scrape manager
	// applies target updates every 5 s).
	Jobs []ScrapeJob
	// RemoteWriteReceiver enables /api/v1/write
	// (--web.enable-remote-write-receiver).
	RemoteWriteReceiver bool
	// ExemplarStorage keeps scraped exemplars and serves them on
	// /api/v1/query_exemplars (--enable-feature=exemplar-storage). With it
	// Prometheus 2.42 asks targets for OpenMetrics first (it always does),
	// the only format with exemplars.
	ExemplarStorage bool
	// NativeHistograms stores native histograms, scraped or received by
	// remote write (--enable-feature=native-histograms). With it
	// Prometheus 2.42 asks targets for the protobuf exposition first (the
	// only format with native histograms), and its query API answers a
	// native histogram sample with a "histogram" (QueryHistograms).
	NativeHistograms bool
}

// StartPrometheus starts a Prometheus for t.
func StartPrometheus(t testing.TB, opts PrometheusOptions) *Server {
	t.Helper()
	bin := Require(t, PrometheusBinary)
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n")
	for _, j := range opts.Jobs {
		path := j.Path
		if path == "" {
			path = "/metrics"
		}
		fmt.Fprintf(&cfg, "  - job_name: %q\n    metrics_path: %q\n    static_configs:\n      - targets: [%q]\n", j.Name, path, j.Target)
	}
	if len(opts.Jobs) == 0 {
		cfg.WriteString("  []\n")
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return start(t, "prometheus", "/-/ready", func(addr string) []string {
		args := []string{bin,
			"--config.file=" + cfgPath,
			"--storage.tsdb.path=" + filepath.Join(dir, "data"),
			"--web.listen-address=" + addr,
			"--log.level=warn",
		}
		if opts.RemoteWriteReceiver {
			args = append(args, "--web.enable-remote-write-receiver")
		}
		if opts.ExemplarStorage {
			args = append(args, "--enable-feature=exemplar-storage")
		}
		if opts.NativeHistograms {
			args = append(args, "--enable-feature=native-histograms")
		}
		return args
	})
}

// StartVictoriaMetrics starts a single-node VictoriaMetrics for t.
func StartVictoriaMetrics(t testing.TB) *Server {
	t.Helper()
	bin := Require(t, VictoriaMetricsBinary)
	dir := t.TempDir()
	return start(t, "victoria-metrics", "/health", func(addr string) []string {
		return []string{bin,
			"-httpListenAddr=" + addr,
			"-storageDataPath=" + filepath.Join(dir, "data"),
			"-retentionPeriod=1",
			"-loggerLevel=ERROR",
			"-search.latencyOffset=1s",
		}
	})
}

// freeAddr returns a 127.0.0.1 address with a port that was free a moment
// ago. The server started on it may lose a race for it: start retries.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// FreeAddr returns a 127.0.0.1 address on network ("udp" or "tcp") whose
// port was free a moment ago: for a test's agent, or for one that must
// find nothing listening.
func FreeAddr(t testing.TB, network string) string {
	t.Helper()
	if network == "udp" {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().String()
	}
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func start(t testing.TB, name, readyPath string, args func(addr string) []string) *Server {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		addr, err := freeAddr()
		if err != nil {
			t.Fatal(err)
		}
		s, err := launch(name, addr, args(addr))
		if err != nil {
			lastErr = err
			continue
		}
		t.Cleanup(func() {
			s.stop()
			if t.Failed() {
				t.Logf("%s output (last %d bytes):\n%s", name, tailSize, s.log.String())
			}
		})
		if err = s.waitReady(readyPath); err != nil {
			lastErr = err
			if s.hasExited() {
				continue // lost the port, probably: try another
			}
			t.Fatalf("%s: %v", name, err)
		}
		return s
	}
	t.Fatalf("%s did not start: %v", name, lastErr)
	return nil
}

func launch(name, addr string, args []string) (*Server, error) {
	cmd := exec.Command(args[0], args[1:]...)
	log := &tailBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{
		Name: name, URL: "http://" + addr, PID: cmd.Process.Pid,
		cmd: cmd, exited: make(chan struct{}), log: log,
		client: &http.Client{Timeout: 10 * time.Second},
	}
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

func (s *Server) hasExited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

func (s *Server) waitReady(path string) error {
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		if s.hasExited() {
			return fmt.Errorf("exited before it was ready: %s", s.log.String())
		}
		resp, err := s.client.Get(s.URL + path)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not ready at %s%s after %v", s.URL, path, startTimeout)
}

// stop ends the process by its PID: SIGTERM, then SIGKILL if it has not
// exited within 5 s; it waits for the exit (bounded) so that the data
// directory can be removed.
func (s *Server) stop() {
	if s.hasExited() {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return
	case <-time.After(5 * time.Second):
	}
	_ = s.cmd.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
	}
}

// Get fetches path (with its query) from the server and returns the body
// of a 2xx answer.
func (s *Server) Get(path string) ([]byte, error) {
	resp, err := s.client.Get(s.URL + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, bytes.TrimSpace(body))
	}
	return body, nil
}

// Sample is one element of an instant vector. Value is the number as the
// server spelled it (Prometheus: strconv 'f' -1, exact).
type Sample struct {
	Metric map[string]string
	Time   float64
	Value  string
}

// Query runs an instant query at the current time.
func (s *Server) Query(expr string) ([]Sample, error) {
	body, err := s.Get("/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("query %q: %v: %s", expr, err, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %q: %s", expr, r.Error)
	}
	if r.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %q: result type %s", expr, r.Data.ResultType)
	}
	out := make([]Sample, 0, len(r.Data.Result))
	for _, e := range r.Data.Result {
		ts, _ := e.Value[0].(float64)
		v, _ := e.Value[1].(string)
		out = append(out, Sample{Metric: e.Metric, Time: ts, Value: v})
	}
	return out, nil
}

// WaitQuery runs expr until it returns at least n samples, or fails t
// after timeout.
func (s *Server) WaitQuery(t testing.TB, expr string, n int, timeout time.Duration) []Sample {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last []Sample
	var err error
	for {
		last, err = s.Query(expr)
		if err == nil && len(last) >= n {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: query %q: %d samples (%v) after %v; want %d", s.Name, expr, len(last), err, timeout, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// HistogramSample is one native histogram element of an instant vector
// (Prometheus with NativeHistograms). Numbers are as the server spelled
// them (strconv 'f' -1).
type HistogramSample struct {
	Metric  map[string]string
	Count   string
	Sum     string
	Buckets []HistogramBucket
}

// HistogramBucket is one bucket of a native histogram as the query API
// spells it: Boundaries says which ends are inclusive (0: (lower,
// upper], 1: [lower, upper), 2: (lower, upper), 3: [lower, upper]; the
// zero bucket is [-threshold, threshold] or, at threshold 0, [0, 0]).
type HistogramBucket struct {
	Boundaries          int
	Lower, Upper, Count string
}

// QueryHistograms runs an instant query at the current time and returns
// the native histograms of its answer (float samples are left out).
func (s *Server) QueryHistograms(expr string) ([]HistogramSample, error) {
	body, err := s.Get("/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric    map[string]string `json:"metric"`
				Histogram []json.RawMessage `json:"histogram"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("query %q: %v: %s", expr, err, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %q: %s", expr, r.Error)
	}
	var out []HistogramSample
	for _, e := range r.Data.Result {
		if len(e.Histogram) != 2 {
			continue
		}
		var h struct {
			Count   string              `json:"count"`
			Sum     string              `json:"sum"`
			Buckets [][]json.RawMessage `json:"buckets"`
		}
		if err := json.Unmarshal(e.Histogram[1], &h); err != nil {
			return nil, fmt.Errorf("query %q: histogram: %v: %s", expr, err, e.Histogram[1])
		}
		hs := HistogramSample{Metric: e.Metric, Count: h.Count, Sum: h.Sum}
		for _, b := range h.Buckets {
			var hb HistogramBucket
			if len(b) != 4 || json.Unmarshal(b[0], &hb.Boundaries) != nil || json.Unmarshal(b[1], &hb.Lower) != nil ||
				json.Unmarshal(b[2], &hb.Upper) != nil || json.Unmarshal(b[3], &hb.Count) != nil {
				return nil, fmt.Errorf("query %q: bucket %s", expr, b)
			}
			hs.Buckets = append(hs.Buckets, hb)
		}
		out = append(out, hs)
	}
	return out, nil
}

// WaitHistograms runs QueryHistograms(expr) until it returns at least n
// native histograms, or fails t after timeout.
func (s *Server) WaitHistograms(t testing.TB, expr string, n int, timeout time.Duration) []HistogramSample {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got, err := s.QueryHistograms(expr)
		if err == nil && len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: query %q: %d histograms (%v) after %v; want %d", s.Name, expr, len(got), err, timeout, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ExemplarSeries is one series of Prometheus's /api/v1/query_exemplars
// answer with the exemplars it stores for it, oldest first.
type ExemplarSeries struct {
	SeriesLabels map[string]string `json:"seriesLabels"`
	Exemplars    []Exemplar        `json:"exemplars"`
}

// Exemplar is one stored exemplar. Value and Timestamp are as the server
// spelled them: Value in strconv 'f' -1 form, Timestamp in seconds with
// the milliseconds Prometheus keeps as up to 3 decimals.
type Exemplar struct {
	Labels    map[string]string `json:"labels"`
	Value     string            `json:"value"`
	Timestamp json.Number       `json:"timestamp"`
}

// StoredExemplar is an exemplar as a test compares it with what it
// recorded: its labels (never nil), its value as Prometheus spells it,
// and its time in milliseconds.
type StoredExemplar struct {
	Labels map[string]string
	Value  string
	Ms     int64
}

// Millis returns e's timestamp in milliseconds, exactly (Prometheus
// spells it in seconds with up to 3 decimals).
func (e Exemplar) Millis() (int64, error) {
	ts := string(e.Timestamp)
	sec, frac, _ := strings.Cut(ts, ".")
	if len(frac) > 3 {
		return 0, fmt.Errorf("timestamp %q has more than milliseconds", ts)
	}
	frac += strings.Repeat("0", 3-len(frac))
	a, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q: %v", ts, err)
	}
	b, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q: %v", ts, err)
	}
	return a*1000 + b, nil
}

// ExemplarsByLe returns the exemplars of a histogram's bucket series by
// their le, failing t for a series whose labels are not labels plus its
// le, or an exemplar whose time does not parse.
func ExemplarsByLe(t testing.TB, got []ExemplarSeries, labels map[string]string) map[string][]StoredExemplar {
	t.Helper()
	out := map[string][]StoredExemplar{}
	for _, s := range got {
		le := s.SeriesLabels["le"]
		want := map[string]string{"le": le}
		for k, v := range labels {
			want[k] = v
		}
		if !reflect.DeepEqual(s.SeriesLabels, want) {
			t.Errorf("series %v; want %v", s.SeriesLabels, want)
		}
		for _, e := range s.Exemplars {
			ms, err := e.Millis()
			if err != nil {
				t.Errorf("series %v: %v", s.SeriesLabels, err)
			}
			l := e.Labels
			if l == nil {
				l = map[string]string{}
			}
			out[le] = append(out[le], StoredExemplar{Labels: l, Value: e.Value, Ms: ms})
		}
	}
	return out
}

// QueryExemplars returns the exemplars Prometheus stores for the series
// that expr selects, recorded between start and end
// (/api/v1/query_exemplars; the server needs ExemplarStorage).
func (s *Server) QueryExemplars(expr string, start, end time.Time) ([]ExemplarSeries, error) {
	q := url.Values{}
	q.Set("query", expr)
	q.Set("start", strconv.FormatInt(start.Unix(), 10))
	q.Set("end", strconv.FormatInt(end.Unix()+1, 10))
	body, err := s.Get("/api/v1/query_exemplars?" + q.Encode())
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string           `json:"status"`
		Error  string           `json:"error"`
		Data   []ExemplarSeries `json:"data"`
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&r); err != nil {
		return nil, fmt.Errorf("query_exemplars %q: %v: %s", expr, err, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query_exemplars %q: %s", expr, r.Error)
	}
	return r.Data, nil
}

// WaitExemplars runs QueryExemplars(expr, start, now) until done accepts
// its answer, which it returns, or fails t after timeout.
func (s *Server) WaitExemplars(t testing.TB, expr string, start time.Time, timeout time.Duration, done func([]ExemplarSeries) bool) []ExemplarSeries {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got, err := s.QueryExemplars(expr, start, time.Now())
		if err == nil && done(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: query_exemplars %q: %+v (%v) after %v", s.Name, expr, got, err, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Series is one series of VictoriaMetrics's /api/v1/export.
type Series struct {
	Metric     map[string]string `json:"metric"`
	Values     []float64         `json:"values"`
	Timestamps []int64           `json:"timestamps"`
}

// ForceFlush makes VictoriaMetrics's recent writes searchable
// (/internal/force_flush).
func (s *Server) ForceFlush() error {
	_, err := s.Get("/internal/force_flush")
	return err
}

// Export returns the series VictoriaMetrics holds that match the series
// selector match (/api/v1/export).
func (s *Server) Export(match string) ([]Series, error) {
	body, err := s.Get("/api/v1/export?match[]=" + url.QueryEscape(match))
	if err != nil {
		return nil, err
	}
	var out []Series
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		// VictoriaMetrics writes infinities bare (+Inf, -Inf), which JSON
		// has no number for: quote them (in the values, after the labels)
		// and parse each value with strconv.
		var raw struct {
			Metric     map[string]string `json:"metric"`
			Values     []json.RawMessage `json:"values"`
			Timestamps []int64           `json:"timestamps"`
		}
		line := sc.Bytes()
		if i := bytes.LastIndex(line, []byte(`"values":[`)); i >= 0 {
			vals := line[i:]
			for _, inf := range []string{"+Inf", "-Inf"} {
				vals = bytes.ReplaceAll(vals, []byte(","+inf), []byte(`,"`+inf+`"`))
				vals = bytes.ReplaceAll(vals, []byte("["+inf), []byte(`["`+inf+`"`))
			}
			line = append(line[:i:i], vals...)
		}
		if err := json.Unmarshal(line, &raw); err != nil {
			return nil, fmt.Errorf("export: %v: %s", err, sc.Bytes())
		}
		ser := Series{Metric: raw.Metric, Timestamps: raw.Timestamps}
		for _, v := range raw.Values {
			f, err := strconv.ParseFloat(strings.Trim(string(v), `"`), 64)
			if err != nil {
				return nil, fmt.Errorf("export: value %s: %v: %s", v, err, sc.Bytes())
			}
			ser.Values = append(ser.Values, f)
		}
		out = append(out, ser)
	}
	return out, sc.Err()
}

// WaitExport flushes and exports until at least n series match, or fails
// t after timeout (VictoriaMetrics buffers ingested rows for up to a
// second even after a flush).
func (s *Server) WaitExport(t testing.TB, match string, n int, timeout time.Duration) []Series {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := s.ForceFlush()
		var got []Series
		if err == nil {
			got, err = s.Export(match)
			if err == nil && len(got) >= n {
				return got
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: export %q: %d series (%v) after %v; want %d", s.Name, match, len(got), err, timeout, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tailSize bounds the output kept per server.
const tailSize = 16 << 10

// tailBuffer keeps the last tailSize bytes written to it; safe for
// concurrent use (the process writes stdout and stderr).
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b = append(b.b, p...)
	if len(b.b) > tailSize {
		b.b = append(b.b[:0], b.b[len(b.b)-tailSize:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.b)
}

// nativeBound is the upper bound of bucket j of a native histogram at
// schema (its lower bound is nativeBound(schema, j-1)).
func nativeBound(schema int32, j int) float64 {
	return math.Pow(math.Exp2(math.Exp2(-float64(schema))), float64(j))
}

// nativeCounts lists the non-empty buckets of spans and deltas: index →
// count.
func nativeCounts(spans []promnative.Span, deltas []int64) map[int]uint64 {
	out := map[int]uint64{}
	idx, count, d := 0, int64(0), 0
	for _, sp := range spans {
		idx += int(sp.Offset)
		for range sp.Length {
			count += deltas[d]
			d++
			if count != 0 {
				out[idx] = uint64(count)
			}
			idx++
		}
	}
	return out
}

// CheckNative checks what Prometheus (with NativeHistograms) stores and
// computes for the native histogram of the one series sel selects, which
// was sent as sent, against vals, the values recorded into it (in
// order): histogram_count and histogram_sum exactly (the sum as exphist
// adds it, a running sum in record order); when every value is
// positive, histogram_quantile(0.5|0.9|0.99) within the bucket (at the
// schema sent) holding the values' quantile (the ceil(q·n)-th smallest,
// Prometheus's rank q·n); and the stored zero count and positive and
// negative buckets equal to those sent, each at its bounds. It waits up
// to timeout for the first answer.
func (s *Server) CheckNative(t testing.TB, sel string, vals []float64, sent *promnative.Histogram, timeout time.Duration) {
	t.Helper()
	hs := s.WaitHistograms(t, sel, 1, timeout)
	if len(hs) != 1 {
		t.Fatalf("%s: %d histograms; want 1", sel, len(hs))
	}
	sum, positive := 0.0, true
	for _, v := range vals {
		sum += v
		positive = positive && v > 0
	}
	one := func(expr string) string {
		t.Helper()
		got := s.WaitQuery(t, expr, 1, timeout)
		if len(got) != 1 {
			t.Fatalf("%s: %d samples; want 1", expr, len(got))
		}
		return got[0].Value
	}
	if got, want := one("histogram_count("+sel+")"), strconv.Itoa(len(vals)); got != want {
		t.Errorf("histogram_count(%s) = %s; want %s", sel, got, want)
	}
	if got, want := one("histogram_sum("+sel+")"), strconv.FormatFloat(sum, 'f', -1, 64); got != want {
		t.Errorf("histogram_sum(%s) = %s; want %s", sel, got, want)
	}
	if positive {
		sorted := slices.Sorted(slices.Values(vals))
		for _, q := range []float64{0.5, 0.9, 0.99} {
			v := sorted[int(math.Ceil(q*float64(len(vals))))-1]
			// v's bucket j: base^(j-1) < v <= base^j.
			j := int(math.Ceil(math.Log2(v) * math.Exp2(float64(sent.Schema))))
			for nativeBound(sent.Schema, j) < v {
				j++
			}
			for nativeBound(sent.Schema, j-1) >= v {
				j--
			}
			lo, up := nativeBound(sent.Schema, j-1), nativeBound(sent.Schema, j)
			expr := fmt.Sprintf("histogram_quantile(%g, %s)", q, sel)
			got, err := strconv.ParseFloat(one(expr), 64)
			if err != nil || got < lo*(1-1e-12) || got > up*(1+1e-12) {
				t.Errorf("%s = %v (%v); want within [%v, %v], the bucket of the quantile %v", expr, got, err, lo, up, v)
			}
		}
	}
	var zero uint64
	pos, neg := map[int]uint64{}, map[int]uint64{}
	for _, b := range hs[0].Buckets {
		lo, err1 := strconv.ParseFloat(b.Lower, 64)
		up, err2 := strconv.ParseFloat(b.Upper, 64)
		c, err3 := strconv.ParseUint(b.Count, 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: bucket %+v", sel, b)
		}
		abs, into, negative := up, pos, false // a positive bucket: (lower, upper]
		switch {
		case lo == 0 && up == 0:
			zero += c
			continue
		case up <= 0: // a negative one: [lower, upper)
			abs, into, negative = -lo, neg, true
		}
		j := int(math.Round(math.Log2(abs) * math.Exp2(float64(sent.Schema))))
		wantLo, wantUp := nativeBound(sent.Schema, j-1), nativeBound(sent.Schema, j)
		if negative {
			wantLo, wantUp = -wantUp, -wantLo
		}
		if math.Abs(lo-wantLo) > 1e-9*math.Abs(wantLo) || math.Abs(up-wantUp) > 1e-9*math.Abs(wantUp) {
			t.Errorf("%s: stored bucket %+v is not bucket %d of schema %d", sel, b, j, sent.Schema)
		}
		into[j] = c
	}
	if zero != sent.ZeroCount {
		t.Errorf("%s: stored zero count %d; sent %d", sel, zero, sent.ZeroCount)
	}
	if want := nativeCounts(sent.PositiveSpans, sent.PositiveDeltas); !maps.Equal(pos, want) {
		t.Errorf("%s: stored positive buckets %v; sent %v", sel, pos, want)
	}
	if want := nativeCounts(sent.NegativeSpans, sent.NegativeDeltas); !maps.Equal(neg, want) {
		t.Errorf("%s: stored negative buckets %v; sent %v", sel, neg, want)
	}
}
