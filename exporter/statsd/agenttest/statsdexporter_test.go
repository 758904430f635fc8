package agenttest

import (
	"context"
	"fmt"
	"github.com/zerostat/zerostat/internal/testbackend"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zerostat/zerostat/exporter/statsd"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// sdx is a running statsd_exporter.
type sdx struct {
	udp, tcp, unixgram, web string
}

var seq atomic.Int64

// freePort returns a loopback address on network whose port was free a
// moment ago (testbackend.FreeAddr).
func freePort(t testing.TB, network string) string {
	t.Helper()
	return testbackend.FreeAddr(t, network)
}

// statsdExporterBinary builds (once, cached) and returns statsd_exporter.
func statsdExporterBinary(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("bash", "../../../scripts/build-statsd-exporter.sh").Output()
	if err != nil {
		t.Fatalf("scripts/build-statsd-exporter.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// startStatsdExporter runs statsd_exporter on loopback with every
// distribution a histogram of buckets (nil: its default, a summary).
func startStatsdExporter(t testing.TB, buckets []float64) *sdx {
	t.Helper()
	bin := statsdExporterBinary(t)
	dir := t.TempDir()
	x := &sdx{udp: freePort(t, "udp"), tcp: freePort(t, "tcp"), web: freePort(t, "tcp"), unixgram: filepath.Join(dir, "dsd.sock")}
	args := []string{"--web.listen-address=" + x.web, "--statsd.listen-udp=" + x.udp, "--statsd.listen-tcp=" + x.tcp,
		"--statsd.listen-unixgram=" + x.unixgram, "--log.level=warn"}
	if buckets != nil {
		var b []string
		for _, v := range buckets {
			b = append(b, fmt.Sprint(v))
		}
		cfg := "defaults:\n  observer_type: histogram\n  histogram_options:\n    buckets: [" + strings.Join(b, ", ") + "]\n"
		path := filepath.Join(dir, "mapping.yml")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--statsd.mapping-config="+path)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if r, err := http.Get("http://" + x.web + "/metrics"); err == nil {
			r.Body.Close()
			if _, err := os.Stat(x.unixgram); err == nil {
				return x
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("statsd_exporter not ready after 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (x *sdx) scrape(t testing.TB) map[string]*dto.MetricFamily {
	t.Helper()
	r, err := http.Get("http://" + x.web + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// sample finds the metric of family name with exactly labels.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		ok := true
		for _, l := range m.Label {
			if labels[l.GetName()] != l.GetValue() {
				ok = false
			}
		}
		if ok {
			return m
		}
	}
	return nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m == nil:
		return math.NaN()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return math.NaN()
}

// checkClean fails on any line statsd_exporter could not read.
func (x *sdx) checkClean(t testing.TB, fams map[string]*dto.MetricFamily) {
	t.Helper()
	if f := fams["statsd_exporter_sample_errors_total"]; f != nil {
		for _, m := range f.Metric {
			t.Errorf("statsd_exporter sample errors: %v %v", m.Label, value(m))
		}
	}
	for _, n := range []string{"statsd_exporter_tag_errors_total", "statsd_exporter_udp_packet_drops_total", "statsd_exporter_tcp_too_long_lines_total"} {
		if v := value(sample(fams, n, nil)); v != 0 {
			t.Errorf("%s = %v; want 0", n, v)
		}
	}
}

var reInvalid = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// promName is statsd_exporter's escapeMetricName for our names: every
// character outside [a-zA-Z0-9_] made '_'.
func promName(s string) string { return reInvalid.ReplaceAllString(s, "_") }

var (
	keyRoute  = tag.MustNewKey("route")
	keyMethod = tag.MustNewKey("method")
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

// series is one tag set of the workload: its recordings.
type series struct {
	route, method string
	ctx           context.Context
	lat           []float64
	sizes         []int64 // a Sum's: not negative (statsd_exporter refuses a counter's negative change)
	levels        []int64 // an UpDownSum's and a LastValue's
}

// TestStatsdExporter sends one view of each kind, in both dialects and
// both distribution modes, over UDP, TCP and a Unix datagram socket, to
// a real statsd_exporter, and reads its /metrics: counters, gauges and
// histogram buckets must hold exactly what was recorded, DogStatsD tags
// as labels (a value with ':' '@' '#' kept), over two exports.
func TestStatsdExporter(t *testing.T) {
	bounds := []float64{1, 5, 10, 50}
	for _, dialect := range []statsd.Dialect{statsd.DogStatsD, statsd.Plain} {
		for _, oc := range []bool{false, true} {
			for _, transport := range []string{"udp", "tcp", "unixgram"} {
				name := fmt.Sprintf("%s/%s/%s", map[statsd.Dialect]string{statsd.DogStatsD: "dogstatsd", statsd.Plain: "plain"}[dialect],
					map[bool]string{false: "native", true: "opencensus"}[oc], transport)
				t.Run(name, func(t *testing.T) {
					// Plain sends |ms, which statsd_exporter divides by 1000.
					scale := 1.0
					if dialect == statsd.Plain {
						scale = 1000
					}
					hb := make([]float64, len(bounds))
					for i, b := range bounds {
						hb[i] = b / scale
					}
					x := startStatsdExporter(t, hb)
					addr := map[string]string{"udp": x.udp, "tcp": "tcp://" + x.tcp, "unixgram": "unixgram://" + x.unixgram}[transport]
					runMatrixCase(t, x, addr, dialect, oc, bounds, scale)
				})
			}
		}
	}
}

func runMatrixCase(t *testing.T, x *sdx, addr string, dialect statsd.Dialect, oc bool, bounds []float64, scale float64) {
	p := fmt.Sprintf("ag%d", seq.Add(1))
	lat := stats.Float64(p+"/lat", "", stats.UnitMilliseconds)
	size := stats.Int64(p+"/size", "", stats.UnitBytes)
	level := stats.Int64(p+"/level", "", stats.UnitDimensionless)
	register(t,
		&view.View{Name: p + "/requests", Measure: lat, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, keyMethod}},
		&view.View{Name: p + "/bytes", Measure: size, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/inflight", Measure: level, Aggregation: view.UpDownSum(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/last", Measure: level, Aggregation: view.LastValue(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/latency", Measure: lat, Aggregation: view.Distribution(bounds...), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/latency_ui", Measure: lat, Aggregation: view.DistributionUpperInclusive(bounds...), TagKeys: []tag.Key{keyRoute}},
	)
	ss := []*series{
		{route: "/a", method: "GET"},
		{route: "/x:y@z#w", method: "POST"}, // protocol characters in a value, kept
	}
	for _, s := range ss {
		s.ctx = ctxWith(t, tag.Upsert(keyRoute, s.route), tag.Upsert(keyMethod, s.method))
	}
	e, err := statsd.New(statsd.Options{Addr: addr, Dialect: dialect, OpenCensusDatadog: oc, Namespace: "ns",
		Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop(context.Background())
	intervals := []struct {
		lat    [2][]float64
		sizes  [2][]int64
		levels [2][]int64
	}{
		{[2][]float64{{0.5, 3, 3, 7, 20, 100, 100, 100}, {2}}, [2][]int64{{10, 20}, {7}}, [2][]int64{{4}, {-7}}},
		{[2][]float64{{4, 4, 4, 60}, nil}, [2][]int64{{5}, {0}}, [2][]int64{{6, 1}, {3, -9}}},
	}
	for _, iv := range intervals {
		for i, s := range ss {
			for _, v := range iv.lat[i] {
				stats.Record(s.ctx, lat.M(v))
			}
			for _, v := range iv.sizes[i] {
				stats.Record(s.ctx, size.M(v))
			}
			for _, v := range iv.levels[i] {
				stats.Record(s.ctx, level.M(v))
			}
			s.lat = append(s.lat, iv.lat[i]...)
			s.sizes = append(s.sizes, iv.sizes[i]...)
			s.levels = append(s.levels, iv.levels[i]...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := e.Export(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	plain := dialect == statsd.Plain
	// metric returns the Prometheus name and labels statsd_exporter gives
	// a series of name (with a suffix) and tags.
	metric := func(name string, tags ...string) (string, map[string]string) {
		full := "ns." + promName(p) + "_" + name
		labels := map[string]string{}
		for _, t := range tags {
			k, v, _ := strings.Cut(t, ":")
			if plain {
				full += "." + seg(k) + "." + seg(v)
			} else {
				labels[k] = v
			}
		}
		return promName(full), labels
	}
	want := map[string]float64{} // "name{labels}" → value
	add := func(v float64, name string, tags ...string) {
		n, l := metric(name, tags...)
		want[key(n, l)] = v
	}
	for _, s := range ss {
		rt, mt := "route:"+s.route, "method:"+s.method
		tags := []string{mt, rt}
		add(float64(len(s.lat)), "requests", tags...)
		var sum, lsum int64
		for _, v := range s.sizes {
			sum += v
		}
		for _, v := range s.levels {
			lsum += v
		}
		add(float64(sum), "bytes", rt)
		add(float64(lsum), "inflight", rt)
		add(float64(s.levels[len(s.levels)-1]), "last", rt)
		if oc {
			for _, d := range []struct {
				name  string
				upper bool
			}{{"latency", false}, {"latency_ui", true}} {
				st := distStats(s.lat)
				add(float64(len(s.lat)), d.name+".count", rt)
				add(st.min, d.name+".min", rt)
				add(st.max, d.name+".max", rt)
				add(st.mean, d.name+".avg", rt)
				add(st.m2, d.name+".squared_dev_sum", rt)
				for i, c := range bucketCounts(s.lat, bounds, d.upper) {
					add(float64(c), d.name+".count_per_bucket", rt, fmt.Sprintf("bucket_idx:%d", i))
				}
			}
		}
	}
	// Poll until the last export has been read.
	var fams map[string]*dto.MetricFamily
	deadline := time.Now().Add(10 * time.Second)
	for {
		fams = x.scrape(t)
		if missing := compare(fams, want, true); len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, d := range compare(fams, want, false) {
		t.Error(d)
	}
	if t.Failed() {
		for n := range fams {
			if strings.Contains(n, p) {
				t.Logf("scrape has %s", n)
			}
		}
	}
	x.checkClean(t, fams)
	if oc {
		return
	}
	// Native distributions: histogram buckets exact, counts exact, sums
	// within the documented bound.
	for _, d := range []struct {
		name  string
		upper bool
	}{{"latency", false}, {"latency_ui", true}} {
		for _, s := range ss {
			n, l := metric(d.name, "route:"+s.route)
			m := sample(fams, n, l)
			if m == nil || m.Histogram == nil {
				t.Errorf("%s%v: no histogram in the scrape", n, l)
				continue
			}
			var got []int64
			var prev uint64
			for _, b := range m.Histogram.Bucket {
				if math.IsInf(b.GetUpperBound(), 1) {
					continue // the count's
				}
				got = append(got, int64(b.GetCumulativeCount()-prev))
				prev = b.GetCumulativeCount()
			}
			got = append(got, int64(m.Histogram.GetSampleCount()-prev))
			wantB := bucketCounts(s.lat, bounds, d.upper)
			if !slices.Equal(got, wantB) {
				t.Errorf("%s%v: buckets %v; want %v", n, l, got, wantB)
			}
			if c := m.Histogram.GetSampleCount(); c != uint64(len(s.lat)) {
				t.Errorf("%s%v: count %d; want %d", n, l, c, len(s.lat))
			}
			trueSum, bound := sumBound(s.lat, bounds, d.upper)
			if got := m.Histogram.GetSampleSum() * scale; math.Abs(got-trueSum) > bound+1e-9 {
				t.Errorf("%s%v: sum %v; want %v ± %v", n, l, got, trueSum, bound)
			}
		}
	}
}

// seg is the folding rule for a plain key or value.
func seg(s string) string {
	out := regexp.MustCompile(`[^A-Za-z0-9_\-]+`).ReplaceAllString(s, "_")
	if out == "" {
		return "_"
	}
	return out
}

func key(name string, labels map[string]string) string {
	var ls []string
	for k, v := range labels {
		ls = append(ls, k+"="+v)
	}
	slices.Sort(ls)
	return name + "{" + strings.Join(ls, ",") + "}"
}

// compare lists what the scrape lacks or holds differently from want
// (floats to 1e-9 relative: the squared deviations are computed apart).
func compare(fams map[string]*dto.MetricFamily, want map[string]float64, quick bool) []string {
	var diffs []string
	for k, w := range want {
		name, rest, _ := strings.Cut(k, "{")
		labels := map[string]string{}
		for _, kv := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
			if kv == "" {
				continue
			}
			lk, lv, _ := strings.Cut(kv, "=")
			labels[lk] = lv
		}
		got := value(sample(fams, name, labels))
		if !(math.Abs(got-w) <= 1e-9*math.Max(1, math.Abs(w))) {
			diffs = append(diffs, fmt.Sprintf("%s = %v; want %v", k, got, w))
			if quick {
				return diffs
			}
		}
	}
	slices.Sort(diffs)
	return diffs
}

type dist struct{ min, max, mean, m2 float64 }

func distStats(vs []float64) dist {
	d := dist{min: math.Inf(1), max: math.Inf(-1)}
	for _, v := range vs {
		d.min, d.max = math.Min(d.min, v), math.Max(d.max, v)
		d.mean += v
	}
	d.mean /= float64(len(vs))
	for _, v := range vs {
		d.m2 += (v - d.mean) * (v - d.mean)
	}
	return d
}

func inBucket(bounds []float64, upper bool, i int, x float64) bool {
	if i > 0 && (upper && x <= bounds[i-1] || !upper && x < bounds[i-1]) {
		return false
	}
	if i < len(bounds) && (upper && x > bounds[i] || !upper && x >= bounds[i]) {
		return false
	}
	return true
}

func bucketOf(bounds []float64, upper bool, x float64) int {
	for i := 0; i <= len(bounds); i++ {
		if inBucket(bounds, upper, i, x) {
			return i
		}
	}
	return -1
}

func bucketCounts(vs, bounds []float64, upper bool) []int64 {
	out := make([]int64, len(bounds)+1)
	for _, v := range vs {
		out[bucketOf(bounds, upper, v)]++
	}
	return out
}

// sumBound is the recorded sum and the error bound the package documents
// for the sum the agent rebuilds: half an inner bucket's width per value,
// and for the edge buckets the distance from each value to the series'
// min or max (whose values they are sent as). Over the whole series: each
// interval's bound added up is at most this.
func sumBound(vs, bounds []float64, upper bool) (sum, bound float64) {
	d := distStats(vs)
	for _, v := range vs {
		sum += v
		switch i := bucketOf(bounds, upper, v); {
		case i == 0:
			bound += v - d.min
		case i == len(bounds):
			bound += d.max - v
		default:
			bound += (bounds[i] - bounds[i-1]) / 2
		}
	}
	return sum, bound
}

// TestStatsdExporterQuantiles: with statsd_exporter's default summary,
// each quantile it computes from a native distribution lies in the bucket
// that holds the recorded values' quantile, for |d, |h and |ms values
// over a multi-value line.
func TestStatsdExporterQuantiles(t *testing.T) {
	bounds := []float64{1, 5, 10, 50}
	x := startStatsdExporter(t, nil)
	p := fmt.Sprintf("aq%d", seq.Add(1))
	lat := stats.Float64(p+"/lat", "", stats.UnitMilliseconds)
	register(t, &view.View{Name: p + "/latency", Measure: lat, Aggregation: view.Distribution(bounds...)})
	// 40 values in bucket 0, 30 in 1, 25 in 2, 5 in 4: the 0.5, 0.9 and
	// 0.99 quantiles (ranks 50, 90, 99, with the summary's error of
	// 5, 1 and 0.1 ranks) fall well inside buckets 1, 2 and 4.
	var vals []float64
	for i := range 40 {
		vals = append(vals, 0.1+float64(i)/100)
	}
	for i := range 30 {
		vals = append(vals, 1+float64(i)/10)
	}
	for i := range 25 {
		vals = append(vals, 5+float64(i)/5)
	}
	for i := range 5 {
		vals = append(vals, 60+float64(i))
	}
	for _, v := range vals {
		stats.Record(context.Background(), lat.M(v))
	}
	for _, typ := range []string{statsd.TypeDistribution, statsd.TypeHistogram, statsd.TypeTimer} {
		e, err := statsd.New(statsd.Options{Addr: x.udp, DistributionType: typ, Namespace: typ, Interval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := e.Export(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		e.Stop(context.Background())
	}
	want := map[float64]int{0.5: 1, 0.9: 2, 0.99: 4}
	for _, typ := range []string{statsd.TypeDistribution, statsd.TypeHistogram, statsd.TypeTimer} {
		name := promName(typ + "." + promName(p) + "_latency")
		scale := 1.0
		if typ == statsd.TypeTimer {
			scale = 1000
		}
		var m *dto.Metric
		deadline := time.Now().Add(10 * time.Second)
		for {
			fams := x.scrape(t)
			m = sample(fams, name, nil)
			if m != nil && m.Summary != nil && m.Summary.GetSampleCount() == uint64(len(vals)) || time.Now().After(deadline) {
				x.checkClean(t, fams)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if m == nil || m.Summary == nil {
			t.Errorf("%s: no summary in the scrape", name)
			continue
		}
		if c := m.Summary.GetSampleCount(); c != uint64(len(vals)) {
			t.Errorf("%s: count %d; want %d", name, c, len(vals))
		}
		for _, q := range m.Summary.Quantile {
			b, ok := want[q.GetQuantile()]
			if !ok {
				continue
			}
			v := q.GetValue() * scale
			if !inBucket(bounds, false, b, v) {
				t.Errorf("%s: quantile %v = %v, outside bucket %d of %v", name, q.GetQuantile(), v, b, bounds)
			}
		}
	}
}
