package remotewrite

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/exporter/push"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/internal/snappy"
	"github.com/zerostat/zerostat/internal/testlog"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var (
	keyRoute  = tag.MustNewKey("route")
	keyMethod = tag.MustNewKey("Method") // upper case: sorts before "__name__"
)

var seq atomic.Int64

func register(t testing.TB, vs ...*view.View) {
	t.Helper()
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
}

func ctxWith(t testing.TB, muts ...tag.Mutator) context.Context {
	t.Helper()
	ctx, err := tag.New(context.Background(), muts...)
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

// fixture registers one view per aggregation (plus one over its
// cardinality limit) under a fresh prefix and records a known workload.
func fixture(t testing.TB) string {
	p := fmt.Sprintf("rw%d", seq.Add(1))
	lat := stats.Float64(p+"/latency", "Latency", stats.UnitSeconds)
	size := stats.Int64(p+"/size", "Size", stats.UnitBytes)
	register(t,
		&view.View{Name: p + "/requests", Measure: lat, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, keyMethod}},
		&view.View{Name: p + "/latency", Measure: lat, Aggregation: view.Distribution(0.01, 0.1, 1), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/size", Measure: size, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/last", Measure: size, Aggregation: view.LastValue(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/capped", Measure: size, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 1},
	)
	a := ctxWith(t, tag.Upsert(keyRoute, "/a"), tag.Upsert(keyMethod, "GET"))
	b := ctxWith(t, tag.Upsert(keyRoute, `/b"\`))
	for _, v := range []float64{0.005, 0.05, 0.05, 2} {
		stats.Record(a, lat.M(v), size.M(int64(v*1000)))
	}
	stats.Record(b, lat.M(0.5), size.M(-3))
	stats.Record(context.Background(), lat.M(0))
	return p
}

func newWriter(t testing.TB, opts Options) *Writer {
	t.Helper()
	if opts.URL == "" {
		opts.URL = "http://127.0.0.1:1/api/v1/write"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	w, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// only keeps the series whose name starts with prefix.
func only(ss []series, prefix string) []series {
	var out []series
	for _, s := range ss {
		if strings.HasPrefix(s.labels[slices.IndexFunc(s.labels, func(l label) bool { return l.name == "__name__" })].value, prefix) {
			out = append(out, s)
		}
	}
	return out
}

func TestEncode(t *testing.T) {
	p := fixture(t)
	w := newWriter(t, Options{Namespace: "ns", ConstLabels: map[string]string{"job": "j", "A": "first"}})
	ss, err := decodeWriteRequest(w.AppendWriteRequest(nil, 1700000000123))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range only(ss, "ns_"+p+"_") {
		if s.ts != 1700000000123 {
			t.Errorf("timestamp %d", s.ts)
		}
		var ls []string
		for _, l := range s.labels {
			ls = append(ls, l.name+"="+l.value)
		}
		got = append(got, strings.Join(ls, ",")+" "+strconv.FormatFloat(s.value, 'g', -1, 64))
	}
	// Views by name, series in table order: compare as sets, but labels
	// in their exact (sorted) order.
	want := []string{
		`A=first,__name__=ns_rw_capped_total,job=j,route=/a 4`,
		`A=first,__name__=ns_rw_capped_total,job=j,otel_metric_overflow=true 1`,
		`A=first,__name__=ns_rw_last_bytes,job=j,route=/a 2000`,
		`A=first,__name__=ns_rw_last_bytes,job=j,route=/b"\ -3`,
		`A=first,__name__=ns_rw_latency_seconds_bucket,job=j,le=0.01 1`,
		`A=first,__name__=ns_rw_latency_seconds_bucket,job=j,le=0.1 1`,
		`A=first,__name__=ns_rw_latency_seconds_bucket,job=j,le=1.0 1`,
		`A=first,__name__=ns_rw_latency_seconds_bucket,job=j,le=+Inf 1`,
		`A=first,__name__=ns_rw_latency_seconds_sum,job=j 0`,
		`A=first,__name__=ns_rw_latency_seconds_count,job=j 1`,
		`A=first,__name__=ns_rw_latency_seconds_bucket,job=j,le=0.01,route=/a 1`,
		`A=first,__name__=ns_rw_latency_seconds_bucket,job=j,le=0.1,route=/a 3`,
		`A=first,__name__=ns_rw_latency_seconds_bucket,job=j,le=1.0,route=/a 3`,
		`A=first,__name__=ns_rw_latency_seconds_bucket,job=j,le=+Inf,route=/a 4`,
		`A=first,__name__=ns_rw_latency_seconds_sum,job=j,route=/a 2.105`,
		`A=first,__name__=ns_rw_latency_seconds_count,job=j,route=/a 4`,
		`A=first,__name__=ns_rw_latency_seconds_bucket,job=j,le=0.01,route=/b"\ 0`,
		`A=first,__name__=ns_rw_latency_seconds_bucket,job=j,le=0.1,route=/b"\ 0`,
		`A=first,__name__=ns_rw_latency_seconds_bucket,job=j,le=1.0,route=/b"\ 1`,
		`A=first,__name__=ns_rw_latency_seconds_bucket,job=j,le=+Inf,route=/b"\ 1`,
		`A=first,__name__=ns_rw_latency_seconds_sum,job=j,route=/b"\ 0.5`,
		`A=first,__name__=ns_rw_latency_seconds_count,job=j,route=/b"\ 1`,
		`A=first,Method=GET,__name__=ns_rw_requests_total,job=j,route=/a 4`,
		`A=first,__name__=ns_rw_requests_total,job=j,route=/b"\ 1`,
		`A=first,__name__=ns_rw_requests_total,job=j 1`,
		`A=first,__name__=ns_rw_size_bytes_total,job=j,route=/a 2105`,
		`A=first,__name__=ns_rw_size_bytes_total,job=j,route=/b"\ -3`,
	}
	for i := range want {
		want[i] = strings.ReplaceAll(want[i], "ns_rw_", "ns_"+p+"_")
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// parseExposition reads the text format into series keys (as
// series.key renders them) and values.
func parseExposition(t *testing.T, text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		head, val := line[:sp], line[sp+1:]
		name, rest, hasLabels := strings.Cut(head, "{")
		var parts []string
		for hasLabels && rest != "}" {
			ln, r, _ := strings.Cut(rest, `="`)
			var v strings.Builder
			i := 0
			for ; r[i] != '"'; i++ {
				if r[i] == '\\' {
					i++
					v.WriteByte(map[byte]byte{'\\': '\\', '"': '"', 'n': '\n'}[r[i]])
					continue
				}
				v.WriteByte(r[i])
			}
			parts = append(parts, ln+"="+v.String())
			rest = strings.TrimPrefix(r[i+1:], ",")
		}
		slices.Sort(parts)
		out[name+"{"+strings.Join(parts, ",")+"}"] = val
	}
	return out
}

// Remote write sends exactly the series, names, labels and values that the
// exposition serves.
func TestSameSeriesAsExposition(t *testing.T) {
	p := fixture(t)
	opts := prometheus.Options{Namespace: "x", ConstLabels: map[string]string{"env": "e"}}
	text := string(prometheus.NewHandler(opts).AppendFormat(nil, prometheus.FormatText))
	exp := parseExposition(t, text)
	w := newWriter(t, Options{Namespace: opts.Namespace, ConstLabels: opts.ConstLabels})
	ss, err := decodeWriteRequest(w.AppendWriteRequest(nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range ss {
		got[s.key()] = string(promname.AppendFloat(nil, s.value))
	}
	if len(got) != len(exp) {
		t.Errorf("%d remote-write series; the exposition has %d", len(got), len(exp))
	}
	n := 0
	for k, v := range exp {
		if got[k] != v {
			t.Errorf("%s: remote write %q; exposition %q", k, got[k], v)
		}
		if strings.HasPrefix(k, "x_"+p) {
			n++
		}
	}
	if n != 27 {
		t.Errorf("%d fixture series; want 27", n)
	}
}

func TestEncodeAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	p := fmt.Sprintf("rwa%d", seq.Add(1))
	keys := []tag.Key{tag.MustNewKey("method"), tag.MustNewKey("route"), tag.MustNewKey("host")}
	m := stats.Float64(p+"/m", "", stats.UnitMilliseconds)
	aggs := []*view.Aggregation{view.Count(), view.Sum(), view.LastValue(), view.Distribution(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)}
	var vs []*view.View
	for i := range 20 {
		vs = append(vs, &view.View{Name: fmt.Sprintf("%s/v%02d", p, i), Measure: m, Aggregation: aggs[i%4], TagKeys: keys})
	}
	register(t, vs...)
	for r := range 500 {
		ctx := ctxWith(t, tag.Upsert(keys[0], []string{"GET", "PUT"}[r%2]), tag.Upsert(keys[1], fmt.Sprintf("/r/%d", r)), tag.Upsert(keys[2], fmt.Sprintf("h%d", r%5)))
		stats.Record(ctx, m.M(float64(r)))
		if r%2 == 0 { // half the histogram series have an exemplar
			sc := stats.SpanContext{TraceID: [16]byte{0: byte(r), 15: 1}, SpanID: [8]byte{7: byte(r)}}
			if err := stats.RecordWithOptions(ctx, stats.WithMeasurements(m.M(float64(r))),
				stats.WithAttachments(map[string]interface{}{stats.AttachmentKeySpanContext: sc})); err != nil {
				t.Fatal(err)
			}
		}
	}
	w := newWriter(t, Options{ConstLabels: map[string]string{"job": "bench"}})
	var z snappy.Encoder
	var zb []byte
	if ss, err := decodeWriteRequest(w.AppendWriteRequest(nil, 1)); err != nil || len(exemplarsOf(ss, p)) != 5*250 {
		t.Fatalf("a push carries exemplars on %d series (%v); want 5 views x 250", len(exemplarsOf(ss, p)), err)
	}
	// Every encode carries the exemplars (none delivered), then, delivered,
	// none: neither allocates (a series' exemplar state is made on its
	// first push).
	for _, deliver := range []bool{false, true} {
		allocs := testing.AllocsPerRun(10, func() {
			w.encode(1)
			zb = z.Append(zb[:0], w.pb)
			if deliver {
				w.delivered(w.gen)
			}
		})
		if allocs != 0 {
			t.Errorf("delivered %v: %v allocs per encode; want 0", deliver, allocs)
		}
	}
	ss, err := decodeWriteRequest(w.AppendWriteRequest(nil, 1))
	if err != nil || len(exemplarsOf(ss, p)) != 0 {
		t.Errorf("after delivered pushes, a push carries exemplars on %d series (%v); want none", len(exemplarsOf(ss, p)), err)
	}
	if want := 7500 + 2500*13; len(w.counts) == 0 || w.total() < want {
		t.Errorf("%d series encoded; want at least %d", w.total(), want)
	}
	t.Logf("%d series, %d bytes, %d compressed", w.total(), len(w.pb), len(zb))
}

// received is what a test server got.
type received struct {
	mu         sync.Mutex
	requests   int
	series     []series
	perRequest [][]series // the series of each accepted request
	headers    []http.Header
}

func (rc *received) handler(t *testing.T, status func(n int) (int, http.Header)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.requests++
		n := rc.requests
		rc.headers = append(rc.headers, r.Header.Clone())
		rc.mu.Unlock()
		code, hdr := status(n)
		for k, v := range hdr {
			w.Header()[k] = v
		}
		if code/100 == 2 {
			raw, err := snappy.Decode(body)
			if err != nil {
				t.Errorf("snappy: %v", err)
			}
			ss, err := decodeWriteRequest(raw)
			if err != nil {
				t.Errorf("protobuf: %v", err)
			}
			rc.mu.Lock()
			rc.series = append(rc.series, ss...)
			rc.perRequest = append(rc.perRequest, ss)
			rc.mu.Unlock()
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, "status %d", code)
	}
}

func ok(int) (int, http.Header) { return http.StatusNoContent, nil }

func TestPushHeadersAndSplit(t *testing.T) {
	p := fixture(t)
	var rc received
	srv := httptest.NewServer(rc.handler(t, ok))
	defer srv.Close()
	w := newWriter(t, Options{URL: srv.URL, MaxSeriesPerRequest: 5, Header: http.Header{"Authorization": {"Bearer x"}}})
	if err := w.Push(context.Background()); err != nil {
		t.Fatal(err)
	}
	want, _ := decodeWriteRequest(w.AppendWriteRequest(nil, 0))
	st := w.Stats()
	if st.Points != uint64(len(want)) || st.DroppedPoints != 0 || st.Requests < 2 || st.Requests != uint64(len(rc.perRequest)) {
		t.Errorf("stats %+v; want %d samples in several requests (%d received)", st, len(want), len(rc.perRequest))
	}
	// A request ends only between rows: a histogram's buckets, _sum and
	// _count are in one request, and every request but the last has at
	// least MaxSeriesPerRequest series.
	for i, req := range rc.perRequest {
		if i < len(rc.perRequest)-1 && len(req) < 5 {
			t.Errorf("request %d has %d series; want at least 5", i, len(req))
		}
		parts := map[string]string{} // histogram row -> the suffixes seen
		for _, ser := range req {
			name, key := "", ""
			for _, l := range ser.labels {
				switch l.name {
				case "__name__":
					name = l.value
				case "le":
				default:
					key += l.name + "=" + l.value + ","
				}
			}
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(name, suf); ok {
					parts[base+"{"+key+"}"] += suf[1:2]
				}
			}
		}
		for row, got := range parts {
			if strings.Contains(got, "b") && (!strings.Contains(got, "s") || !strings.Contains(got, "c")) {
				t.Errorf("request %d splits histogram row %s (has %q of bucket, sum, count)", i, row, got)
			}
		}
	}
	if len(rc.series) != len(want) || len(only(rc.series, p)) != 27 {
		t.Errorf("received %d series (%d of the fixture); want %d (27)", len(rc.series), len(only(rc.series, p)), len(want))
	}
	for _, h := range rc.headers {
		for k, v := range map[string]string{"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf",
			"X-Prometheus-Remote-Write-Version": "0.1.0", "User-Agent": DefaultUserAgent, "Authorization": "Bearer x"} {
			if h.Get(k) != v {
				t.Errorf("header %s: %q; want %q", k, h.Get(k), v)
			}
		}
	}
}

// stateLog records the changes of state the Writer logs.
type stateLog struct {
	logger *slog.Logger
	log    *testlog.Log
}

func newStateLog() *stateLog {
	l, lg := testlog.New()
	return &stateLog{logger: l, log: lg}
}

// String lists the changes: "failing" and "ok", comma-separated.
func (l *stateLog) String() string {
	var ev []string
	for _, line := range l.log.Lines() {
		switch {
		case strings.Contains(line, "exports failing"):
			ev = append(ev, "failing")
		case strings.Contains(line, "exports recovered"):
			ev = append(ev, "ok")
		default:
			ev = append(ev, line)
		}
	}
	return strings.Join(ev, ",")
}

func TestFaults(t *testing.T) {
	fixture(t)
	type check func(t *testing.T, st Stats, elapsed time.Duration, rc *received)
	cases := []struct {
		name   string
		status func(n int) (int, http.Header)
		opts   Options
		check  check
	}{
		{"400 is not retried", func(int) (int, http.Header) { return 400, nil }, Options{},
			func(t *testing.T, st Stats, _ time.Duration, rc *received) {
				if st.Requests != 1 || st.Retries != 0 || st.Points != 0 || st.DroppedPoints == 0 {
					t.Errorf("stats %+v; want 1 request, no retry, all dropped", st)
				}
				var se *push.HTTPError
				if !errors.As(st.LastError, &se) || se.StatusCode != 400 || se.Body != "status 400" {
					t.Errorf("LastError %v; want an HTTPError 400 quoting the body", st.LastError)
				}
			}},
		{"500 then success", func(n int) (int, http.Header) {
			if n <= 2 {
				return 500, nil
			}
			return 200, nil
		}, Options{Retry: Retry{InitialBackoff: 10 * time.Millisecond}},
			func(t *testing.T, st Stats, _ time.Duration, rc *received) {
				if st.Requests != 3 || st.Retries != 2 || st.DroppedPoints != 0 || st.Points == 0 {
					t.Errorf("stats %+v; want 3 requests, 2 retries, nothing dropped", st)
				}
			}},
		{"429 honours Retry-After", func(n int) (int, http.Header) {
			if n == 1 {
				return 429, http.Header{"Retry-After": {"1"}}
			}
			return 204, nil
		}, Options{Interval: 3 * time.Second, Retry: Retry{InitialBackoff: time.Millisecond}},
			func(t *testing.T, st Stats, elapsed time.Duration, rc *received) {
				if st.Requests != 2 || st.Retries != 1 || st.DroppedPoints != 0 {
					t.Errorf("stats %+v; want 2 requests, 1 retry, nothing dropped", st)
				}
				if elapsed < 900*time.Millisecond {
					t.Errorf("retried after %v; Retry-After said 1 s", elapsed)
				}
			}},
		{"429 Retry-After beyond the interval", func(int) (int, http.Header) {
			return 429, http.Header{"Retry-After": {"60"}}
		}, Options{Interval: time.Second},
			func(t *testing.T, st Stats, elapsed time.Duration, rc *received) {
				if st.Requests != 1 || st.Retries != 0 || st.DroppedPoints == 0 {
					t.Errorf("stats %+v; want 1 request, no retry (given up at once), dropped", st)
				}
			}},
		{"500 until the interval ends", func(int) (int, http.Header) { return 503, nil },
			Options{Interval: 2 * time.Second, Retry: Retry{InitialBackoff: 5 * time.Millisecond, MaxBackoff: 40 * time.Millisecond}},
			func(t *testing.T, st Stats, elapsed time.Duration, rc *received) {
				if st.Retries < 3 || st.Points != 0 || st.DroppedPoints == 0 {
					t.Errorf("stats %+v; want several retries, all dropped", st)
				}
				// Bounded by the interval (a margin of seconds for a
				// loaded machine).
				if elapsed > 2*time.Second+5*time.Second {
					t.Errorf("push took %v; the interval is 2 s", elapsed)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rc received
			srv := httptest.NewServer(rc.handler(t, c.status))
			defer srv.Close()
			log := newStateLog()
			c.opts.URL, c.opts.Logger = srv.URL, log.logger
			c.opts.MaxSeriesPerRequest = 1 << 20 // one request per push
			w := newWriter(t, c.opts)
			start := time.Now()
			err := w.Push(context.Background())
			elapsed := time.Since(start)
			st := w.Stats()
			if (err != nil) != (st.DroppedPoints > 0) {
				t.Errorf("Push error %v with %d dropped", err, st.DroppedPoints)
			}
			c.check(t, st, elapsed, &rc)
			want := "failing"
			if err == nil {
				want = ""
			}
			if got := log.String(); got != want {
				t.Errorf("state changes %q; want %q", got, want)
			}
		})
	}
}

// A backend that is down, then up: the state changes are reported once
// each, however many pushes fail.
func TestDownThenUp(t *testing.T) {
	fixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	log := newStateLog()
	w := newWriter(t, Options{URL: "http://" + addr + "/api/v1/write", Interval: time.Second,
		Retry: Retry{InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}, Logger: log.logger})
	for range 3 {
		if err := w.Push(context.Background()); err == nil {
			t.Fatal("push to a closed port succeeded")
		}
	}
	st := w.Stats()
	if st.Exports != 3 || st.Failures != 3 || st.Points != 0 || st.DroppedPoints == 0 || st.Retries < 3 {
		t.Errorf("stats %+v", st)
	}
	perPush := st.DroppedPoints / 3
	// Bring it up on the same address.
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	var rc received
	srv := &http.Server{Handler: rc.handler(t, ok)}
	go srv.Serve(ln)
	defer srv.Close()
	for range 2 {
		if err := w.Push(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if got := log.String(); got != "failing,ok" {
		t.Errorf("state changes %q; want failing,ok", got)
	}
	if st := w.Stats(); st.Points != 2*perPush || st.LastSuccess.IsZero() {
		t.Errorf("stats %+v; want %d sent", st, 2*perPush)
	}
}

// A backend slower than Timeout: requests time out and are retried within
// the interval; recorders keep recording while the push waits.
func TestSlowBackendNeverBlocksRecorders(t *testing.T) {
	p := fixture(t)
	m := stats.Int64(p+"/during", "", "")
	register(t, &view.View{Name: p + "/during", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}})
	release := make(chan struct{})
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-r.Context().Done(): // the client timed out
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	w := newWriter(t, Options{URL: srv.URL, Interval: 600 * time.Millisecond, Timeout: 100 * time.Millisecond,
		Retry: Retry{InitialBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}})

	pushed := make(chan error, 1)
	go func() { pushed <- w.Push(context.Background()) }()
	// Wait until the push is stuck on the server, then record: every
	// record must complete while the push is still in progress.
	for hits.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	const n = 100000
	ctx := ctxWith(t, tag.Upsert(keyRoute, "/x"))
	for range n {
		stats.Record(ctx, m.M(1))
	}
	select {
	case err := <-pushed:
		t.Logf("the push ended (%v) before the recordings did; the check is weaker", err)
	default:
	}
	rows, err := view.RetrieveData(p + "/during")
	if err != nil || len(rows) != 1 || rows[0].Data.(*view.CountData).Value != n {
		t.Fatalf("rows %v, %v; want one row counting %d", rows, err, n)
	}
	select {
	case err := <-pushed:
		if err == nil {
			t.Fatal("push to a stuck server succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("push did not return within its interval")
	}
	st := w.Stats()
	if st.Requests < 2 || st.Retries < 1 || st.Points != 0 || st.DroppedPoints == 0 {
		t.Errorf("stats %+v; want timed-out requests retried and samples dropped", st)
	}
}

func TestStartStop(t *testing.T) {
	p := fixture(t)
	var rc received
	srv := httptest.NewServer(rc.handler(t, ok))
	defer srv.Close()
	w := newWriter(t, Options{URL: srv.URL, Interval: 50 * time.Millisecond})
	w.Start()
	w.Start() // no-op
	deadline := time.Now().Add(30 * time.Second)
	for w.Stats().Exports < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// The final push has seconds (without a deadline it would have one
	// 50 ms Interval, which a loaded machine can miss).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	pushes := w.Stats().Exports
	if pushes < 3 { // 2 periodic and the final one
		t.Errorf("%d pushes; want at least 3", pushes)
	}
	time.Sleep(120 * time.Millisecond)
	if got := w.Stats().Exports; got != pushes {
		t.Errorf("pushes went on after Stop: %d then %d", pushes, got)
	}
	if err := w.Stop(ctx); err != nil { // again: one more push
		t.Fatal(err)
	}
	if len(only(rc.series, p)) == 0 {
		t.Error("nothing of the fixture received")
	}
}

func TestPushConcurrentSafe(t *testing.T) {
	p := fixture(t)
	m := stats.Int64(p+"/conc", "", "")
	register(t, &view.View{Name: p + "/conc", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}})
	var rc received
	srv := httptest.NewServer(rc.handler(t, ok))
	defer srv.Close()
	w := newWriter(t, Options{URL: srv.URL})
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			for i := range 1000 {
				stats.Record(ctxWith(t, tag.Upsert(keyRoute, fmt.Sprintf("/%d", (g*1000+i)%40))), m.M(1))
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			for range 5 {
				if err := w.Push(context.Background()); err != nil {
					t.Error(err)
				}
				_ = w.Stats()
			}
		}()
	}
	close(start)
	wg.Wait()
	ss, _ := decodeWriteRequest(w.AppendWriteRequest(nil, 0))
	total := 0.0
	for _, s := range only(ss, p+"_conc_total") {
		total += s.value
	}
	if total != 3000 {
		t.Errorf("total %v; want 3000", total)
	}
}

func TestNewValidates(t *testing.T) {
	for _, o := range []Options{
		{},
		{URL: "ftp://x/"},
		{URL: "http://"},
		{URL: "http://x/", Interval: -1},
		{URL: "http://x/", Interval: time.Second, Timeout: 2 * time.Second},
		{URL: "http://x/", MaxSeriesPerRequest: -1},
		{URL: "http://x/", Retry: Retry{InitialBackoff: time.Second, MaxBackoff: time.Millisecond}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}

func TestProtoWidths(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 16383, 16384, 1<<21 - 1, 1 << 21, 1<<63 - 1, 1 << 63, math.MaxUint64} {
		b := binary.AppendUvarint(nil, v)
		if len(b) != varintSize(v) {
			t.Errorf("varint %d: %d bytes; size says %d", v, len(b), varintSize(v))
		}
		r := &reader{b}
		if got, err := r.varint(); err != nil || got != v {
			t.Errorf("varint %d: read %d, %v", v, got, err)
		}
	}
	// Label and sample edge cases: long strings (2-byte lengths), zero,
	// negative zero, NaN, a zero timestamp.
	long := strings.Repeat("v", 300)
	for _, c := range []struct {
		v  float64
		ts int64
	}{{0, 0}, {math.Copysign(0, -1), 1}, {math.NaN(), 1 << 40}, {math.Inf(-1), -1}} {
		b := appendTimeSeries(nil, []label{{"__name__", long}, {"a", "b"}}, c.v, c.ts, nil)
		ss, err := decodeWriteRequest(b)
		if err != nil || len(ss) != 1 {
			t.Fatalf("%v: %v", c, err)
		}
		s := ss[0]
		if math.Float64bits(s.value) != math.Float64bits(c.v) || s.ts != c.ts || s.labels[0].value != long {
			t.Errorf("round trip of %v, %d: %v, %d", c.v, c.ts, s.value, s.ts)
		}
	}
	// Exemplar edge cases: with and without a span, a +0 and a -0 value
	// (sent as 0, as OpenMetrics spells it), NaN, a time of 0, under a
	// millisecond, and far in the future (a 6-byte varint).
	sc := core.Exemplar{TraceID: [16]byte{0: 0xab, 15: 0x01}, SpanID: [8]byte{7: 0xff}}
	for _, x := range []core.Exemplar{
		{}, {Value: math.Copysign(0, -1), Time: 999_999}, {Value: 1.5, Time: 1_700_000_000_123_456_789},
		{Value: math.NaN(), Time: 1 << 62, TraceID: sc.TraceID, SpanID: sc.SpanID},
		{Value: -2, TraceID: sc.TraceID, SpanID: sc.SpanID},
	} {
		b := appendTimeSeries(nil, []label{{"__name__", long}}, 1, 1, &x)
		ss, err := decodeWriteRequest(b)
		if err != nil || len(ss) != 1 || len(ss[0].exemplars) != 1 {
			t.Fatalf("exemplar %+v: %+v, %v", x, ss, err)
		}
		e := ss[0].exemplars[0]
		var wantLabels []label
		if x.HasSpan() {
			wantLabels = []label{{"span_id", "00000000000000ff"}, {"trace_id", "ab000000000000000000000000000001"}}
		}
		if math.Float64bits(e.value) != math.Float64bits(x.Value+0) || e.ts != x.Time/1e6 || !slices.Equal(e.labels, wantLabels) {
			t.Errorf("round trip of exemplar %+v: %+v", x, e)
		}
		if n := exemplarSize(&x); len(b) < n || !bytes.HasSuffix(b, appendExemplar(nil, &x)) || len(appendExemplar(nil, &x)) != n {
			t.Errorf("exemplar %+v: size %d, appended %d bytes", x, n, len(appendExemplar(nil, &x)))
		}
	}
}

// TestIssue11NoDuplicateSeries: views whose names collide never put two
// time series of one name and labels in a request: the later registered
// is left out and reported. With OpenCensusNames the names are
// OpenCensus's.
func TestIssue11NoDuplicateSeries(t *testing.T) {
	m := stats.Int64("rwcol/m", "", "1")
	register(t, &view.View{Name: "rwcol/a_b", Measure: m, Aggregation: view.Count()})
	register(t, &view.View{Name: "rwcol/a.b", Measure: m, Aggregation: view.Count()})
	stats.Record(context.Background(), m.M(1))
	for _, oc := range []bool{false, true} {
		w := newWriter(t, Options{OpenCensusNames: oc})
		ss, err := decodeWriteRequest(w.AppendWriteRequest(nil, 1))
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, s := range only(ss, "rwcol_") {
			keys = append(keys, s.key())
		}
		want := "[rwcol_a_b_total{}] 1"
		if oc {
			want = "[rwcol_a_b{}] 1"
		}
		if got := fmt.Sprint(keys, " ", len(keys)); got != want {
			t.Errorf("OpenCensusNames %v: series %s; want %s", oc, got, want)
		}
		if err := w.Err(); err == nil || !strings.Contains(err.Error(), `view "rwcol/a.b" is left out`) {
			t.Errorf("Err() = %v", err)
		}
	}
}
