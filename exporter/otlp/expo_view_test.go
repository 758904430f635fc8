package otlp

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// expFixture is two exponential views over one measure: "exp" with the
// defaults (160 buckets, scale 20) by route, "small" with 4 buckets, so
// that a few values lower its scale.
type expFixture struct {
	prefix string
	m      *stats.Float64Measure
	views  []*view.View
	// ref holds, per view and route, an exphist histogram fed the same
	// values (cumulative), and del the same since the last delta encode.
	ref, del map[string]*exphist.Histogram
}

var expSeq int

func newExpFixture(t testing.TB) *expFixture {
	t.Helper()
	expSeq++
	p := fmt.Sprintf("otlpexp%d/", expSeq)
	f := &expFixture{prefix: p, m: stats.Float64(p+"latency", "Latency", stats.UnitMilliseconds),
		ref: map[string]*exphist.Histogram{}, del: map[string]*exphist.Histogram{}}
	f.views = []*view.View{
		{Name: p + "exp", Measure: f.m, Aggregation: view.ExponentialDistribution(0, 0), TagKeys: []tag.Key{keyRoute}},
		{Name: p + "small", Measure: f.m, Aggregation: view.ExponentialDistribution(4, 20), TagKeys: []tag.Key{keyRoute}},
	}
	if err := view.Register(f.views...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(f.views...) })
	return f
}

// record records v with route (empty: no tag), into the references too.
func (f *expFixture) record(t testing.TB, route string, v float64) {
	t.Helper()
	ctx := context.Background()
	var err error
	if route != "" {
		if ctx, err = tag.New(ctx, tag.Upsert(keyRoute, route)); err != nil {
			t.Fatal(err)
		}
	}
	stats.Record(ctx, f.m.M(v))
	attrs := ""
	if route != "" {
		attrs = "route=" + route
	}
	for _, name := range []string{"exp", "small"} {
		size := int32(exphist.DefaultMaxSize)
		if name == "small" {
			size = 4
		}
		for _, m := range []map[string]*exphist.Histogram{f.ref, f.del} {
			k := name + "|" + attrs
			if m[k] == nil {
				m[k] = exphist.MustNew(size, 20)
			}
			m[k].Record(v)
		}
	}
}

// check compares every point of d's two metrics with the references
// (del: the delta references, which it then resets), and checks that
// every reference with values has a point.
func (f *expFixture) check(t *testing.T, d *decoded, deltaRefs bool, temporality uint64) {
	t.Helper()
	refs := f.ref
	if deltaRefs {
		refs = f.del
	}
	for _, name := range []string{"exp", "small"} {
		m := d.metrics[f.prefix+name]
		want := 0
		for k, h := range refs {
			vname, attrs, _ := strings.Cut(k, "|")
			if vname != name {
				continue
			}
			var s exphist.Snapshot
			if deltaRefs {
				h.SnapshotReset(&s)
			} else {
				h.Snapshot(&s)
			}
			if s.Count == 0 {
				continue
			}
			want++
			if m == nil {
				t.Fatalf("no metric %s", f.prefix+name)
			}
			p := m.points[attrs]
			if p == nil {
				t.Errorf("%s: no point %q", name, attrs)
				continue
			}
			checkExpPoint(t, p, &s)
		}
		if m == nil {
			continue
		}
		if m.kind != "exponential_histogram" || m.temporality != temporality || m.unit != "ms" || m.monotonic {
			t.Errorf("%s: kind %s, temporality %d, unit %q, monotonic %v; want exponential_histogram, %d, ms, false",
				name, m.kind, m.temporality, m.unit, m.monotonic, temporality)
		}
		if len(m.points) != want {
			t.Errorf("%s: %d points %q; want %d", name, len(m.points), m.pointNames(), want)
		}
	}
}

// TestEncodeExponential: an exponential view's series are
// ExponentialHistogram points, cumulative, equal field by field to an
// exphist histogram fed the same values (scale, zero count, offsets and
// bucket counts, count, sum bit for bit: one goroutine records, so the
// series' sum is the same running sum; min, max), with the view's start
// and the export's time, and no sum for a series with a negative value.
func TestEncodeExponential(t *testing.T) {
	f := newExpFixture(t)
	r := rand.New(rand.NewPCG(45, 1))
	for range 300 {
		f.record(t, "/a", math.Exp(r.NormFloat64()*3))
	}
	for _, v := range []float64{0, -3, 2, 1e-300, 0, 1e300} {
		f.record(t, "/b", v)
	}
	f.record(t, "", 7)
	enc, err := NewEncoder(Cumulative, exporter.Resource{})
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	d := decodeRequest(t, enc.Encode(end))
	f.check(t, d, false, temporalityCumulative)
	for _, p := range d.metrics[f.prefix+"exp"].points {
		if p.time != uint64(end.UnixNano()) || p.start == 0 || p.start > p.time {
			t.Errorf("point %q: start %d, time %d; want a start before %d", p.attrs, p.start, p.time, end.UnixNano())
		}
	}
	if p := d.metrics[f.prefix+"small"].points["route=/b"]; p == nil || p.scale >= 0 {
		t.Errorf("small, /b: %+v; want a negative scale (a range of 2^2000 in 4 buckets)", p)
	}
	if p := d.metrics[f.prefix+"exp"].points["route=/b"]; p == nil || p.sum != nil || p.zeroCount != 2 || len(p.neg) == 0 {
		t.Errorf("exp, /b: %+v; want no sum (a negative value), 2 zeros, a negative bucket", p)
	}
	// The same values as view.RetrieveData reads them (its Start is the
	// series', OTLP's the view's: see the package documentation).
	rows, err := view.RetrieveData(f.prefix + "exp")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		ed := row.Data.(*view.ExponentialDistributionData)
		attrs := ""
		if len(row.Tags) > 0 {
			attrs = row.Tags[0].Key.Name() + "=" + row.Tags[0].Value
		}
		p := d.metrics[f.prefix+"exp"].points[attrs]
		if p == nil || p.count != uint64(ed.Count) || p.scale != ed.Scale || p.posOff != ed.PositiveOffset || len(p.pos) != len(ed.PositiveCounts) {
			t.Errorf("%q: OTLP %+v; RetrieveData %+v", attrs, p, ed)
		}
	}
}

// TestEncodeExponentialDelta: with Delta temporality each point holds the
// interval's own values, at the scale a histogram of them alone has (finer
// than the cumulative's after a wide interval), with the interval's min
// and max (known: every value of the interval is in it), starting at the
// previous export; a series with nothing new has no point; a series whose
// interval has no negative value has its sum again.
func TestEncodeExponentialDelta(t *testing.T) {
	f := newExpFixture(t)
	enc, _ := NewEncoder(Delta, exporter.Resource{})
	intervals := [][]struct {
		route string
		v     float64
	}{
		{{"/a", 1}, {"/a", 1.5}, {"/b", -2}, {"/b", 0}},
		{{"/a", 1e-100}, {"/a", 1e100}, {"/c", 3}}, // /a wide: its cumulative scale drops
		{{"/a", 1.25}, {"/a", 1.26}, {"/b", 5}},    // /a narrow again: its own scale is high
		{},                                         // nothing: no point at all
		{{"/b", math.NaN()}, {"/c", 4}},            // /b: a NaN only, not counted: no point
	}
	var last time.Time
	t0 := time.Now()
	for i, iv := range intervals {
		for _, r := range iv {
			f.record(t, r.route, r.v)
		}
		end := t0.Add(time.Duration(i+1) * time.Second)
		d := decodeRequest(t, enc.Encode(end))
		f.check(t, d, true, temporalityDelta)
		for _, m := range d.metrics {
			for _, p := range m.points {
				if i > 0 && p.start != uint64(last.UnixNano()) || p.time != uint64(end.UnixNano()) {
					t.Errorf("interval %d, %s %q: [%d, %d]; want [%d, %d]", i, m.name, p.attrs, p.start, p.time, last.UnixNano(), end.UnixNano())
				}
			}
		}
		switch i {
		case 2:
			p := d.metrics[f.prefix+"small"].points["route=/a"]
			if p == nil || p.scale < 5 {
				t.Errorf("interval 2, small /a: %+v; want the interval's own fine scale", p)
			}
			if b := d.metrics[f.prefix+"exp"].points["route=/b"]; b == nil || b.sum == nil || *b.sum != 5 {
				t.Errorf("interval 2, /b: %+v; want sum 5 (no negative value in the interval)", b)
			}
		case 3:
			if len(d.metrics) != 0 {
				t.Errorf("interval 3 (nothing recorded): metrics %v", d.metrics)
			}
		}
		last = end
	}
}

// TestEncodeExponentialPreference: the delta and lowmemory temporality
// preferences read an exponential view as deltas, as they read a
// histogram; cumulative reads it as its total.
func TestEncodeExponentialPreference(t *testing.T) {
	for _, tc := range []struct {
		pref exporter.TemporalityPreference
		want uint64
	}{
		{exporter.PreferCumulative, temporalityCumulative},
		{exporter.PreferDelta, temporalityDelta},
		{exporter.PreferLowMemory, temporalityDelta},
	} {
		f := newExpFixture(t)
		f.record(t, "/a", 3)
		kinds, err := delta.NewKinds(false, tc.pref, "")
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := newEncoder(kinds, 0, exporter.Resource{})
		enc.Encode(time.Now())
		f.record(t, "/a", 5)
		m := decodeRequest(t, enc.Encode(time.Now())).metrics[f.prefix+"exp"]
		wantCount := uint64(2)
		if tc.want == temporalityDelta {
			wantCount = 1
		}
		if m == nil || m.temporality != tc.want || m.points["route=/a"].count != wantCount {
			t.Errorf("%v: %+v; want temporality %d, count %d", tc.pref, m, tc.want, wantCount)
		}
	}
}

// TestEncodeExponentialAllocs: in steady state, encoding exponential
// views allocates nothing, cumulative or delta, with records between the
// encodes (a delta read's buckets reuse the encoder's).
func TestEncodeExponentialAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	f := newExpFixture(t)
	var hs []*stats.Float64Handle
	for i := range 50 {
		ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, fmt.Sprintf("/r%d", i)))
		hs = append(hs, f.m.Bind(tag.FromContext(ctx)))
	}
	n := 0
	rec := func() {
		for i, h := range hs {
			h.Record(float64(n%1000+i) * 0.37)
			h.Record(-float64(n % 7))
			n++
		}
	}
	for _, tm := range []Temporality{Cumulative, Delta} {
		enc, _ := NewEncoder(tm, exporter.Resource{ServiceName: "s"})
		now := time.Now()
		for range 3 { // warm up the buffers
			rec()
			enc.Encode(now)
		}
		for n < 2000 { // every series' buckets reach their range (exphist grows them with it)
			rec()
		}
		enc.Encode(now)
		if got := testing.AllocsPerRun(20, func() { rec(); enc.Encode(now) }); got != 0 {
			t.Errorf("%v: Encode allocates %v times; want 0", tm, got)
		}
	}
}

// TestExportExponentialHTTP: the exporter sends exponential views over
// OTLP/HTTP (the encoder's request, as is).
func TestExportExponentialHTTP(t *testing.T) {
	f := newExpFixture(t)
	for _, v := range []float64{1, 2, 4, -8, 0} {
		f.record(t, "/a", v)
	}
	s := newServer(t, nil)
	e, err := New(Options{Endpoint: s.URL, Temporality: Delta})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.record(t, "/a", 3)
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	bodies, _, _ := s.got()
	if len(bodies) != 2 {
		t.Fatalf("%d requests; want 2", len(bodies))
	}
	for i, b := range bodies {
		p := decodeRequest(t, b).metrics[f.prefix+"exp"].points["route=/a"]
		if want := []uint64{5, 1}[i]; p == nil || p.count != want {
			t.Errorf("request %d: %+v; want count %d", i, p, want)
		}
	}
	if p := decodeRequest(t, bodies[1]).metrics[f.prefix+"exp"].points["route=/a"]; !slices.Equal(p.pos, []uint64{1}) || p.min == nil || *p.min != 3 {
		t.Errorf("second interval %+v; want one bucket, min 3", p)
	}
}

// BenchmarkEncodeExponential: the cost per series of encoding exponential
// views (1,000 series of latencies, about 30 buckets each at scale 3),
// beside BenchmarkEncode's classic views; cumulative and delta (each
// delta interval recorded anew: a delta read drains the series' cells).
func BenchmarkEncodeExponential(b *testing.B) {
	for _, tm := range []Temporality{Cumulative, Delta} {
		b.Run(fmt.Sprint(tm), func(b *testing.B) {
			f := newExpFixture(b)
			var hs []*stats.Float64Handle
			for i := range 1000 {
				ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, fmt.Sprintf("/r%d", i)))
				hs = append(hs, f.m.Bind(tag.FromContext(ctx)))
			}
			r := rand.New(rand.NewPCG(1, 2))
			rec := func() {
				for _, h := range hs {
					for range 4 {
						h.Record(math.Exp(r.NormFloat64() * 2))
					}
				}
			}
			rec()
			enc, _ := NewEncoder(tm, exporter.Resource{ServiceName: "s"})
			now := time.Now()
			b.SetBytes(int64(len(enc.Encode(now))))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if tm == Delta {
					b.StopTimer()
					rec()
					b.StartTimer()
				}
				enc.Encode(now)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*len(hs)), "ns/series")
		})
	}
}
