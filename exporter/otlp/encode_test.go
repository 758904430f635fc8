package otlp

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
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

// fixture registers one view per aggregation over fresh measures.
type fixture struct {
	prefix string
	lat    *stats.Float64Measure
	bytes  *stats.Int64Measure
	views  []*view.View
}

var fixtureSeq int

func newFixture(t testing.TB) *fixture {
	t.Helper()
	fixtureSeq++
	p := fmt.Sprintf("otlp%d/", fixtureSeq)
	f := &fixture{
		prefix: p,
		lat:    stats.Float64(p+"latency", "Latency", stats.UnitMilliseconds),
		bytes:  stats.Int64(p+"bytes", "Bytes", stats.UnitBytes),
	}
	f.views = []*view.View{
		{Name: p + "count", Measure: f.lat, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, keyStatus}},
		{Name: p + "dist", Measure: f.lat, Aggregation: view.Distribution(1, 5, 10), TagKeys: []tag.Key{keyRoute}},
		{Name: p + "sum", Measure: f.bytes, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		{Name: p + "last", Measure: f.bytes, Aggregation: view.LastValue()},
	}
	if err := view.Register(f.views...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(f.views...) })
	return f
}

// record records lat and bytes with the tags route and status (empty:
// absent).
func (f *fixture) record(t testing.TB, route, status string, lat float64, bytes int64) {
	t.Helper()
	var muts []tag.Mutator
	if route != "" {
		muts = append(muts, tag.Upsert(keyRoute, route))
	}
	if status != "" {
		muts = append(muts, tag.Upsert(keyStatus, status))
	}
	ctx, err := tag.New(context.Background(), muts...)
	if err != nil {
		t.Fatal(err)
	}
	stats.Record(ctx, f.lat.M(lat), f.bytes.M(bytes))
}

func (f *fixture) metric(t testing.TB, d *decoded, name string) *dmetric {
	t.Helper()
	m := d.metrics[f.prefix+name]
	if m == nil {
		t.Fatalf("no metric %q", f.prefix+name)
	}
	return m
}

func TestEncodeMapping(t *testing.T) {
	f := newFixture(t)
	f.record(t, "/a", "200", 0.5, 100)
	f.record(t, "/a", "200", 7, 50)
	f.record(t, "/b", "", 20, -30) // no status
	f.record(t, "", "", 5, 10)     // no tags
	enc, err := NewEncoder(Cumulative, exporter.Resource{ServiceName: "svc", Host: "h", PID: 77,
		Attributes: []wire.Attribute{{Key: "env", Value: "test"}}})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	end := time.Now()
	d := decodeRequest(t, enc.Encode(end))
	if enc.Points() < 9 {
		t.Errorf("Points() = %d; want at least 9", enc.Points())
	}

	// telemetry.sdk.*, as OpenTelemetry's SDKs send (issue 42, item 13):
	// the version is the zerostat module's in the build info, "(devel)"
	// in its own tests.
	wantRes := map[string]any{"service.name": "svc", "host.name": "h", "process.pid": int64(77), "env": "test",
		"telemetry.sdk.name": "zerostat", "telemetry.sdk.language": "go", "telemetry.sdk.version": "(devel)"}
	if fmt.Sprint(d.resource) != fmt.Sprint(wantRes) {
		t.Errorf("resource %v; want %v", d.resource, wantRes)
	}
	if d.scope != ScopeName || d.scVer != "" { // no version: see ScopeName
		t.Errorf("scope %q %q; want %q and no version", d.scope, d.scVer, ScopeName)
	}

	c := f.metric(t, d, "count")
	if c.kind != "sum" || !c.monotonic || c.temporality != temporalityCumulative || c.unit != "1" || c.desc != "Count of "+f.prefix+"latency recordings: Latency" {
		t.Errorf("count: %+v", c)
	}
	if got := c.pointNames(); !slices.Equal(got, []string{"", "route=/a,status=200", "route=/b"}) {
		t.Errorf("count points %q", got)
	}
	if p := c.points["route=/a,status=200"]; !p.isInt || p.asInt != 2 || p.time != uint64(end.UnixNano()) ||
		p.start > uint64(before.UnixNano()) || p.start == 0 {
		t.Errorf("count point %+v", p)
	}

	s := f.metric(t, d, "sum")
	// A Sum is monotonic, except in an export where one of its points is
	// negative (route /b's here); an Int64 measure's points are integers.
	if s.kind != "sum" || s.monotonic || s.temporality != temporalityCumulative || s.unit != "By" {
		t.Errorf("sum: %+v", s)
	}
	if p := s.points["route=/b"]; !p.isInt || p.asInt != -30 {
		t.Errorf("sum point %+v", p)
	}

	l := f.metric(t, d, "last")
	if l.kind != "gauge" || l.temporality != 0 {
		t.Errorf("last: %+v", l)
	}
	if p := l.points[""]; !p.isInt || p.asInt != 10 || p.start != 0 || p.time != uint64(end.UnixNano()) {
		t.Errorf("last point %+v", p)
	}

	h := f.metric(t, d, "dist")
	if h.kind != "histogram" || h.temporality != temporalityCumulative {
		t.Errorf("dist: %+v", h)
	}
	p := h.points["route=/a"]
	if p == nil || p.count != 2 || p.sum == nil || *p.sum != 7.5 || *p.min != 0.5 || *p.max != 7 ||
		!slices.Equal(p.buckets, []uint64{1, 0, 1, 0}) || !slices.Equal(p.bounds, []float64{1, 5, 10}) {
		t.Errorf("dist point %+v", p)
	}
}

// TestBucketBoundary shows the one difference that cannot be fixed after
// aggregation: OpenCensus (and zerostat) count a value equal to a bound in
// the bucket above it (bounds[i-1] <= v < bounds[i]), OTLP's explicit
// buckets include their upper bound (bounds[i-1] < v <= bounds[i]). A 5
// recorded with bounds 1, 5, 10 is sent in the bucket OTLP reads as
// (5, 10].
func TestBucketBoundary(t *testing.T) {
	f := newFixture(t)
	f.record(t, "/edge", "", 5, 0)
	enc, _ := NewEncoder(Cumulative, exporter.Resource{})
	p := f.metric(t, decodeRequest(t, enc.Encode(time.Now())), "dist").points["route=/edge"]
	if !slices.Equal(p.buckets, []uint64{0, 0, 1, 0}) {
		t.Errorf("buckets %v; want [0 0 1 0] (5 in [5, 10), as OpenCensus counts it)", p.buckets)
	}
}

func TestEncodeDelta(t *testing.T) {
	f := newFixture(t)
	f.record(t, "/a", "200", 2, 10)
	f.record(t, "/b", "", -1, 5)
	enc, _ := NewEncoder(Delta, exporter.Resource{})
	t1 := time.Now()
	d := decodeRequest(t, enc.Encode(t1))
	h := f.metric(t, d, "dist")
	if h.temporality != temporalityDelta {
		t.Errorf("dist temporality %d; want delta", h.temporality)
	}
	if p := h.points["route=/b"]; p.min == nil || *p.min != -1 || p.sum != nil {
		t.Errorf("first interval of /b: %+v; want min -1 and no sum (a negative value)", p)
	}

	f.record(t, "/a", "200", 3, 10)
	t2 := t1.Add(time.Second)
	d = decodeRequest(t, enc.Encode(t2))
	c := f.metric(t, d, "count")
	if got := c.pointNames(); !slices.Equal(got, []string{"route=/a,status=200"}) {
		t.Errorf("delta count points %q; want only the series that changed", got)
	}
	if p := c.points["route=/a,status=200"]; p.asInt != 1 || p.start != uint64(t1.UnixNano()) || p.time != uint64(t2.UnixNano()) {
		t.Errorf("delta count point %+v; want 1 over [t1, t2]", p)
	}
	if s := f.metric(t, d, "sum"); s.points["route=/a"].asInt != 10 || !s.monotonic {
		t.Errorf("delta sum %+v", s.points["route=/a"])
	}
	p := f.metric(t, d, "dist").points["route=/a"]
	if p.count != 1 || *p.sum != 3 || p.min != nil || p.max != nil || !slices.Equal(p.buckets, []uint64{0, 1, 0, 0}) {
		t.Errorf("second interval of /a: %+v; want count 1, sum 3, no min/max", p)
	}
	if l := f.metric(t, d, "last"); l.points[""].asInt != 10 {
		t.Errorf("last value %+v; a gauge is always sent", l.points[""])
	}
}

// TestEncodeDeltaEvicts records routes that come and go, encoding in
// delta with eviction after one idle export: every route's deltas add up
// to what was recorded, a distribution's first interval after revival is
// not mistaken for a new series, and no series is left once all are idle.
func TestEncodeDeltaEvicts(t *testing.T) {
	f := newFixture(t)
	enc, _ := NewEncoder(Delta, exporter.Resource{})
	enc.delta = delta.NewTracker(1)
	got := map[string]int64{}
	want := map[string]int64{}
	encode := func() {
		d := decodeRequest(t, enc.Encode(time.Now()))
		if m := d.metrics[f.prefix+"count"]; m != nil {
			for name, p := range m.points {
				got[name] += p.asInt
			}
		}
	}
	for batch := range 20 {
		for i := range 10 {
			route := fmt.Sprintf("/r%d", batch*10+i)
			for range 1 + i {
				f.record(t, route, "200", 2, 10)
			}
			want["route="+route+",status=200"] += int64(1 + i)
		}
		if batch%5 == 4 { // an old route comes back after it was evicted
			f.record(t, "/r0", "200", 2, 10)
			want["route=/r0,status=200"]++
		}
		encode()
	}
	for range 3 {
		encode()
	}
	if !maps.Equal(got, want) {
		t.Errorf("deltas per route %v; want %v", got, want)
	}
	for _, v := range f.views[:3] {
		if rows, _ := view.RetrieveData(v.Name); len(rows) != 0 {
			t.Errorf("%s: %d rows left once every series was idle", v.Name, len(rows))
		}
	}
}

// TestEncodeOverflow checks the overflow series of a view past its
// cardinality limit is sent with the attribute otel.metric.overflow=true,
// and carries its own delta state.
func TestEncodeOverflow(t *testing.T) {
	m := stats.Int64("otlp/overflow/m", "", stats.UnitDimensionless)
	v := &view.View{Name: "otlp/overflow", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 2}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	rec := func(route string) {
		ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, route))
		stats.Record(ctx, m.M(1))
	}
	for _, r := range []string{"/a", "/b", "/c", "/d", "/c"} {
		rec(r)
	}
	enc, _ := NewEncoder(Delta, exporter.Resource{})
	c := decodeRequest(t, enc.Encode(time.Now())).metrics["otlp/overflow"]
	if c == nil {
		t.Fatal("no metric")
	}
	if got := c.pointNames(); !slices.Equal(got, []string{OverflowAttribute + "=true", "route=/a", "route=/b"}) {
		t.Fatalf("points %q", got)
	}
	if p := c.points[OverflowAttribute+"=true"]; p.asInt != 3 {
		t.Errorf("overflow point %d; want 3", p.asInt)
	}
	rec("/e")
	c = decodeRequest(t, enc.Encode(time.Now())).metrics["otlp/overflow"]
	if got := c.pointNames(); !slices.Equal(got, []string{OverflowAttribute + "=true"}) || c.points[OverflowAttribute+"=true"].asInt != 1 {
		t.Errorf("second delta: points %q; want the overflow point, 1", got)
	}
}

func TestEncoderDefaults(t *testing.T) {
	if _, err := NewEncoder(9, exporter.Resource{}); err == nil {
		t.Error("NewEncoder(9): no error")
	}
	if _, err := NewEncoder(Cumulative, exporter.Resource{Attributes: []wire.Attribute{{Value: "x"}}}); err == nil {
		t.Error("an attribute with an empty key: no error")
	}
	enc, _ := NewEncoder(Cumulative, exporter.Resource{})
	d := decodeRequest(t, enc.Encode(time.Now()))
	host, _ := os.Hostname()
	if d.resource["service.name"] != "unknown_service:"+filepath.Base(os.Args[0]) || d.resource["host.name"] != host || d.resource["process.pid"] != int64(os.Getpid()) {
		t.Errorf("default resource %v", d.resource)
	}
}

func TestEncodeAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	f := newFixture(t)
	for i := range 200 {
		f.record(t, fmt.Sprintf("/r%d", i), []string{"200", "", "500"}[i%3], float64(i%13), int64(i))
	}
	for _, tm := range []Temporality{Cumulative, Delta} {
		enc, _ := NewEncoder(tm, exporter.Resource{ServiceName: "s"})
		now := time.Now()
		enc.Encode(now) // warm up the buffers
		enc.Encode(now)
		if got := testing.AllocsPerRun(20, func() { enc.Encode(now) }); got != 0 {
			t.Errorf("%v: Encode allocates %v times; want 0", tm, got)
		}
	}
	kinds, _ := delta.NewKinds(false, exporter.PreferDelta, "")
	enc, _ := newEncoder(kinds, 0, exporter.Resource{ServiceName: "s"})
	now := time.Now()
	enc.Encode(now)
	enc.Encode(now)
	if got := testing.AllocsPerRun(20, func() { enc.Encode(now) }); got != 0 {
		t.Errorf("delta preference: Encode allocates %v times; want 0", got)
	}
}

func BenchmarkEncode(b *testing.B) {
	f := newFixture(b)
	for i := range 1000 {
		f.record(b, fmt.Sprintf("/r%d", i), []string{"200", "", "500"}[i%3], float64(i%13), int64(i))
	}
	enc, _ := NewEncoder(Cumulative, exporter.Resource{ServiceName: "s"})
	now := time.Now()
	b.SetBytes(int64(len(enc.Encode(now))))
	b.ReportAllocs()
	for b.Loop() {
		enc.Encode(now)
	}
}

// TestCumulativeRecreatedSeriesStarts: a series evicted and recorded
// again restarts from zero; its cumulative point starts at the new
// series' start, so a backend sees a reset (issue 12, item 4, which found
// the msgpack payload wanting; OTLP checked here).
func TestCumulativeRecreatedSeriesStarts(t *testing.T) {
	f := newFixture(t)
	for range 5 {
		f.record(t, "/again", "200", 2, 10)
	}
	cum, _ := NewEncoder(Cumulative, exporter.Resource{})
	first := f.metric(t, decodeRequest(t, cum.Encode(time.Now())), "count").points["route=/again,status=200"]
	ev, _ := NewEncoder(Delta, exporter.Resource{})
	ev.delta = delta.NewTracker(1)
	for range 3 { // reads, seals, frees
		ev.Encode(time.Now())
	}
	f.record(t, "/again", "200", 2, 10)
	p := f.metric(t, decodeRequest(t, cum.Encode(time.Now())), "count").points["route=/again,status=200"]
	rows, _ := view.RetrieveData(f.views[0].Name)
	if first == nil || p == nil || len(rows) != 1 {
		t.Fatalf("points %+v then %+v, rows %v", first, p, rows)
	}
	start := uint64(rows[0].Data.(*view.CountData).Start.UnixNano())
	if first.asInt != 5 || p.asInt != 1 || p.start != start || p.start <= first.start {
		t.Errorf("count %d since %d, then %d since %d; want 5, then 1 since the new series' start %d", first.asInt, first.start, p.asInt, p.start, start)
	}
}

// TestResourceSDKAttributesOverridden: a telemetry.sdk.* attribute set in
// the Resource (in code, or with FromEnv from OTEL_RESOURCE_ATTRIBUTES)
// replaces the default one, as in OpenTelemetry's SDKs.
func TestResourceSDKAttributesOverridden(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "telemetry.sdk.version=1.2.3")
	r, err := exporter.Resource{ServiceName: "svc", Host: "h", PID: 1,
		Attributes: []wire.Attribute{{Key: "telemetry.sdk.name", Value: "custom"}}}.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewEncoder(Cumulative, r)
	if err != nil {
		t.Fatal(err)
	}
	d := decodeRequest(t, enc.Encode(time.Now()))
	if d.resource["telemetry.sdk.name"] != "custom" || d.resource["telemetry.sdk.version"] != "1.2.3" || d.resource["telemetry.sdk.language"] != "go" || len(d.resource) != 6 {
		t.Errorf("resource %v; want the name from code, the version from the environment, the language by default, each once", d.resource)
	}
}
