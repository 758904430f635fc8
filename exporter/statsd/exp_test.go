package statsd

import (
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/internal/statsdgolden"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var update = flag.Bool("update", false, "rewrite the exponential golden files from the encoder's output")

// encodeViews returns the lines of each of exports encoder exports (run
// after each of the steps) of the views named, through an encoder of o
// whose datagrams are captured, not sent.
func encodeViews(t *testing.T, o Options, names []string, steps ...func()) [][]string {
	t.Helper()
	if o.DistributionType == "" { // New's defaults
		o.DistributionType = map[Dialect]string{DogStatsD: TypeDistribution, Plain: TypeTimer}[o.Dialect]
	}
	e := newEncoder(&o, true, 1432)
	t.Cleanup(e.tracker.Close)
	e.views = func() []*core.View {
		var vs []*core.View
		for _, v := range core.Views() {
			if slices.Contains(names, v.Name) {
				vs = append(vs, v)
			}
		}
		return vs
	}
	var got []string
	e.send = func(b []byte, _ int) error {
		got = append(got, strings.Split(string(b), "\n")...)
		return nil
	}
	var out [][]string
	for _, step := range steps {
		step()
		got = nil
		if err := e.encode(); err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
	}
	return out
}

// expWorkload registers the exponential golden files' view, exp/latency
// (maxSize 4, maxScale 0: buckets (2^i, 2^(i+1)], and a downscale in the
// second period), and returns the two periods' recordings: route /a -3,
// 0, 1.5, 3, 3, 5 and route /b 0.75, 0.75; then /a 100.
func expWorkload(t *testing.T) []func() {
	m := stats.Float64("expgolden/latency", "", stats.UnitMilliseconds)
	route := tag.MustNewKey("route")
	register(t, &view.View{Name: "exp/latency", Measure: m, Aggregation: view.ExponentialDistribution(4, 0), TagKeys: []tag.Key{route}})
	a := ctxWith(t, tag.Upsert(route, "/a"))
	b := ctxWith(t, tag.Upsert(route, "/b"))
	return []func(){
		func() {
			for _, v := range []float64{-3, 0, 1.5, 3, 3, 5} {
				stats.Record(a, m.M(v))
			}
			stats.Record(b, m.M(0.75), m.M(0.75))
		},
		func() { stats.Record(a, m.M(100)) },
	}
}

// TestExponentialGolden checks the exponential-distribution mapping line
// by line against golden files, in each mode (testdata/exp-*.golden;
// each file's comments derive its lines by hand from the rule):
//
//   - native DogStatsD: per bucket that changed in the interval one value
//     inside it (the bucket's middle; 0 for the zero bucket; the mean when
//     one bucket changed) weighed by its count, values of one count on one
//     multi-value line, the delta's own scale;
//   - native plain StatsD: the same values as |ms, one per line, tags
//     folded into the name;
//   - OpenCensusDatadog: what the OpenCensus Datadog exporter sends for the
//     view data bridge/opencensus makes of the view (cumulative gauges;
//     count_per_bucket over the explicit bounds of the rows' common
//     scale), without squared_dev_sum.
func TestExponentialGolden(t *testing.T) {
	for _, c := range []struct {
		file string
		o    Options
	}{
		{"exp-dogstatsd.golden", Options{}},
		{"exp-plain.golden", Options{Dialect: Plain}},
		{"exp-opencensus.golden", Options{OpenCensusDatadog: true, Percentiles: []float64{0.5, 0.99}}},
	} {
		t.Run(c.file, func(t *testing.T) {
			got := encodeViews(t, c.o, []string{"exp/latency"}, expWorkload(t)...)
			path := "testdata/" + c.file
			if *update {
				updateGolden(t, path, got)
				return
			}
			golden, err := statsdgolden.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, got, golden)
		})
	}
}

// updateGolden rewrites the exports of a golden file, keeping its
// comment header.
func updateGolden(t *testing.T, path string, exports [][]string) {
	old, _ := os.ReadFile(path)
	var b strings.Builder
	for _, l := range strings.Split(string(old), "\n") {
		if strings.HasPrefix(l, "#") {
			b.WriteString(l + "\n")
		}
	}
	for i, ex := range exports {
		b.WriteString("== export " + strconv.Itoa(i+1) + "\n")
		for _, l := range ex {
			b.WriteString(l + "\n")
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestExpRepresentativeInBucket: the value sent for a bucket is in that
// bucket by the data model's exact index, at every scale, for buckets
// across float64's range: the largest (whose upper edge overflows), the
// subnormal ones (narrower than a float's spacing at fine scales), and
// ordinary ones; the mean is used only when it lies in the bucket.
func TestExpRepresentativeInBucket(t *testing.T) {
	r := rand.New(rand.NewPCG(46, 2))
	values := []float64{math.MaxFloat64, math.SmallestNonzeroFloat64, 3 * math.SmallestNonzeroFloat64, 0x1p-1022, 1, 2, 1e-300, 1e300}
	for range 200 {
		values = append(values, math.Exp(r.NormFloat64()*100))
	}
	for scale := int32(exphist.MinScale); scale <= exphist.MaxScale; scale++ {
		for _, v := range values {
			i := exphist.Index(v, scale)
			s := &exphist.Snapshot{Scale: scale, Count: 1, Sum: v, Min: v, Max: v}
			for _, only := range []bool{false, true} {
				x := expRepresentative(s, 1, i, only)
				if !isFinite(x) || x <= 0 || exphist.Index(x, scale) != i {
					t.Fatalf("scale %d, bucket %d of %v (only %v): %v is not in it", scale, i, v, only, x)
				}
				if only && x != v {
					t.Errorf("scale %d: one value %v: sent %v, not the mean", scale, v, x)
				}
			}
			// Negative: the magnitude, from -min and -max.
			n := &exphist.Snapshot{Scale: scale, Count: 1, Sum: -v, Min: -v, Max: -v}
			if x := expRepresentative(n, -1, i, true); x != v {
				t.Errorf("scale %d: one value %v: sent -%v", scale, -v, x)
			}
		}
	}
	// The mean outside the only bucket (Sum counts a value the histogram
	// dropped at MaxSize 2): the middle instead.
	s := &exphist.Snapshot{Scale: 0, Count: 1, Sum: 100, Min: 3, Max: 3, Dropped: 1}
	if x := expRepresentative(s, 1, exphist.Index(3, 0), true); x != 3 {
		t.Errorf("dropped values: %v; want the middle of (2, 4], 3", x)
	}
}

// TestExpCountsExact: for random workloads of every sign, through each
// export of a delta reader, the counts sent (weighed by their rates as a
// StatsD server weighs them) per bucket equal the interval's counts, and
// each value sent is in the bucket its count is for.
func TestExpCountsExact(t *testing.T) {
	m := stats.Float64("expexact/m", "", "")
	register(t, &view.View{Name: "expexact/v", Measure: m, Aggregation: view.ExponentialDistribution(20, 20)})
	r := rand.New(rand.NewPCG(46, 3))
	var period []float64
	var steps []func()
	var want [][]float64
	for p := range 4 {
		period = nil
		for range 1 + r.IntN(300) {
			var v float64
			switch r.IntN(6) {
			case 0:
				v = 0
			case 1:
				v = -math.Exp(r.NormFloat64() * 3)
			default:
				v = math.Exp(r.NormFloat64()*float64(p+1)) * 10
			}
			period = append(period, v)
		}
		vs := period
		want = append(want, vs)
		steps = append(steps, func() {
			for _, v := range vs {
				stats.Record(nil, m.M(v))
			}
		})
	}
	exports := encodeViews(t, Options{}, []string{"expexact/v"}, steps...)
	for p, lines := range exports {
		// The interval's own histogram, as the delta read has it.
		h := exphist.MustNew(20, 20)
		for _, v := range want[p] {
			h.Record(v)
		}
		var s exphist.Snapshot
		h.Snapshot(&s)
		type key struct {
			sign int
			i    int32
		}
		wantCounts, gotCounts := map[key]float64{}, map[key]float64{}
		for k, c := range s.Positive.Counts {
			if c > 0 {
				wantCounts[key{1, s.Positive.Offset + int32(k)}] = float64(c)
			}
		}
		for k, c := range s.Negative.Counts {
			if c > 0 {
				wantCounts[key{-1, s.Negative.Offset + int32(k)}] = float64(c)
			}
		}
		if s.ZeroCount > 0 {
			wantCounts[key{}] = float64(s.ZeroCount)
		}
		for _, l := range lines {
			name, rest, _ := strings.Cut(l, ":")
			if name != "expexact_v" {
				continue
			}
			fields := strings.Split(rest, "|")
			weight := 1.0
			for _, f := range fields[2:] {
				if rate, ok := strings.CutPrefix(f, "@"); ok {
					x, _ := strconv.ParseFloat(rate, 64)
					weight = 1 / x
				}
			}
			for _, f := range strings.Split(fields[0], ":") {
				x, err := strconv.ParseFloat(f, 64)
				if err != nil {
					t.Fatalf("line %q: %v", l, err)
				}
				k := key{}
				if x != 0 {
					k = key{1, exphist.Index(x, s.Scale)}
					if x < 0 {
						k.sign = -1
					}
				}
				gotCounts[k] += weight
			}
		}
		for k, n := range wantCounts {
			if math.Abs(gotCounts[k]-n) > 1e-9*n {
				t.Errorf("export %d, bucket %+v at scale %d: sent %v values; want %v", p+1, k, s.Scale, gotCounts[k], n)
			}
		}
		if len(gotCounts) != len(wantCounts) {
			t.Errorf("export %d: values sent in %d buckets; want %d", p+1, len(gotCounts), len(wantCounts))
		}
	}
}

// TestEncodeAllocsExponential: an export of exponential views allocates
// nothing in steady state, in every mode (the reads reuse the encoder's
// snapshots; the OpenCensusDatadog layout its slices).
func TestEncodeAllocsExponential(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	m := stats.Float64("expallocs/m", "", "")
	route := tag.MustNewKey("route")
	register(t, &view.View{Name: "expallocs/v", Measure: m, Aggregation: view.ExponentialDistribution(0, 0), TagKeys: []tag.Key{route}})
	a := ctxWith(t, tag.Upsert(route, "/a"))
	b := ctxWith(t, tag.Upsert(route, "/b"))
	for _, o := range []Options{{}, {Dialect: Plain}, {OpenCensusDatadog: true, Percentiles: []float64{0.5, 0.99}}} {
		o.DistributionType = map[Dialect]string{DogStatsD: "d", Plain: "ms"}[o.Dialect]
		e := newEncoder(&o, true, 1432)
		var views []*core.View
		for _, v := range core.Views() {
			if v.Name == "expallocs/v" {
				views = append(views, v)
			}
		}
		e.views = func() []*core.View { return views }
		e.send = func([]byte, int) error { return nil }
		x := 1.0
		round := func() {
			for range 50 {
				x = x*1.37 + 0.01
				if x > 1e6 {
					x = 0.001
				}
				stats.Record(a, m.M(x))
				stats.Record(b, m.M(-x))
			}
			e.encode()
		}
		for range 30 { // every bucket's pair, every layout's size, seen
			round()
		}
		if got := testing.AllocsPerRun(20, round); got != 0 {
			t.Errorf("%+v: %v allocs per export; want 0", o, got)
		}
		e.tracker.Close()
	}
}
