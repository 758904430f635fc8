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
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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
