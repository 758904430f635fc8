package prometheus

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/promnative"
	"github.com/zerostat/zerostat/internal/testbackend"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// lognormal returns n values around median m (seeded).
func lognormal(seed uint64, n int, m float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	for i := range out {
		out[i] = m * math.Exp(r.NormFloat64()*1.5)
	}
	return out
}

// A real Prometheus 2.42 with --enable-feature=native-histograms asks for
// the protobuf exposition, is served it, and stores an exponential view
// as a native histogram: histogram_count, histogram_sum and
// histogram_quantile(0.5|0.9|0.99) give what the recorded values give,
// and its stored buckets are the ones sent. The other kinds, sent in the
// same protobuf exposition, are stored with their values.
func TestBackendPrometheusNativeHistograms(t *testing.T) {
	fixtureSeq++
	p := fmt.Sprintf("nh%d", fixtureSeq)
	lat := stats.Float64(p+"/latency", "Latency", stats.UnitMilliseconds)
	register(t,
		&view.View{Name: p + "/latency", Measure: lat, Aggregation: view.ExponentialDistribution(160, 20), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/requests", Measure: lat, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/classic", Measure: lat, Aggregation: view.DistributionUpperInclusive(1, 10, 100), TagKeys: []tag.Key{keyRoute}},
	)
	work := map[string][]float64{
		"/a": lognormal(1, 2000, 20),               // scale 3 or so
		"/b": {1.5, 1.5001, 1.5002, 1.6, 1.7, 1.8}, // scale 20: sent at schema 8
		"/c": {-3, -0.5, 0, 0, 2, 8, 8, 1e6},       // zeros and negatives: no quantiles
	}
	for r, vals := range work {
		ctx := ctxWith(t, tag.Upsert(keyRoute, r))
		for _, v := range vals {
			stats.Record(ctx, lat.M(v))
		}
	}
	var seen seenFormats
	h := NewHandler(Options{Namespace: "itest"})
	srv := httptest.NewServer(seen.wrap(h))
	defer srv.Close()
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{NativeHistograms: true,
		Jobs: []testbackend.ScrapeJob{{Name: "native", Target: srv.Listener.Addr().String()}}})

	name := "itest_" + p
	// What the handler sends for each route (the values are recorded:
	// every scrape sends the same).
	sent := map[string]*promnative.Histogram{}
	fam := familyNamed(t, h.AppendFormat(nil, FormatProtobuf), name+"_latency_milliseconds")
	for _, mf := range fieldsOf(fam, 4) {
		m := mustFields(t, mf.b)
		l, _ := one(mustFields(t, fieldsOf(m, 1)[0].b), 2)
		hf, _ := one(m, 7)
		nh, _ := nativeOf(t, mustFields(t, hf.b))
		sent[string(l.b)] = &nh
	}
	if len(sent) != 3 || sent["/b"].Schema != 8 {
		t.Fatalf("sent %v", sent)
	}
	for r, nh := range sent {
		t.Logf("%s: schema %d, %d positive spans, %d buckets", r, nh.Schema, len(nh.PositiveSpans), len(nh.PositiveDeltas))
	}
	prom.WaitQuery(t, "histogram_count("+name+"_latency_milliseconds)", len(work), 30*time.Second)
	for r, vals := range work {
		t.Run(r, func(t *testing.T) {
			sel := fmt.Sprintf(`%s_latency_milliseconds{job="native",route=%q}`, name, r)
			prom.CheckNative(t, sel, vals, sent[r], 10*time.Second)
		})
	}
	// The other kinds in the same protobuf scrapes.
	for _, s := range prom.WaitQuery(t, name+"_requests_total", len(work), 10*time.Second) {
		if want := strconv.Itoa(len(work[s.Metric["route"]])); s.Value != want {
			t.Errorf("requests_total %v = %s; want %s", s.Metric, s.Value, want)
		}
	}
	for _, s := range prom.WaitQuery(t, name+`_classic_milliseconds_bucket{route="/c"}`, 4, 10*time.Second) {
		want := map[float64]string{1: "4", 10: "7", 100: "7", math.Inf(1): "8"}
		le, err := strconv.ParseFloat(s.Metric["le"], 64)
		if err != nil || s.Value != want[le] {
			t.Errorf("classic bucket %v = %s; want %s", s.Metric, s.Value, want[le])
		}
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if seen.types[ContentTypeProtobuf+" gzip"] == 0 || len(seen.types) != 1 {
		t.Errorf("served %v (Accept %q)", seen.types, seen.accepts)
	}
	t.Logf("Prometheus asked: %q", seen.accepts[0])
}
