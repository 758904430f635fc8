package e2e

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/promnative"
	"github.com/zerostat/zerostat/internal/testbackend"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// expWorkload is two exponential views, their rows, and a model of each
// row (an exphist histogram of the same size fed the same values in the
// same order): its whole life (cum) and the current interval (iv).
type expWorkload struct {
	record func(round int)
	cum    map[string]*exphist.Histogram // "metric{route}" → every value
	iv     map[string]*exphist.Histogram // the values since the last nextInterval
	vals   map[string][]float64          // every value, in order
	size   map[string][2]int32           // maxSize, maxScale of the row's view
}

// The rows: on e2e/exp_latency (positive values, the defaults 160 and 20)
// /wide, lognormal latencies over 1 ms..100 s (the scale settles near 3);
// /narrow, values within 1% of 100 (a scale above 8, which Prometheus's
// schema caps: the Collector lowers it); /zeros, zeros among positive
// values. On e2e/exp_signed (4 buckets per sign from scale 20: lowered at
// once) /mixed: negative values, zeros and positive ones.
func newExpWorkload(t *testing.T) *expWorkload {
	kRoute := tag.MustNewKey("route")
	kSide := tag.MustNewKey("side")
	lat := stats.Float64("e2e/exp_latency_m", "Latency", stats.UnitMilliseconds)
	signed := stats.Float64("e2e/exp_signed_m", "Balance", stats.UnitDimensionless)
	views := []*view.View{
		{Name: "e2e/exp_latency", Description: "Latency", Measure: lat, TagKeys: []tag.Key{kRoute}, Aggregation: view.ExponentialDistribution(0, 0)},
		{Name: "e2e/exp_signed", Description: "Balance", Measure: signed, TagKeys: []tag.Key{kSide}, Aggregation: view.ExponentialDistribution(4, 20)},
	}
	if err := view.Register(views...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(views...) })
	w := &expWorkload{cum: map[string]*exphist.Histogram{}, iv: map[string]*exphist.Histogram{},
		vals: map[string][]float64{}, size: map[string][2]int32{}}
	type row struct {
		key  string
		ctx  context.Context
		m    *stats.Float64Measure
		size [2]int32
		gen  func(r *rand.Rand) float64
	}
	ctx := func(k tag.Key, v string) context.Context {
		c, err := tag.New(context.Background(), tag.Upsert(k, v))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	rows := []row{
		{"e2e/exp_latency{route=/wide}", ctx(kRoute, "/wide"), lat, [2]int32{160, 20},
			func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()*2.5 - 1) }},
		{"e2e/exp_latency{route=/narrow}", ctx(kRoute, "/narrow"), lat, [2]int32{160, 20},
			func(r *rand.Rand) float64 { return 100 + r.Float64()/2 }},
		{"e2e/exp_latency{route=/zeros}", ctx(kRoute, "/zeros"), lat, [2]int32{160, 20},
			func(r *rand.Rand) float64 {
				if r.IntN(4) == 0 {
					return 0
				}
				return r.ExpFloat64() * 10
			}},
		{"e2e/exp_signed{side=/mixed}", ctx(kSide, "/mixed"), signed, [2]int32{4, 20},
			func(r *rand.Rand) float64 {
				switch r.IntN(5) {
				case 0:
					return 0
				case 1, 2:
					return -r.ExpFloat64() * 3
				}
				return r.ExpFloat64() * 50
			}},
	}
	for _, r := range rows {
		w.size[r.key] = r.size
		w.cum[r.key] = exphist.MustNew(r.size[0], r.size[1])
		w.iv[r.key] = exphist.MustNew(r.size[0], r.size[1])
	}
	rnd := rand.New(rand.NewPCG(45, 5))
	w.record = func(round int) {
		for _, r := range rows {
			for range 50 * round {
				// Multiples of 2^-10 (never rounded to 0): every sum of them
				// is exact, so the sums agree whatever the order of
				// addition (zerostat's cumulative sum adds the drained
				// intervals' sums, the model one value at a time).
				v := r.gen(rnd)
				if v != 0 {
					v = math.Copysign(max(1, math.Round(math.Abs(v)*1024))/1024, v)
				}
				stats.Record(r.ctx, r.m.M(v))
				w.cum[r.key].Record(v)
				w.iv[r.key].Record(v)
				w.vals[r.key] = append(w.vals[r.key], v)
			}
		}
	}
	return w
}

// nextInterval returns the current interval's model snapshots (by row)
// and starts the next interval.
func (w *expWorkload) nextInterval() map[string]*exphist.Snapshot {
	out := map[string]*exphist.Snapshot{}
	for k, h := range w.iv {
		s := new(exphist.Snapshot)
		h.SnapshotReset(s)
		if s.Count > 0 {
			out[k] = s
		}
	}
	return out
}

// cumulative returns the model snapshots of every row's whole life.
func (w *expWorkload) cumulative() map[string]*exphist.Snapshot {
	out := map[string]*exphist.Snapshot{}
	for k, h := range w.cum {
		s := new(exphist.Snapshot)
		h.Snapshot(s)
		out[k] = s
	}
	return out
}

// expPoints returns the exponential histogram points of one batch, by
// "metric{key=value}" (their one attribute), rendered as expPoint does.
func expPoints(md pmetric.Metrics) map[string]string {
	out := map[string]string{}
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				m := ms.At(k)
				if m.Type() != pmetric.MetricTypeExponentialHistogram {
					continue
				}
				dps := m.ExponentialHistogram().DataPoints()
				for l := range dps.Len() {
					dp := dps.At(l)
					var attrs []string
					for k, v := range dp.Attributes().All() {
						attrs = append(attrs, k+"="+v.AsString())
					}
					out[m.Name()+"{"+strings.Join(attrs, ",")+"}"] = expPointString(dp)
				}
			}
		}
	}
	return out
}

// expPointString renders what an ExponentialHistogram point says of its
// values: scale, zero count and threshold, each sign's offset and counts,
// count, sum (or its absence), min and max (or their absence).
func expPointString(dp pmetric.ExponentialHistogramDataPoint) string {
	sum, mm := "none", "none"
	if dp.HasSum() {
		sum = strconv.FormatFloat(dp.Sum(), 'g', -1, 64)
	}
	if dp.HasMin() && dp.HasMax() {
		mm = strconv.FormatFloat(dp.Min(), 'g', -1, 64) + ".." + strconv.FormatFloat(dp.Max(), 'g', -1, 64)
	}
	return fmt.Sprintf("scale %d zero %d (threshold %g) pos %d%v neg %d%v count %d sum %s min..max %s",
		dp.Scale(), dp.ZeroCount(), dp.ZeroThreshold(), dp.Positive().Offset(), dp.Positive().BucketCounts().AsRaw(),
		dp.Negative().Offset(), dp.Negative().BucketCounts().AsRaw(), dp.Count(), sum, mm)
}

// modelString renders a model snapshot as expPointString renders the
// point zerostat's exporters make of it (exporter/otlp: no sum when a
// negative value was recorded; min and max when something was counted;
// no offset for a sign without buckets).
func modelString(s *exphist.Snapshot) string {
	sum, mm := "none", "none"
	if !(s.Min < 0) {
		sum = strconv.FormatFloat(s.Sum, 'g', -1, 64)
	}
	if s.Count > 0 {
		mm = strconv.FormatFloat(s.Min, 'g', -1, 64) + ".." + strconv.FormatFloat(s.Max, 'g', -1, 64)
	}
	counts := func(c []uint64) []uint64 {
		if c == nil {
			return []uint64{}
		}
		return c
	}
	return fmt.Sprintf("scale %d zero %d (threshold %g) pos %d%v neg %d%v count %d sum %s min..max %s",
		s.Scale, s.ZeroCount, 0.0, s.Positive.Offset, counts(s.Positive.Counts), s.Negative.Offset, counts(s.Negative.Counts),
		s.Count, sum, mm)
}

// TestCollectorExponential (issue 45): an exponential view sent by
// zerostat over OTLP and over msgpack through a real Collector: its file
// exporter writes the same ExponentialHistogram for both (scale, offsets,
// counts, zero count, count, sum, min, max), cumulative and delta, and
// both equal the histogram a model fed the same values has; through the
// Collector's prometheusremotewrite exporter the same native histogram
// reaches a real Prometheus (2.42, --enable-feature=native-histograms)
// from both, whose histogram_count, histogram_sum and histogram_quantile
// (0.5, 0.9, 0.99: within the bucket holding the values' quantile) agree
// with the values recorded, at the schema the Collector sends (the scale,
// lowered to 8 above it).
//
// What the Collector's translation does not carry (translator
// prometheusremotewrite v0.165.1, histograms.go): a point without a sum —
// zerostat, as OTLP's data model asks, sends none when a negative value
// was recorded — is refused ("sum is not set"), so the signed view
// reaches Prometheus from neither path; and a zero threshold of 0 is sent
// as 1e-128, so the zero bucket is stored as [-1e-128, 1e-128].
func TestCollectorExponential(t *testing.T) {
	bin := collectorBinary(t)
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{RemoteWriteReceiver: true, NativeHistograms: true})
	dir := t.TempDir()
	zsCum, zsDelta, otCum, otDelta := freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t)
	file := func(name string) string { return filepath.Join(dir, name+".json") }
	cfg := fmt.Sprintf(`
receivers:
  zerostat/cumulative: {endpoint: %q}
  zerostat/delta: {endpoint: %q}
  otlp/cumulative: {protocols: {http: {endpoint: %q}}}
  otlp/delta: {protocols: {http: {endpoint: %q}}}
exporters:
  file/zs_cumulative: {path: %q}
  file/zs_delta: {path: %q}
  file/otlp_cumulative: {path: %q}
  file/otlp_delta: {path: %q}
  prometheusremotewrite:
    endpoint: %q
    target_info: {enabled: false}
service:
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    metrics/zs_cumulative: {receivers: [zerostat/cumulative], exporters: [file/zs_cumulative, prometheusremotewrite]}
    metrics/zs_delta: {receivers: [zerostat/delta], exporters: [file/zs_delta]}
    metrics/otlp_cumulative: {receivers: [otlp/cumulative], exporters: [file/otlp_cumulative, prometheusremotewrite]}
    metrics/otlp_delta: {receivers: [otlp/delta], exporters: [file/otlp_delta]}
`, zsCum, zsDelta, otCum, otDelta, file("zs_cumulative"), file("zs_delta"), file("otlp_cumulative"), file("otlp_delta"),
		prom.URL+"/api/v1/write")
	col := startCollector(t, bin, cfg, zsCum, zsDelta, otCum, otDelta)

	w := newExpWorkload(t)
	msgpack := func(name, addr string, temporality wire.Temporality, version int) *exporter.Exporter {
		e, err := exporter.New(&exporter.HTTPSink{URL: "http://" + addr + "/"}, exporter.Options{
			Temporality: temporality, Compression: exporter.Gzip, Timeout: 5 * time.Second,
			Resource: exporter.Resource{ServiceName: name}, WireVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	otlpExp := func(name, addr string, temporality wire.Temporality) *otlp.Exporter {
		e, err := otlp.New(otlp.Options{Endpoint: "http://" + addr, Timeout: 5 * time.Second, Temporality: temporality,
			Resource: exporter.Resource{ServiceName: name}})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	// The msgpack delta path in wire format version 2 (columns), the
	// cumulative one in version 1: the receiver reads both.
	exps := []interface{ Export(context.Context) error }{
		msgpack("e2e-exp-msgpack", zsCum, exporter.Cumulative, wire.Version),
		msgpack("e2e-exp-msgpack-delta", zsDelta, exporter.Delta, wire.Version2),
		otlpExp("e2e-exp-otlp", otCum, otlp.Cumulative),
		otlpExp("e2e-exp-otlp-delta", otDelta, otlp.Delta),
	}
	const rounds = 3
	var intervals []map[string]*exphist.Snapshot
	for round := 1; round <= rounds; round++ {
		w.record(round)
		for _, e := range exps {
			if err := e.Export(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		intervals = append(intervals, w.nextInterval())
	}
	cum := w.cumulative()
	// Prometheus, by remote write, from both paths: wait for the last
	// cumulative sample of every row of the positive view, then check it.
	for _, job := range []string{"e2e-exp-msgpack", "e2e-exp-otlp"} {
		for _, route := range []string{"/wide", "/narrow", "/zeros"} {
			key := "e2e/exp_latency{route=" + route + "}"
			sel := fmt.Sprintf(`{job=%q,route=%q}`, job, route)
			n := strconv.FormatUint(cum[key].Count, 10)
			deadline := time.Now().Add(30 * time.Second)
			for { // the earlier exports' samples arrive first
				s := prom.WaitQuery(t, "histogram_count("+sel+")", 1, 30*time.Second)
				if len(s) == 1 && s[0].Value == n {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: histogram_count %v after 30 s; want %s", sel, s, n)
				}
				time.Sleep(200 * time.Millisecond) // polling Prometheus: no event to wait for
			}
			model := new(exphist.Snapshot)
			cum[key].CopyTo(model) // Set lowers its argument
			var sent promnative.Histogram
			if err := sent.Set(model); err != nil { // lowered to schema 8, as the Collector does
				t.Fatal(err)
			}
			if route == "/narrow" && sent.Schema != 8 {
				t.Errorf("%s: schema %d; want the Collector's cap, 8 (the row's scale is above)", key, sent.Schema)
			}
			if route != "/zeros" {
				prom.CheckNative(t, sel, w.vals[key], &sent, 30*time.Second)
				continue
			}
			// The zero bucket: stored at the Collector's threshold.
			hs := prom.WaitHistograms(t, sel, 1, 30*time.Second)
			var zero string
			for _, b := range hs[0].Buckets {
				if b.Lower == "-1e-128" && b.Upper == "1e-128" {
					zero = b.Count
				}
			}
			if want := strconv.FormatUint(model.ZeroCount, 10); zero != want || hs[0].Count != n {
				t.Errorf("%s: zero bucket [-1e-128, 1e-128] holds %q, count %s; want %s, %s (buckets %+v)", sel, zero, hs[0].Count, want, n, hs[0].Buckets)
			}
		}
	}
	// Both paths stored the same native histograms.
	for _, route := range []string{"/wide", "/narrow", "/zeros"} {
		a := prom.WaitHistograms(t, fmt.Sprintf(`{job="e2e-exp-msgpack",route=%q}`, route), 1, 30*time.Second)
		b := prom.WaitHistograms(t, fmt.Sprintf(`{job="e2e-exp-otlp",route=%q}`, route), 1, 30*time.Second)
		if a[0].Count != b[0].Count || a[0].Sum != b[0].Sum || !slices.Equal(a[0].Buckets, b[0].Buckets) {
			t.Errorf("%s: stored from msgpack %+v; from OTLP %+v", route, a[0], b[0])
		}
	}
	// The signed view carries no sum (a negative value was recorded): the
	// Collector's translation refuses it, from either path.
	if hs, err := prom.QueryHistograms(`{__name__=~"e2e_exp_signed.*"}`); err != nil || len(hs) != 0 {
		t.Errorf("the signed view in Prometheus: %d histograms (%v); want none (no sum: the Collector refuses it)", len(hs), err)
	}
	col.stop(t)

	// The file exporter: the same points from both paths, equal to the
	// model's.
	zc, oc := readFile(t, file("zs_cumulative")), readFile(t, file("otlp_cumulative"))
	zd, od := readFile(t, file("zs_delta")), readFile(t, file("otlp_delta"))
	if len(zc) != rounds || len(oc) != rounds || len(zd) != rounds || len(od) != rounds {
		t.Fatalf("batches: msgpack %d cumulative, %d delta; OTLP %d, %d; want %d each", len(zc), len(zd), len(oc), len(od), rounds)
	}
	compare := func(what string, zs, ot pmetric.Metrics, model map[string]*exphist.Snapshot) {
		t.Helper()
		a, b := expPoints(zs), expPoints(ot)
		if len(a) != len(model) || len(b) != len(model) {
			t.Errorf("%s: %d points by msgpack, %d by OTLP; want %d", what, len(a), len(b), len(model))
		}
		for k, s := range model {
			want := modelString(s)
			if a[k] != want || b[k] != want {
				t.Errorf("%s %s:\nmsgpack %s\nOTLP    %s\nmodel   %s", what, k, a[k], b[k], want)
			}
		}
	}
	compare("cumulative, last export", zc[rounds-1], oc[rounds-1], cum)
	for i := range rounds {
		compare(fmt.Sprintf("delta, export %d", i+1), zd[i], od[i], intervals[i])
	}
}
