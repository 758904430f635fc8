package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

func TestOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Endpoint: "localhost:4318"}, "Endpoint"},
		{Options{Endpoint: "ftp://h"}, "Endpoint"},
		{Options{Endpoint: "http://"}, "Endpoint"},
		{Options{Endpoint: "http://h/?q=1"}, "Endpoint"},
		{Options{Endpoint: "http://h\x7f"}, "Endpoint"},
		{Options{Header: http.Header{"content-type": {"text/plain"}}}, "Header"},
		{Options{Header: http.Header{"Content-Encoding": {"br"}}}, "Header"},
		{Options{Interval: -1}, "Interval"},
		{Options{Timeout: -time.Second}, "Timeout"},
		{Options{Temporality: 7}, "Temporality"},
		{Options{Compression: Gzip, GzipLevel: 42}, "GzipLevel 42"},
		{Options{Compression: 9}, "Compression"},
		{Options{Retry: Retry{InitialBackoff: -1}}, "Retry"},
		{Options{Retry: Retry{InitialBackoff: time.Second, MaxBackoff: time.Millisecond}}, "Retry.MaxBackoff"},
		{Options{Resource: exporter.Resource{Attributes: []wire.Attribute{{Value: "v"}}}}, "Resource"},
	} {
		if _, err := New(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v; want an error mentioning %q", tc.o, err, tc.want)
		}
	}
}

func TestURL(t *testing.T) {
	for endpoint, want := range map[string]string{
		"":                        "http://localhost:4318/v1/metrics",
		"https://collector:4318/": "https://collector:4318/v1/metrics",
		"http://10.0.0.1/otlp":    "http://10.0.0.1/otlp/v1/metrics",
	} {
		e, err := New(Options{Endpoint: endpoint})
		if err != nil {
			t.Fatal(err)
		}
		if e.URL() != want {
			t.Errorf("Endpoint %q: URL %q; want %q", endpoint, e.URL(), want)
		}
	}
}

// server is an OTLP/HTTP receiver on 127.0.0.1 whose answers the test
// scripts: answer(n) answers the n-th request (from 0).
type server struct {
	*httptest.Server
	n      atomic.Int32
	mu     sync.Mutex
	bodies [][]byte // uncompressed
	hdrs   []http.Header
	times  []time.Time
}

func newServer(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.n.Add(1) - 1)
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		data, err := io.ReadAll(body)
		if err != nil {
			return // the client gave up
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, data)
		s.hdrs = append(s.hdrs, r.Header.Clone())
		s.times = append(s.times, time.Now())
		s.mu.Unlock()
		if answer == nil {
			w.WriteHeader(http.StatusOK)
			return
		}
		answer(n, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() int { return int(s.n.Load()) }

// got returns what the server received: bodies, headers, arrival times.
func (s *server) got() ([][]byte, []http.Header, []time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies, s.hdrs, s.times
}

// fastRetry retries quickly, for the tests.
var fastRetry = Retry{InitialBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}

func TestExportHeadersAndBody(t *testing.T) {
	f := newFixture(t)
	f.record(t, "/a", "200", 3, 4)
	s := newServer(t, nil)
	e, err := New(Options{Endpoint: s.URL, Header: http.Header{"Authorization": {"Bearer x"}, "X-Scope": {"a", "b"}},
		Resource: exporter.Resource{ServiceName: "svc"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	bodies, hdrs, _ := s.got()
	h := hdrs[0]
	if h.Get("Content-Type") != "application/x-protobuf" || h.Get("Content-Encoding") != "" ||
		h.Get("Authorization") != "Bearer x" || strings.Join(h.Values("X-Scope"), ",") != "a,b" || h.Get("User-Agent") != userAgent {
		t.Errorf("headers %v", h)
	}
	d := decodeRequest(t, bodies[0])
	if d.resource["service.name"] != "svc" || f.metric(t, d, "count").points["route=/a,status=200"].asInt != 1 {
		t.Errorf("request %+v", d)
	}
	st := e.Stats()
	if st.Exports != 1 || st.Requests != 1 || st.Failures != 0 || st.Points == 0 || st.Bytes != uint64(len(bodies[0])) || st.LastSuccess.IsZero() {
		t.Errorf("Stats %+v", st)
	}
}

func TestGzip(t *testing.T) {
	f := newFixture(t)
	for i := range 50 {
		f.record(t, "/gz", "200", float64(i), int64(i))
	}
	s := newServer(t, nil)
	e, err := New(Options{Endpoint: s.URL, Compression: Gzip})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the gzip writer is reused
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	bodies, hdrs, _ := s.got()
	for i, h := range hdrs {
		if h.Get("Content-Encoding") != "gzip" {
			t.Errorf("request %d: Content-Encoding %q", i, h.Get("Content-Encoding"))
		}
		if p := f.metric(t, decodeRequest(t, bodies[i]), "count").points["route=/gz,status=200"]; p.asInt != 50 {
			t.Errorf("request %d: count %d", i, p.asInt)
		}
	}
	if st := e.Stats(); st.Bytes >= uint64(len(bodies[0])+len(bodies[1])) {
		t.Errorf("Stats.Bytes %d: not the compressed size", st.Bytes)
	}
}

func TestRetryAfter429(t *testing.T) {
	newFixture(t).record(t, "/a", "", 1, 1)
	s := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	// A backoff far shorter than Retry-After: the wait must be the answer's.
	e, _ := New(Options{Endpoint: s.URL, Interval: 10 * time.Second, Retry: fastRetry})
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.requests() != 2 {
		t.Fatalf("%d requests; want 2", s.requests())
	}
	_, _, times := s.got()
	if wait := times[1].Sub(times[0]); wait < time.Second {
		t.Errorf("retried after %v; want at least Retry-After's 1s", wait)
	}
	if st := e.Stats(); st.Requests != 2 || st.Retries != 1 || st.Failures != 0 || st.Dropped != 0 {
		t.Errorf("Stats %+v", st)
	}
}

func TestRetryAfterBeyondDeadline(t *testing.T) {
	newFixture(t).record(t, "/a", "", 1, 1)
	s := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	e, _ := New(Options{Endpoint: s.URL, Interval: 10 * time.Second})
	start := time.Now()
	err := e.Export(context.Background())
	var he *exporter.HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusServiceUnavailable || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("got %v; want HTTP 503, not retried past the deadline", err)
	}
	if s.requests() != 1 || time.Since(start) > 5*time.Second {
		t.Errorf("%d requests in %v; want 1, at once", s.requests(), time.Since(start))
	}
}

func TestRetry503ThenSuccess(t *testing.T) {
	newFixture(t).record(t, "/a", "", 1, 1)
	s := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n < 2 {
			w.WriteHeader([]int{http.StatusServiceUnavailable, http.StatusBadGateway}[n])
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	e, _ := New(Options{Endpoint: s.URL, Retry: fastRetry})
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := e.Stats(); s.requests() != 3 || st.Requests != 3 || st.Retries != 2 || st.Failures != 0 {
		t.Errorf("%d requests; Stats %+v", s.requests(), st)
	}
	// The retries sent the same request.
	if bodies, _, _ := s.got(); !bytes.Equal(bodies[0], bodies[2]) {
		t.Error("the retried request differs")
	}
}

// TestNoRetry400 checks a 400 is final, and its google.rpc.Status message
// is quoted.
func TestNoRetry400(t *testing.T) {
	newFixture(t).record(t, "/a", "", 1, 1)
	status := appendString(binary.AppendUvarint([]byte{1 << 3}, 3), tagStatusMessage, "metric name is invalid")
	s := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(status)
	})
	e, _ := New(Options{Endpoint: s.URL, Retry: fastRetry})
	err := e.Export(context.Background())
	var he *exporter.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 400 || he.Body != "metric name is invalid" {
		t.Fatalf("got %v; want HTTP 400 quoting the status message", err)
	}
	st := e.Stats()
	if s.requests() != 1 || st.Retries != 0 || st.Failures != 1 || st.Dropped == 0 || st.LastError == nil {
		t.Errorf("%d requests; Stats %+v", s.requests(), st)
	}
}

func TestRetryDisabled(t *testing.T) {
	newFixture(t).record(t, "/a", "", 1, 1)
	s := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	e, _ := New(Options{Endpoint: s.URL, Retry: Retry{Disabled: true}})
	if err := e.Export(context.Background()); err == nil || s.requests() != 1 {
		t.Errorf("got %v after %d requests; want an error after 1", err, s.requests())
	}
}

// TestClosedPort checks a refused connection is retried with backoff until
// the export's deadline (the Interval), then reported.
func TestClosedPort(t *testing.T) {
	newFixture(t).record(t, "/a", "", 1, 1)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	e, _ := New(Options{Endpoint: "http://" + addr, Interval: 2 * time.Second,
		Retry: Retry{InitialBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond}})
	start := time.Now()
	err = e.Export(context.Background())
	took := time.Since(start)
	var ne *net.OpError
	if !errors.As(err, &ne) {
		t.Fatalf("got %v; want a connection error", err)
	}
	st := e.Stats()
	if st.Requests < 3 || st.Retries != st.Requests-1 || st.Failures != 1 {
		t.Errorf("Stats %+v; want several attempts", st)
	}
	if took > 2*time.Second+5*time.Second { // the Interval, with seconds to spare on a loaded machine
		t.Errorf("took %v; want about the 2 s Interval", took)
	}
}

// TestSlowServer checks a server slower than Timeout: each request is cut
// at Timeout and retried until the Interval is spent.
func TestSlowServer(t *testing.T) {
	newFixture(t).record(t, "/a", "", 1, 1)
	s := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	e, _ := New(Options{Endpoint: s.URL, Timeout: 500 * time.Millisecond, Interval: 2 * time.Second, Retry: fastRetry})
	start := time.Now()
	err := e.Export(context.Background())
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v; want a timeout", err)
	}
	if st := e.Stats(); st.Requests < 2 || st.Failures != 1 {
		t.Errorf("Stats %+v; want the request retried", st)
	}
	if took < 1900*time.Millisecond || took > 2*time.Second+5*time.Second {
		t.Errorf("took %v; want about the 2 s Interval", took)
	}
}

// TestContextBoundsExport checks the caller's context bounds an export
// and its retries.
func TestContextBoundsExport(t *testing.T) {
	newFixture(t).record(t, "/a", "", 1, 1)
	s := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	e, _ := New(Options{Endpoint: s.URL, Interval: time.Hour, Retry: Retry{InitialBackoff: 20 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	if err := e.Export(ctx); err == nil {
		t.Fatal("no error")
	}
	if took := time.Since(start); took > 2*time.Second+5*time.Second || s.requests() < 2 {
		t.Errorf("%d requests in %v; want retries within the context's 2 s", s.requests(), took)
	}
}

func TestStopExportsFinalSnapshot(t *testing.T) {
	f := newFixture(t)
	s := newServer(t, nil)
	e, _ := New(Options{Endpoint: s.URL, Interval: time.Hour})
	e.Start()
	e.Start()
	f.record(t, "/final", "", 2, 3)
	if err := e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.requests() != 1 {
		t.Fatalf("%d requests; want the final one", s.requests())
	}
	bodies, _, _ := s.got()
	if p := f.metric(t, decodeRequest(t, bodies[0]), "sum").points["route=/final"]; p.value() != 3 {
		t.Errorf("final snapshot: sum %v; want 3", p.value())
	}
}

func TestPeriodicExportsAndOnError(t *testing.T) {
	newFixture(t).record(t, "/a", "", 1, 1)
	s := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadRequest) })
	errs := make(chan error, 10)
	e, _ := New(Options{Endpoint: s.URL, Interval: 20 * time.Millisecond, OnError: func(err error) {
		select {
		case errs <- err:
		default:
		}
	}})
	e.Start()
	err := <-errs
	_ = e.Stop(context.Background())
	if !strings.Contains(err.Error(), "400") {
		t.Errorf("OnError got %v; want the 400", err)
	}
}

// TestPartialSuccessAndLogging checks a partial success is a success,
// counted and logged, and the Logger reports state changes once each.
func TestPartialSuccessAndLogging(t *testing.T) {
	newFixture(t).record(t, "/a", "", 1, 1)
	inner := appendString(binary.AppendUvarint([]byte{tagPSRejected}, 2), tagPSMessage, "2 points too old")
	partial := append(appendLen(nil, tagResponsePartialSuccess, len(inner)), inner...)
	// ok, partial, partial, fail, fail, ok
	script := []int{0, 1, 1, 2, 2, 0}
	s := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
		switch script[n] {
		case 1:
			_, _ = w.Write(partial)
		case 2:
			w.WriteHeader(http.StatusBadRequest)
		}
	})
	var log bytes.Buffer
	e, _ := New(Options{Endpoint: s.URL, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	for i, step := range script {
		err := e.Export(context.Background())
		if (err != nil) != (step == 2) {
			t.Fatalf("export %d: %v", i, err)
		}
	}
	st := e.Stats()
	if st.Rejected != 4 || st.Failures != 2 || st.Exports != 6 {
		t.Errorf("Stats %+v", st)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "rejected=2") || !strings.Contains(lines[0], "too old") ||
		!strings.Contains(lines[1], "exports failing") || !strings.Contains(lines[2], "exports recovered") {
		t.Errorf("log:\n%s\nwant 3 lines: partial success, failure, recovery", log.String())
	}
}

// TestNothingToSend checks a delta export with nothing new sends nothing.
func TestNothingToSend(t *testing.T) {
	m := stats.Int64("otlp/nothing/m", "", stats.UnitDimensionless)
	v := &view.View{Name: "otlp/nothing", Measure: m, Aggregation: view.Count()}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	stats.Record(context.Background(), m.M(1))
	s := newServer(t, nil)
	e, _ := New(Options{Endpoint: s.URL, Temporality: Delta})
	for range 3 {
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if st := e.Stats(); s.requests() != 1 || st.Exports != 3 || st.Requests != 1 || st.Points != 1 {
		t.Errorf("%d requests; Stats %+v; want 1 request", s.requests(), st)
	}
}

// TestExportConcurrentSafe exports, reads Stats and records concurrently
// (run with -race). Every export has seconds: an export cut short after
// the receiver took it would be sent again, and the exact total below is
// the point of the test (a loaded machine must not change it).
func TestExportConcurrentSafe(t *testing.T) {
	f := newFixture(t)
	s := newServer(t, nil)
	e, _ := New(Options{Endpoint: s.URL, Temporality: Delta, Interval: time.Minute, Timeout: 10 * time.Second})
	e.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := make(chan struct{})
	var wg sync.WaitGroup
	const recorders, records = 2, 500
	for g := range recorders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range records {
				f.record(t, "/c", "", float64(g+i), 1)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		for range 20 {
			if err := e.Export(ctx); err != nil {
				t.Error(err)
			}
			_ = e.Stats()
		}
	}()
	close(start)
	wg.Wait()
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// Delta: the counts of all requests add up to every record.
	var total int64
	bodies, _, _ := s.got()
	for _, b := range bodies {
		if m := decodeRequest(t, b).metrics[f.prefix+"count"]; m != nil {
			total += m.points["route=/c"].asInt
		}
	}
	if total != recorders*records {
		t.Errorf("delta counts add up to %d; want %d", total, recorders*records)
	}
}

// TestDeltaQueueRecoversExactly: delta requests that could not be sent are
// queued and sent first, oldest first, when the receiver is back, so the
// deltas it accepts add up to everything recorded.
func TestDeltaQueueRecoversExactly(t *testing.T) {
	f := newFixture(t)
	var failing atomic.Bool
	var mu sync.Mutex
	var delivered uint64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if failing.Load() {
			// Down for an hour: queued at once, not retried within the
			// export.
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		d := decodeRequest(t, body)
		mu.Lock()
		defer mu.Unlock()
		if m := d.metrics[f.prefix+"count"]; m != nil {
			for _, p := range m.points {
				delivered += uint64(p.asInt)
			}
		}
	}))
	defer srv.Close()
	e, err := New(Options{Endpoint: srv.URL, Temporality: Delta, Interval: 30 * time.Second, Timeout: 10 * time.Second,
		Retry: Retry{InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	recorded := 0
	for round := range 4 {
		failing.Store(round == 1 || round == 2) // the receiver is down for two exports
		for range 3 + round {
			f.record(t, "/a", "200", 2, 10)
			recorded++
		}
		err := e.Export(context.Background())
		if failing.Load() != (err != nil) {
			t.Fatalf("round %d: export error %v with the receiver failing=%v", round, err, failing.Load())
		}
		if st := e.Stats(); failing.Load() && st.Queued != round {
			t.Errorf("round %d: %d requests queued; want %d", round, st.Queued, round)
		}
	}
	if st := e.Stats(); st.Queued != 0 || st.Dropped != 0 {
		t.Errorf("Stats %+v; want the queue drained and nothing dropped", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if delivered != uint64(recorded) {
		t.Errorf("delivered deltas add up to %d; recorded %d", delivered, recorded)
	}
}

// TestQueuedDeltaSentWithNothingNew: a delta request queued while the
// receiver was down is sent by the next export even when that export has
// no new points, and by Stop (issue 12: the receiver got 0 of 5 records,
// as Export returned early on an empty snapshot before the queue).
func TestQueuedDeltaSentWithNothingNew(t *testing.T) {
	for _, viaStop := range []bool{false, true} {
		f := newFixture(t)
		var failing atomic.Bool
		var mu sync.Mutex
		var delivered int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if failing.Load() {
				w.Header().Set("Retry-After", "3600")
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if m := decodeRequest(t, body).metrics[f.prefix+"count"]; m != nil {
				for _, p := range m.points {
					delivered += p.asInt
				}
			}
		}))
		defer srv.Close()
		e, err := New(Options{Endpoint: srv.URL, Temporality: Delta, Interval: time.Minute, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		failing.Store(true)
		for range 5 {
			f.record(t, "/a", "200", 2, 10)
		}
		if err := e.Export(ctx); err == nil {
			t.Fatal("export to a failing receiver succeeded")
		}
		failing.Store(false)
		if viaStop {
			err = e.Stop(ctx)
		} else {
			err = e.Export(ctx) // nothing recorded since: no new points
		}
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := delivered
		mu.Unlock()
		if st := e.Stats(); got != 5 || st.Queued != 0 || st.Dropped != 0 {
			t.Errorf("stop=%v: the receiver got %d of 5 records; stats %+v", viaStop, got, st)
		}
		if !viaStop {
			_ = e.Stop(ctx)
		}
	}
}

// TestExporterEvictIdleAfter: the option reaches the encoder, and Stop
// unregisters the exporter as a reader the other delta readers' evictions
// would wait for.
func TestExporterEvictIdleAfter(t *testing.T) {
	f := newFixture(t)
	srv := newServer(t, nil)
	e, err := New(Options{Endpoint: srv.URL, Temporality: Delta, EvictIdleAfter: 1, Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	f.record(t, "/a", "200", 2, 10)
	for range 3 { // reads /a, finds it idle and seals it, reads it sealed and frees it
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if rows, _ := view.RetrieveData(f.prefix + "count"); len(rows) != 0 {
		t.Errorf("%d rows left after /a was idle for an export", len(rows))
	}
	// A second delta exporter that has stopped no longer holds the
	// series others seal (while it lives: it is kept alive below).
	other, err := New(Options{Endpoint: srv.URL, Temporality: Delta, Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := other.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.record(t, "/b", "200", 2, 10)
	for range 3 {
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if rows, _ := view.RetrieveData(f.prefix + "count"); len(rows) != 0 {
		t.Errorf("%d rows left: a stopped exporter still holds what another sealed", len(rows))
	}
	runtime.KeepAlive(other)
}

// TestPartialSuccessEndsWithFullSuccess checks a full success after
// partial ones is logged as a change, so that the next partial success is
// logged again: before, the state stayed "partial" for good and every
// later rejection went unlogged.
func TestPartialSuccessEndsWithFullSuccess(t *testing.T) {
	inner := appendString(binary.AppendUvarint([]byte{tagPSRejected}, 3), tagPSMessage, "3 points too old")
	// partial, partial, ok, ok, partial
	e, log := exportScripted(t, inner, []bool{true, true, false, false, true})
	if st := e.Stats(); st.Rejected != 9 || st.Failures != 0 || st.Exports != 5 {
		t.Errorf("Stats %+v; want 9 rejected, 0 failures, 5 exports", st)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "rejected=3") ||
		!strings.Contains(lines[1], "accepts every data point again") || !strings.Contains(lines[2], "rejected=3") {
		t.Errorf("log:\n%s\nwant 3 lines: partial success, every point accepted, partial success", log.String())
	}
}

// TestPartialSuccessWarningOnly (issue 41, item 12): a partial_success
// with 0 rejected points and only a message is the OTLP specification's
// warning on a full success: logged once per message as a warning, not
// as rejected data points, and no partial state (so no "accepts every
// data point again" line follows). Before, it was logged as a rejection
// and flipped the partial state.
func TestPartialSuccessWarningOnly(t *testing.T) {
	// warning, warning, ok, warning
	e, log := exportScripted(t, appendString(nil, tagPSMessage, "attribute value truncated"), []bool{true, true, false, true})
	if st := e.Stats(); st.Rejected != 0 || st.Failures != 0 {
		t.Errorf("Stats %+v; want nothing rejected", st)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "with a warning") || !strings.Contains(lines[0], "attribute value truncated") {
		t.Errorf("log:\n%s\nwant one line: the warning, once", log.String())
	}
}

// exportScripted records into a fixture and exports once per step of
// script to a server that answers a partial_success holding inner where
// the step is true (a full success elsewhere); it returns the exporter
// and what it logged.
func exportScripted(t *testing.T, inner []byte, script []bool) (*Exporter, *bytes.Buffer) {
	t.Helper()
	newFixture(t).record(t, "/a", "", 1, 1)
	answer := append(appendLen(nil, tagResponsePartialSuccess, len(inner)), inner...)
	s := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
		if script[n] {
			_, _ = w.Write(answer)
		}
	})
	log := new(bytes.Buffer)
	e, _ := New(Options{Endpoint: s.URL, Logger: slog.New(slog.NewTextHandler(log, nil))})
	for i := range script {
		if err := e.Export(context.Background()); err != nil {
			t.Fatalf("export %d: %v", i, err)
		}
	}
	return e, log
}
