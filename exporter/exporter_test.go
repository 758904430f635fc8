package exporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var (
	keyRoute  = tag.MustNewKey("route")
	keyStatus = tag.MustNewKey("status")
)

// fixture registers four views (one per aggregation) over fresh measures
// and records a known workload into them.
type fixture struct {
	names []string
	lat   *stats.Float64Measure
	bytes *stats.Int64Measure
}

var fixtureSeq int

func newFixture(t testing.TB, rows int) *fixture {
	t.Helper()
	fixtureSeq++
	p := fmt.Sprintf("exp%d/", fixtureSeq)
	f := &fixture{
		lat:   stats.Float64(p+"latency", "Latency", stats.UnitMilliseconds),
		bytes: stats.Int64(p+"bytes", "Bytes", stats.UnitBytes),
	}
	vs := []*view.View{
		{Name: p + "count", Measure: f.lat, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, keyStatus}},
		{Name: p + "dist", Measure: f.lat, Aggregation: view.Distribution(1, 5, 10, 50, 100), TagKeys: []tag.Key{keyRoute}},
		{Name: p + "sum", Measure: f.bytes, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		{Name: p + "last", Measure: f.bytes, Aggregation: view.LastValue()},
	}
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
	for _, v := range vs {
		f.names = append(f.names, v.Name)
	}
	f.record(t, rows, 1)
	return f
}

func (f *fixture) record(t testing.TB, rows, times int) {
	for r := range rows {
		ctx, err := tag.New(context.Background(),
			tag.Upsert(keyRoute, fmt.Sprintf("/r%d", r)), tag.Upsert(keyStatus, []string{"200", "", "500"}[r%3]))
		if err != nil {
			t.Fatal(err)
		}
		for i := range times {
			stats.Record(ctx, f.lat.M(float64(r*7+i)/3), f.bytes.M(int64(100+r+i)))
		}
	}
}

// collect gathers what a FuncSink receives, decoded.
type collect struct {
	mu       sync.Mutex
	payloads []*wire.Payload
	raw      [][]byte
}

func (c *collect) sink(t testing.TB) Sink {
	return FuncSink(func(_ context.Context, p Payload) error {
		data := p.Data
		if p.Encoding == "gzip" {
			var err error
			if data, err = wire.Gunzip(data, 64<<20); err != nil {
				t.Error(err)
				return err
			}
		}
		pl, err := wire.Decode(data)
		if err != nil {
			t.Errorf("payload %d.%d does not decode: %v", p.Sequence, p.Part, err)
			return err
		}
		if pl.Sequence != p.Sequence || pl.Part != p.Part || pl.Last != p.Last {
			t.Errorf("payload header %d.%d last=%v; sink was told %d.%d last=%v", pl.Sequence, pl.Part, pl.Last, p.Sequence, p.Part, p.Last)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.payloads = append(c.payloads, pl)
		c.raw = append(c.raw, bytes.Clone(data))
		return nil
	})
}

// overflowRowKey keys a view's overflow row in rowsOf.
const overflowRowKey = "\x00overflow"

// rowsOf returns, for a view, its rows in every collected payload of
// sequence seq, keyed by values.
func (c *collect) rowsOf(t testing.TB, name string, seq uint64) map[string]wire.Row {
	t.Helper()
	out := map[string]wire.Row{}
	for _, p := range c.payloads {
		if p.Sequence != seq {
			continue
		}
		for _, v := range p.Views {
			if v.Name != name {
				continue
			}
			for _, r := range v.Rows {
				k := strings.Join(r.Values, ",")
				if _, dup := out[k]; dup {
					t.Errorf("%s: row %q sent twice in cycle %d", name, k, seq)
				}
				out[k] = r
			}
			if v.Overflow != nil {
				if _, dup := out[overflowRowKey]; dup {
					t.Errorf("%s: overflow row sent twice in cycle %d", name, seq)
				}
				out[overflowRowKey] = *v.Overflow
			}
		}
	}
	return out
}

func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// checkAgainstRetrieveData compares the rows of cycle seq with
// view.RetrieveData, row by row.
func checkAgainstRetrieveData(t *testing.T, c *collect, f *fixture, seq uint64) {
	t.Helper()
	for _, name := range f.names {
		got := c.rowsOf(t, name, seq)
		want, err := view.RetrieveData(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d rows exported; RetrieveData has %d", name, len(got), len(want))
		}
		v := view.Find(name)
		for _, w := range want {
			vals := make([]string, len(v.TagKeys))
			for _, tg := range w.Tags {
				for i, k := range v.TagKeys {
					if k == tg.Key {
						vals[i] = tg.Value
					}
				}
			}
			k := strings.Join(vals, ",")
			if w.IsOverflow() {
				k = overflowRowKey
			}
			g, ok := got[k]
			if !ok {
				t.Errorf("%s: row %v not exported", name, vals)
				continue
			}
			switch d := w.Data.(type) {
			case *view.CountData:
				if g.Count != uint64(d.Value) {
					t.Errorf("%s %v: count %d; want %d", name, vals, g.Count, d.Value)
				}
			case *view.SumData:
				if !near(g.Sum, d.Value) {
					t.Errorf("%s %v: sum %v; want %v", name, vals, g.Sum, d.Value)
				}
			case *view.LastValueData:
				if g.Value != d.Value {
					t.Errorf("%s %v: value %v; want %v", name, vals, g.Value, d.Value)
				}
			case *view.DistributionData:
				if g.Count != uint64(d.Count) || g.Min != d.Min || g.Max != d.Max ||
					!near(g.Sum, d.Sum()) || !near(g.SumOfSquaredDev, d.SumOfSquaredDev) {
					t.Errorf("%s %v: got %+v; want %+v", name, vals, g, d)
				}
				for i := range d.CountPerBucket {
					if g.Buckets[i] != uint64(d.CountPerBucket[i]) {
						t.Errorf("%s %v: buckets %v; want %v", name, vals, g.Buckets, d.CountPerBucket)
						break
					}
				}
			}
		}
	}
}

func TestExportMatchesRetrieveData(t *testing.T) {
	f := newFixture(t, 40)
	f.record(t, 40, 3)
	var c collect
	e, err := New(c.sink(t), Options{Resource: Resource{ServiceName: "svc", Host: "h1", PID: 42,
		Attributes: []wire.Attribute{{Key: "deployment.environment", Value: "test"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(c.payloads) != 1 || !c.payloads[0].Last || c.payloads[0].Temporality != wire.Cumulative {
		t.Fatalf("got %d payloads", len(c.payloads))
	}
	p := c.payloads[0]
	// telemetry.sdk.* last, as OpenTelemetry's SDKs send them (issue 42,
	// item 13; "(devel)": zerostat is the main module of its tests).
	if fmt.Sprint(p.Resource) != "[{service.name svc} {host.name h1} {process.pid 42} {deployment.environment test} "+
		"{telemetry.sdk.name zerostat} {telemetry.sdk.language go} {telemetry.sdk.version (devel)}]" {
		t.Errorf("resource %v", p.Resource)
	}
	if p.Start.After(p.End) {
		t.Errorf("start %v after end %v", p.Start, p.End)
	}
	for _, v := range p.Views {
		if v.Name == f.names[1] && (v.Unit != "ms" || v.Description != "Latency" || fmt.Sprint(v.Bounds) != "[1 5 10 50 100]" ||
			fmt.Sprint(v.Keys) != "[route]" || v.Aggregation != wire.Distribution) {
			t.Errorf("view header %+v", v)
		}
	}
	checkAgainstRetrieveData(t, &c, f, 1)
}

func TestSplitPayloadsAreSelfContained(t *testing.T) {
	eachVersion(t, testSplitSelfContained)
}

func testSplitSelfContained(t *testing.T, version int) {
	f := newFixture(t, 300)
	var c collect
	e, err := New(c.sink(t), Options{MaxPayloadBytes: MinMaxPayloadBytes, WireVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(c.payloads) < 5 {
		t.Fatalf("got %d payloads; want a split into many", len(c.payloads))
	}
	for i, p := range c.payloads {
		if p.Version != version {
			t.Errorf("payload %d: version %d; want %d", i, p.Version, version)
		}
		if len(c.raw[i]) > MinMaxPayloadBytes {
			t.Errorf("payload %d is %d bytes, over the cap", i, len(c.raw[i]))
		}
		if p.Part != uint64(i) || p.Last != (i == len(c.payloads)-1) {
			t.Errorf("payload %d: part %d last %v", i, p.Part, p.Last)
		}
	}
	checkAgainstRetrieveData(t, &c, f, 1)
	if s := e.Stats(); s.Sent != uint64(len(c.payloads)) || s.Oversized != 0 || s.Exports != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestSplitAtEveryCap sweeps the cap over a range of sizes so that the
// split falls on every kind of boundary (a view header, a row, the
// overflow slot): no payload may exceed the cap, every view in a payload
// has rows of its own, and the parts add up to RetrieveData.
func TestSplitAtEveryCap(t *testing.T) {
	eachVersion(t, testSplitAtEveryCap)
}

func testSplitAtEveryCap(t *testing.T, version int) {
	f := newFixture(t, 40)
	m := stats.Int64("exp/splitcap/overflow", "", "")
	ov := &view.View{Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 5}
	if err := view.Register(ov); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(ov)
	for i := range 12 {
		ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, fmt.Sprint("/ov", i)))
		stats.Record(ctx, m.M(1))
	}
	f.names = append(f.names, ov.Name)
	var seq uint64
	for maxBytes := MinMaxPayloadBytes; maxBytes <= MinMaxPayloadBytes+600; maxBytes++ {
		var c collect
		e, err := New(c.sink(t), Options{MaxPayloadBytes: maxBytes, WireVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		seq = 1
		for i, p := range c.payloads {
			if len(c.raw[i]) > maxBytes {
				t.Errorf("cap %d: payload %d is %d bytes", maxBytes, i, len(c.raw[i]))
			}
			for _, pv := range p.Views {
				if len(pv.Rows) == 0 && pv.Overflow == nil {
					t.Errorf("cap %d: payload %d carries view %s with nothing to send", maxBytes, i, pv.Name)
				}
			}
		}
		checkAgainstRetrieveData(t, &c, f, seq)
		if s := e.Stats(); s.Oversized != 0 {
			t.Errorf("cap %d: %d oversized payloads", maxBytes, s.Oversized)
		}
		if t.Failed() {
			return
		}
	}
}

// TestEmptyViewsNotSent checks that a view with no rows costs nothing on
// the wire: not registered-but-unused views, and not (in delta) views
// whose rows did not change in the interval.
func TestEmptyViewsNotSent(t *testing.T) {
	m := stats.Int64("exp/empty", "", "")
	unused := stats.Int64("exp/empty/unused", "", "")
	empty := &view.View{Name: "exp/empty/sum", Measure: unused, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}}
	used := &view.View{Name: "exp/empty/count", Measure: m, Aggregation: view.Count()}
	if err := view.Register(used); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(used)
	stats.Record(context.Background(), m.M(1))
	if err := view.Register(empty); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(empty)
	var c collect
	e, err := New(c.sink(t), Options{Temporality: Delta})
	if err != nil {
		t.Fatal(err)
	}
	names := func() map[string]bool {
		c.payloads, c.raw = nil, nil
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, p := range c.payloads {
			for _, pv := range p.Views {
				got[pv.Name] = true
			}
		}
		return got
	}
	if got := names(); !got[used.Name] || got[empty.Name] {
		t.Errorf("first export has views %v; want %s and not %s", got, used.Name, empty.Name)
	}
	if got := names(); got[used.Name] || got[empty.Name] {
		t.Errorf("export with nothing new has views %v; want none of ours", got)
	}
	stats.Record(context.Background(), m.M(1))
	if got := names(); !got[used.Name] {
		t.Errorf("export after a record has views %v; want %s", got, used.Name)
	}

	// A snapshot on request lists every registered view, empty or not.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept", wire.ContentType)
	NewSnapshotHandler(SnapshotOptions{DisableCompression: true}).ServeHTTP(rec, req)
	pl, err := wire.Decode(rec.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var sawEmpty bool
	for _, pv := range pl.Views {
		if pv.Name == empty.Name {
			sawEmpty = len(pv.Rows) == 0 && pv.Overflow == nil
		}
	}
	if !sawEmpty {
		t.Errorf("snapshot handler omits the registered view %s with no rows", empty.Name)
	}
}

func TestDeltaTemporality(t *testing.T) {
	f := newFixture(t, 10)
	var c collect
	e, err := New(c.sink(t), Options{Temporality: Delta})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := e.Export(ctx); err != nil { // cycle 1: everything so far
		t.Fatal(err)
	}
	if err := e.Export(ctx); err != nil { // cycle 2: nothing changed
		t.Fatal(err)
	}
	f.record(t, 3, 2) // rows /r0../r2 get 2 more samples each
	if err := e.Export(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(c.rowsOf(t, f.names[0], 2)); n != 0 {
		t.Errorf("cycle 2 sent %d unchanged count rows", n)
	}
	// Summing the deltas gives the cumulative totals.
	for _, name := range []string{f.names[0], f.names[1]} {
		total := map[string]uint64{}
		for seq := uint64(1); seq <= 3; seq++ {
			for k, r := range c.rowsOf(t, name, seq) {
				total[k] += r.Count
			}
		}
		rows, _ := view.RetrieveData(name)
		var want, got uint64
		for _, r := range rows {
			switch d := r.Data.(type) {
			case *view.CountData:
				want += uint64(d.Value)
			case *view.DistributionData:
				want += uint64(d.Count)
			}
		}
		for _, n := range total {
			got += n
		}
		if got != want {
			t.Errorf("%s: deltas add up to %d; cumulative is %d", name, got, want)
		}
	}
	d3 := c.rowsOf(t, f.names[1], 3)["/r0"]
	// r0 got latencies (0*7+i)/3 for i=0,1: 0 and 1/3.
	if d3.Count != 2 || !near(d3.Sum, 1.0/3) || !near(d3.SumOfSquaredDev, 1.0/18) {
		t.Errorf("delta distribution of /r0 %+v; want count 2, sum 1/3, ssd 1/18", d3)
	}
	p3 := c.payloads[len(c.payloads)-1]
	if p3.Temporality != wire.Delta || !p3.Start.Before(p3.End) || !p3.Start.Equal(c.payloads[len(c.payloads)-2].End) {
		t.Errorf("delta interval %v..%v", p3.Start, p3.End)
	}
}

func TestGzipAndFrames(t *testing.T) {
	f := newFixture(t, 20)
	var buf bytes.Buffer
	e, err := New(&WriterSink{W: &buf}, Options{Compression: Gzip, GzipLevel: 9, MaxPayloadBytes: 2048})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	var c collect
	sink := c.sink(t)
	r := bytes.NewReader(buf.Bytes())
	for part := uint64(0); ; part++ {
		fr, err := wire.ReadFrame(r, nil, wire.MaxFrameSize)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !wire.IsGzip(fr) {
			t.Fatal("frame is not gzip")
		}
		if err := sink.Send(context.Background(), Payload{Data: fr, Encoding: "gzip", Sequence: 1, Part: part, Last: r.Len() == 0}); err != nil {
			t.Fatal(err)
		}
	}
	checkAgainstRetrieveData(t, &c, f, 1)
}

func TestHTTPSink(t *testing.T) {
	newFixture(t, 5)
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Content-Type")+" "+r.Header.Get("Content-Encoding"))
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(r.URL.Path, "fail") {
			http.Error(w, "nope", http.StatusServiceUnavailable)
			return
		}
		if _, err := wire.Decode(body); err != nil {
			t.Error(err)
		}
	}))
	defer srv.Close()
	e, _ := New(&HTTPSink{URL: srv.URL}, Options{})
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "application/msgpack " {
		t.Errorf("requests %q", got)
	}
	e, _ = New(&HTTPSink{URL: srv.URL + "/fail"}, Options{Interval: 2 * time.Second, Retry: Retry{InitialBackoff: 10 * time.Millisecond}, Logger: slog.New(slog.DiscardHandler)})
	err := e.Export(context.Background())
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != 503 || !strings.Contains(err.Error(), "nope") {
		t.Errorf("error %v; want an HTTPError 503 quoting the body", err)
	}
	if s := e.Stats(); s.Failures != 1 || s.LastError == nil || s.Retries == 0 || s.Dropped != 1 {
		t.Errorf("stats %+v; want a failure after retries, the cumulative payload dropped", s)
	}
}

func TestStartStopExportsFinalSnapshot(t *testing.T) {
	f := newFixture(t, 3)
	var c collect
	e, _ := New(c.sink(t), Options{Interval: time.Hour})
	e.Start()
	e.Start()
	f.record(t, 3, 5)
	if err := e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(c.payloads) != 1 {
		t.Fatalf("got %d payloads; want the final one", len(c.payloads))
	}
	checkAgainstRetrieveData(t, &c, f, 1)
}

func TestOptionErrors(t *testing.T) {
	sink := FuncSink(func(context.Context, Payload) error { return nil })
	for _, tc := range []struct {
		sink Sink
		o    Options
		want string
	}{
		{nil, Options{}, "nil sink"},
		{sink, Options{Interval: -1}, "Interval"},
		{sink, Options{MaxPayloadBytes: 100}, "MaxPayloadBytes 100"},
		{sink, Options{Temporality: 7}, "Temporality"},
		{sink, Options{Timeout: -time.Second}, "Timeout"},
		{sink, Options{Compression: Gzip, GzipLevel: 42}, "GzipLevel 42"},
		{sink, Options{Compression: 9}, "Compression"},
		{sink, Options{EvictIdleAfter: 2}, "EvictIdleAfter 2 needs Delta"},
		{sink, Options{Temporality: Delta, EvictIdleAfter: -2}, "EvictIdleAfter -2 is negative"},
	} {
		if _, err := New(tc.sink, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v; want an error mentioning %q", tc.o, err, tc.want)
		}
	}
}

func TestEncodeAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	newFixture(t, 200)
	for _, tc := range []struct {
		name string
		t    wire.Temporality
		max  int
	}{{"cumulative", Cumulative, DefaultMaxPayloadBytes}, {"delta", Delta, DefaultMaxPayloadBytes}, {"split", Cumulative, 4096}} {
		for _, version := range wire.Versions {
			kinds, _ := delta.NewKinds(tc.t == Delta, 0, "")
			attrs, err := Resource{ServiceName: "s"}.attributes()
			if err != nil {
				t.Fatal(err)
			}
			enc := newEncoder(tc.max, kinds, 0, attrs)
			enc.version = version
			var n int
			emit := func(p []byte, last bool) error { n += len(p); return nil }
			now := time.Now()
			_ = enc.encode(now, now, emit) // warm up the buffers
			_ = enc.encode(now, now, emit)
			if got := testing.AllocsPerRun(20, func() { _ = enc.encode(now, now, emit) }); got != 0 {
				t.Errorf("%s, version %d: encode allocates %v times per export; want 0", tc.name, version, got)
			}
		}
	}
}

func TestStringTableRollback(t *testing.T) {
	strs := []string{"", "a", "bb", "ccc"}
	var tab stringTable
	tab.reset()
	tab.id(0, strs)
	tab.id(1, strs)
	m := len(tab.order)
	tab.id(2, strs)
	tab.id(3, strs)
	tab.rollback(m, strs)
	if len(tab.order) != 2 || tab.bytes != 1+2 {
		t.Fatalf("after rollback: order %v bytes %d", tab.order, tab.bytes)
	}
	// A rolled-back string gets a fresh id, not a dangling one.
	if id := tab.id(3, strs); id != 2 {
		t.Errorf("re-added string got id %d; want 2", id)
	}
	ids := []uint32{tab.id(0, strs), tab.id(1, strs), tab.id(3, strs)}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if fmt.Sprint(ids) != "[0 1 2]" {
		t.Errorf("ids %v", ids)
	}
}

func TestExportAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	newFixture(t, 100)
	for _, c := range []Compression{NoCompression, Gzip} {
		e, err := New(FuncSink(func(context.Context, Payload) error { return nil }), Options{Timeout: time.Hour, Compression: c})
		if err != nil {
			t.Fatal(err)
		}
		// A deadline sooner than the send timeout: Export needs no context
		// of its own, and then allocates nothing in steady state.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		for range 2 {
			if err := e.Export(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if got := testing.AllocsPerRun(20, func() { _ = e.Export(ctx) }); got != 0 {
			t.Errorf("Export (compression %d) allocates %v times; want 0", c, got)
		}
	}
}

func TestOverflowRowExported(t *testing.T) {
	m := stats.Int64("exp/overflow", "", "")
	v := &view.View{Measure: m, Aggregation: view.Distribution(10, 100), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 20}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	for i := range 200 {
		ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, fmt.Sprint("/r", i)))
		stats.Record(ctx, m.M(int64(i)))
	}
	for _, tc := range []struct {
		name string
		o    Options
	}{{"one payload", Options{}}, {"split", Options{MaxPayloadBytes: MinMaxPayloadBytes}}, {"delta", Options{Temporality: Delta}}} {
		var c collect
		e, err := New(c.sink(t), tc.o)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		var rows, overflows int
		var total uint64
		for _, p := range c.payloads {
			for _, pv := range p.Views {
				if pv.Name != v.Name {
					continue
				}
				rows += len(pv.Rows)
				for _, r := range pv.Rows {
					total += r.Count
				}
				if pv.Overflow != nil {
					overflows++
					total += pv.Overflow.Count
					if pv.Overflow.Count != 180 || pv.Overflow.Min != 20 || pv.Overflow.Max != 199 {
						t.Errorf("%s: overflow row %+v; want count 180, min 20, max 199", tc.name, pv.Overflow)
					}
				}
			}
		}
		if rows != 20 || overflows != 1 || total != 200 {
			t.Errorf("%s: %d rows, %d overflow rows, total %d; want 20, 1, 200", tc.name, rows, overflows, total)
		}
	}
}
