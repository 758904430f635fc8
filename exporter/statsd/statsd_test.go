package statsd

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
	"log/slog"
)

var (
	keyRoute  = tag.MustNewKey("route")
	keyMethod = tag.MustNewKey("method")
	seq       atomic.Int64
)

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

func newExporter(t testing.TB, o Options) *Exporter {
	t.Helper()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e.Stop(ctx)
	})
	return e
}

func export(t testing.TB, e *Exporter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Export(ctx); err != nil {
		t.Fatal(err)
	}
}

// fixture is one view of each kind under a fresh prefix, and what was
// recorded into it, by route.
type fixture struct {
	p                  string
	lat                *stats.Float64Measure
	size               *stats.Int64Measure
	a, b               context.Context
	bounds             []float64
	latA, latB, latUIA []float64
	countA, countB     int
	sizeA, sizeB       int64
	inflightA, lastB   int64
	requests, bytes    string
	inflight, last     string
	latency, latencyUI string
}

func newFixture(t testing.TB) *fixture {
	p := fmt.Sprintf("sd%d", seq.Add(1))
	f := &fixture{p: p, bounds: []float64{1, 5, 10, 50}}
	f.lat = stats.Float64(p+"/latency", "Latency", stats.UnitMilliseconds)
	f.size = stats.Int64(p+"/size", "Size", stats.UnitBytes)
	register(t,
		&view.View{Name: p + "/requests", Measure: f.lat, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, keyMethod}},
		&view.View{Name: p + "/bytes", Measure: f.size, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/inflight", Measure: f.size, Aggregation: view.UpDownSum(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/last", Measure: f.size, Aggregation: view.LastValue(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/latency", Measure: f.lat, Aggregation: view.Distribution(f.bounds...), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/latency.ui", Measure: f.lat, Aggregation: view.DistributionUpperInclusive(f.bounds...), TagKeys: []tag.Key{keyRoute}},
	)
	f.requests, f.bytes, f.inflight, f.last = p+"_requests", p+"_bytes", p+"_inflight", p+"_last"
	f.latency, f.latencyUI = p+"_latency", p+"_latency.ui"
	f.a = ctxWith(t, tag.Upsert(keyRoute, "/a"), tag.Upsert(keyMethod, "GET"))
	f.b = ctxWith(t, tag.Upsert(keyRoute, "/b"))
	return f
}

// record records lat values on route a and b, and sizes.
func (f *fixture) record(latA, latB []float64, sizeA, sizeB int64) {
	for _, v := range latA {
		stats.Record(f.a, f.lat.M(v))
	}
	for _, v := range latB {
		stats.Record(f.b, f.lat.M(v))
	}
	stats.Record(f.a, f.size.M(sizeA))
	stats.Record(f.b, f.size.M(sizeB))
	f.latA, f.latB = latA, latB
	f.countA, f.countB = len(latA), len(latB)
	f.sizeA, f.sizeB = sizeA, sizeB
}

// bucketsOf counts values into the buckets of bounds under the rule.
func bucketsOf(values map[float64]int64, bounds []float64, upper bool) []int64 {
	out := make([]int64, len(bounds)+1)
	for v, n := range values {
		for i := range out {
			if inBucket(bounds, upper, i, v) {
				out[i] += n
				break
			}
		}
	}
	return out
}

func bucketsOfValues(vs []float64, bounds []float64, upper bool) []int64 {
	m := map[float64]int64{}
	for _, v := range vs {
		m[v]++
	}
	return bucketsOf(m, bounds, upper)
}

// seriesKey is how the model keys a series: name and sorted tags.
func seriesKey(name string, tags ...string) string {
	slices.Sort(tags)
	return name + "|" + strings.Join(tags, ",")
}

// plainKey is the folded name of a plain-StatsD series.
func plainKey(name string, tags ...string) string {
	slices.Sort(tags) // the view's key order: by name
	for _, t := range tags {
		k, v, _ := strings.Cut(t, ":")
		name += "." + string(appendSegment(nil, k)) + "." + string(appendSegment(nil, v))
	}
	return name + "|"
}

func TestEveryViewType(t *testing.T) {
	for _, dialect := range []Dialect{DogStatsD, Plain} {
		for _, network := range []string{"udp", "unixgram", "tcp", "unix"} {
			t.Run(fmt.Sprintf("dialect=%d/%s", dialect, network), func(t *testing.T) {
				f := newFixture(t)
				plain := dialect == Plain
				ag := newAgent(t, network, plain, DefaultUDPDatagramBytes)
				e := newExporter(t, Options{Addr: ag.addr, Dialect: dialect, MaxDatagramBytes: DefaultUDPDatagramBytes})
				key := func(name string, tags ...string) string {
					if plain {
						return plainKey(name, tags...)
					}
					return seriesKey(name, tags...)
				}
				check := func(latA, latB []float64, sizeA, sizeB, inflightA, inflightB, lastA, lastB int64) {
					t.Helper()
					lines := ag.take()
					m := modelOf(t, lines)
					want := map[string]float64{key(f.requests, "route:/a", "method:GET"): float64(len(latA))}
					if len(latB) > 0 {
						want[key(f.requests, "route:/b")] = float64(len(latB))
					}
					for k, v := range map[string]int64{key(f.bytes, "route:/a"): sizeA, key(f.bytes, "route:/b"): sizeB} {
						if v != 0 { // no change: no line
							want[k] = float64(v)
						}
					}
					for k, v := range want {
						if m.counters[k] != v {
							t.Errorf("counter %s = %v; want %v (lines %v)", k, m.counters[k], v, raw(lines))
						}
					}
					if len(m.counters) != len(want) {
						t.Errorf("counters %v; want %v", m.counters, want)
					}
					gauges := map[string]float64{
						key(f.inflight, "route:/a"): float64(inflightA), key(f.inflight, "route:/b"): float64(inflightB),
						key(f.last, "route:/a"): float64(lastA), key(f.last, "route:/b"): float64(lastB),
					}
					for k, v := range gauges {
						if g, ok := m.gauges[k]; !ok || g != v {
							t.Errorf("gauge %s = %v (%v); want %v", k, g, ok, v)
						}
					}
					for _, d := range []struct {
						name  string
						upper bool
					}{{f.latency, false}, {f.latencyUI, true}} {
						for _, r := range []struct {
							route string
							vals  []float64
						}{{"/a", latA}, {"/b", latB}} {
							k := key(d.name, "route:"+r.route)
							got := bucketsOf(m.dists[k], f.bounds, d.upper)
							want := bucketsOfValues(r.vals, f.bounds, d.upper)
							if !slices.Equal(got, want) {
								t.Errorf("%s: buckets %v; want %v (values %v)", k, got, want, m.dists[k])
							}
							if len(r.vals) == 0 && m.dists[k] != nil {
								t.Errorf("%s sent without a change", k)
							}
						}
					}
				}
				// Export 1: values in every bucket, a negative gauge.
				f.record([]float64{0.5, 3, 3, 7, 20, 100, 100, 100}, []float64{2}, 10, 20)
				stats.Record(f.b, f.size.M(-7)) // b's sum 13, last value -7
				export(t, e)
				ag.wait(1)
				time.Sleep(50 * time.Millisecond) // the rest of the export's datagrams
				check(f.latA, f.latB, 10, 13, 10, 13, 10, -7)
				// Export 2: only what changed: b has no latency.
				f.record([]float64{4, 4, 4, 60}, nil, 5, 0)
				export(t, e)
				ag.wait(1)
				time.Sleep(50 * time.Millisecond)
				check(f.latA, nil, 5, 0, 15, 13, 5, 0)
			})
		}
	}
}

func raw(ls []line) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.raw
	}
	return out
}

// TestDistributionValues checks the native distribution lines: per count
// one multi-value line, the interval's mean when one bucket changed, the
// middle of inner buckets, min and max in the edge buckets.
func TestDistributionValues(t *testing.T) {
	f := newFixture(t)
	ag := newAgent(t, "udp", false, DefaultUDPDatagramBytes)
	e := newExporter(t, Options{Addr: ag.addr})
	// a: 1 in (-inf,1), 2 in [1,5), 1 in [5,10), 3 in [50,inf)
	f.record([]float64{0.25, 2, 3, 7, 60, 70, 80}, []float64{6, 8}, 0, 0)
	export(t, e)
	ag.wait(1)
	time.Sleep(50 * time.Millisecond)
	got := map[string]bool{}
	for _, l := range ag.take() {
		if l.name == f.latency {
			got[l.raw] = true
		}
	}
	want := []string{
		f.latency + ":0.25:7.5|d|#route:/a", // count 1: bucket 0's min, [5,10)'s middle
		f.latency + ":3|d|@0.5|#route:/a",   // count 2: [1,5)'s middle
		f.latency + ":80|d|@" + fmt.Sprint(1.0/3) + "|#route:/a",
		f.latency + ":7|d|@0.5|#route:/b", // one bucket changed: the mean, sum exact
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("missing %q; got %v", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d lines; want %d: %v", len(got), len(want), got)
	}
}

func TestNoMultiValue(t *testing.T) {
	f := newFixture(t)
	ag := newAgent(t, "udp", false, DefaultUDPDatagramBytes)
	e := newExporter(t, Options{Addr: ag.addr, NoMultiValue: true, DistributionType: TypeHistogram})
	f.record([]float64{0.25, 7, 20}, nil, 0, 0)
	export(t, e)
	ag.wait(1)
	time.Sleep(50 * time.Millisecond)
	n := 0
	for _, l := range ag.take() {
		if l.name == f.latency {
			n++
			if len(l.values) != 1 || l.typ != "h" {
				t.Errorf("line %q: want one value, type h", l.raw)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d lines; want 3", n)
	}
}

// TestPacking: datagrams never exceed MaxDatagramBytes, never split a
// line, and carry several lines; a multi-value line longer than a
// datagram is cut between values; a line alone over the limit is dropped
// and counted.
func TestPacking(t *testing.T) {
	p := fmt.Sprintf("pk%d", seq.Add(1))
	m := stats.Float64(p+"/m", "", "")
	bounds := make([]float64, 200)
	for i := range bounds {
		bounds[i] = float64(i + 1)
	}
	register(t,
		&view.View{Name: p + "/count", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/dist", Measure: m, Aggregation: view.Distribution(bounds...)},
	)
	for i := range 300 {
		stats.Record(ctxWith(t, tag.Upsert(keyRoute, fmt.Sprintf("/route/%03d", i))), m.M(float64(i%200)+0.5))
	}
	const max = 300
	ag := newAgent(t, "udp", false, max)
	e := newExporter(t, Options{Addr: ag.addr, MaxDatagramBytes: max})
	export(t, e)
	ls := ag.wait(300 + 1)
	time.Sleep(100 * time.Millisecond)
	ls = ag.take()
	md := modelOf(t, ls)
	total := 0.0
	for k, v := range md.counters {
		if strings.HasPrefix(k, p+"_count|") {
			total += v
		}
	}
	if total != 300 {
		t.Errorf("counts sum to %v; want 300", total)
	}
	dist := md.dists[p+"_dist|"]
	var n int64
	for _, c := range dist {
		n += c
	}
	if n != 300 || len(dist) != 200 {
		t.Errorf("distribution: %d values in %d buckets; want 300 in 200", n, len(dist))
	}
	multi := 0
	for _, l := range ls {
		if l.name == p+"_dist" && len(l.values) > 1 {
			multi++
		}
	}
	if multi < 2 {
		t.Errorf("%d multi-value lines; want the 200 values cut into several", multi)
	}
	st := e.Stats()
	if st.Sent < 10 || float64(st.Points)/float64(st.Sent) < 2 {
		t.Errorf("Stats %+v: want many datagrams of several lines", st)
	}

	// A name too long for any datagram: dropped and counted, the rest sent.
	long := p + "/" + strings.Repeat("x", 200)
	register(t, &view.View{Name: long, Measure: m, Aggregation: view.Count()})
	stats.Record(context.Background(), m.M(1))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ag2 := newAgent(t, "udp", false, 150)
	e = newExporter(t, Options{Addr: ag2.addr, MaxDatagramBytes: 150})
	before := e.Stats()
	if err := e.Export(ctx); err == nil || !strings.Contains(err.Error(), ErrOversized.Error()) {
		t.Errorf("Export: %v; want %v", err, ErrOversized)
	}
	after := e.Stats()
	if after.Dropped != before.Dropped+1 || after.Sent <= before.Sent {
		t.Errorf("Stats before %+v after %+v: want one drop and the rest sent", before, after)
	}
}

// TestHostileNames: names, keys and values holding every protocol
// character make lines a strict parser reads back to the documented
// sanitised forms, in both dialects.
func TestHostileNames(t *testing.T) {
	p := fmt.Sprintf("ho%d", seq.Add(1))
	m := stats.Int64(p+"/m", "", "")
	hostileKey := tag.MustNewKey("k:e|y@#,x")
	name := p + "/a:b|c@d#e,f g.h~"
	register(t, &view.View{Name: name, Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{hostileKey, keyRoute}})
	val := "v:1|@#,2 ~"
	stats.Record(ctxWith(t, tag.Upsert(hostileKey, val), tag.Upsert(keyRoute, "/x.y")), m.M(3))
	wantName := p + "_a_b_c_d_e_f_g.h_"
	for _, dialect := range []Dialect{DogStatsD, Plain} {
		ag := newAgent(t, "udp", dialect == Plain, DefaultUDPDatagramBytes)
		e := newExporter(t, Options{Addr: ag.addr, Dialect: dialect, Namespace: "ns|1", Tags: []string{"te:am|x,y", "solo", "empty:"}})
		export(t, e)
		ls := ag.wait(1)
		var got []string
		for _, l := range ls {
			got = append(got, l.raw)
		}
		want := "ns_1." + wantName + ":3|c|#te:am_x_y,solo,empty,k_e_y_x:v:1_@#_2 ~,route:/x.y"
		if dialect == Plain {
			want = "ns_1." + wantName + ".te.am_x_y.solo.empty.k_e_y_x.v_1_2_.route._x_y:3|c"
		}
		if !slices.Contains(got, want) {
			t.Errorf("dialect %d: got %q; want %q", dialect, got, want)
		}
		e.Stop(context.Background())
	}
}

func TestSanitizers(t *testing.T) {
	for _, c := range []struct{ in, name, key, value, seg string }{
		{"abc", "abc", "abc", "abc", "abc"},
		{"a.b-c/d", "a.b_c_d", "a.b-c/d", "a.b-c/d", "a_b-c_d"},
		{":|@#,\n", "_", "_", ":_@#_", "_"},
		{"x\r\ny", "x_y", "x_y", "x_y", "x_y"},
		{"\u00e9t\u00e9", "_t_", "_t_", "\u00e9t\u00e9", "_t_"},
		{"a\xffb", "a_b", "a_b", "a\ufffdb", "a_b"},
		{"", "", "_", "", "_"},
	} {
		if got := string(appendName(nil, c.in)); got != c.name {
			t.Errorf("name(%q) = %q; want %q", c.in, got, c.name)
		}
		if got := string(appendTagKey(nil, c.in)); got != c.key {
			t.Errorf("key(%q) = %q; want %q", c.in, got, c.key)
		}
		if got := string(appendTagValue(nil, c.in)); got != c.value {
			t.Errorf("value(%q) = %q; want %q", c.in, got, c.value)
		}
		if got := string(appendSegment(nil, c.in)); got != c.seg {
			t.Errorf("segment(%q) = %q; want %q", c.in, got, c.seg)
		}
	}
}

func FuzzLine(f *testing.F) {
	f.Add("a/b", "k", "v", 1.5)
	f.Add(":|@#,\n", "\n", ",|", -3.0)
	f.Fuzz(func(t *testing.T, name, k, v string, x float64) {
		for _, plain := range []bool{false, true} {
			e := &encoder{o: &Options{}, plain: plain, max: 1 << 20, datagram: true, typ: "d"}
			e.name = appendName(e.name, name)
			if len(e.name) == 0 {
				e.name = append(e.name, 'x')
			}
			if plain {
				e.tags = append(append(append(append(e.tags, '.'), appendSegment(nil, k)...), '.'), appendSegment(nil, v)...)
			} else if v != "" { // an empty value is an absent tag (seriesTags)
				e.tags = append(append(append(append(e.tags, "|#"...), appendTagKey(nil, k)...), ':'), appendTagValue(nil, v)...)
			}
			e.gauge("", x, -1)
			e.pairs = append(e.pairs[:0], pair{1, x}, pair{3, x})
			if isFinite(x) {
				e.values(e.pairs[:1])
				if !plain {
					e.values(e.pairs[1:])
				}
			}
			for _, s := range strings.Split(strings.TrimSuffix(string(e.pkt), "\n"), "\n") {
				if s == "" {
					continue
				}
				if _, err := parseLine(s, plain); err != nil {
					t.Fatalf("plain=%v: %v", plain, err)
				}
			}
		}
	})
}

func TestExactRate(t *testing.T) {
	for n := uint64(1); n <= 1_000_000; n++ {
		if r, ok := exactRate(n); ok {
			if 1/r != float64(n) {
				t.Fatalf("exactRate(%d) = %v", n, r)
			}
			continue
		}
		if n == 1 {
			t.Fatal("1 has no exact rate")
		}
		a, ok := splitRate(n)
		if !ok {
			t.Fatalf("splitRate(%d): none", n)
		}
		if _, ok := exactRate(a); !ok {
			t.Fatalf("splitRate(%d) = %d", n, a)
		}
		if _, ok := exactRate(n - a); !ok {
			t.Fatalf("splitRate(%d) = %d", n, a)
		}
	}
	for _, n := range []uint64{49, 93, 1 << 40, 1<<40 + 7} {
		if r := floorRate(n); uint64(1/r) != n {
			t.Errorf("floorRate(%d) = %v: 1/r = %v", n, r, 1/r)
		}
	}
}

func TestRepresentative(t *testing.T) {
	b := []float64{1, 5, 10}
	for _, upper := range []bool{false, true} {
		for i := 0; i <= len(b); i++ {
			for _, d := range []struct{ min, max float64 }{{0.5, 20}, {math.Inf(-1), math.Inf(1)}, {math.NaN(), math.NaN()}} {
				ds := statsDist(d.min, d.max)
				x := representative(b, upper, i, &ds, false)
				if !inBucket(b, upper, i, x) || !isFinite(x) {
					t.Errorf("upper=%v bucket %d (min %v max %v): %v is not in it", upper, i, d.min, d.max, x)
				}
			}
		}
	}
}

func statsDist(min, max float64) core.DistStats {
	return core.DistStats{Count: 3, Min: min, Max: max, Mean: math.NaN()}
}
