package remotewrite

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
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

// sentNative decodes what w pushes for the series of family name: route →
// native histogram.
func sentNative(t *testing.T, w *Writer, name string) map[string]*promnative.Histogram {
	t.Helper()
	ss, err := decodeWriteRequest(w.AppendWriteRequest(nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*promnative.Histogram{}
	for _, s := range only(ss, name) {
		for _, l := range s.labels {
			if l.name == "route" && s.hist != nil {
				out[l.value] = s.hist
			}
		}
	}
	return out
}

// Remote write to a real Prometheus 2.42 with
// --enable-feature=native-histograms: it stores an exponential view's
// series as native histograms, and histogram_count, histogram_sum and
// histogram_quantile(0.5|0.9|0.99) give what the recorded values give,
// its stored buckets those sent; after more records (and a lower scale)
// a second push's cumulative histogram replaces the first.
func TestBackendRemoteWriteNativeHistograms(t *testing.T) {
	p := fmt.Sprintf("rwnh%d", seq.Add(1))
	m := stats.Float64(p+"/latency", "Latency", stats.UnitSeconds)
	register(t, &view.View{Name: p + "/latency", Measure: m, Aggregation: view.ExponentialDistribution(160, 20), TagKeys: []tag.Key{keyRoute}})
	work := map[string][]float64{
		"/a": lognormal(7, 3000, 0.2),
		"/b": {1.5, 1.5001, 1.5002, 1.6, 1.7, 1.8}, // scale 20: schema 8
		"/c": {-3, -0.5, 0, 0, 2, 8, 8, 1e6},       // zeros and negatives: no quantiles
	}
	record := func(r string, vals []float64) {
		ctx := ctxWith(t, tag.Upsert(keyRoute, r))
		for _, v := range vals {
			stats.Record(ctx, m.M(v))
		}
	}
	for r, vals := range work {
		record(r, vals)
	}
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{RemoteWriteReceiver: true, NativeHistograms: true})
	w := newWriter(t, Options{URL: prom.URL + "/api/v1/write", ConstLabels: map[string]string{"job": "zerostat"}})
	name := p + "_latency_seconds"
	check := func(t *testing.T) {
		sent := sentNative(t, w, name)
		if len(sent) != len(work) {
			t.Fatalf("sent %v", sent)
		}
		if err := w.Push(context.Background()); err != nil {
			t.Fatal(err)
		}
		for r, vals := range work {
			t.Run(r, func(t *testing.T) {
				sel := fmt.Sprintf(`%s{job="zerostat",route=%q}`, name, r)
				prom.CheckNative(t, sel, vals, sent[r], 10*time.Second)
			})
		}
	}
	t.Run("first", check)
	// Wider values lower /b's scale; the second push is cumulative.
	more := []float64{1e-3, 1e3}
	record("/b", more)
	work["/b"] = append(work["/b"], more...)
	t.Run("second", check)
	if st := w.Stats(); st.DroppedPoints != 0 {
		t.Errorf("stats %+v", st)
	}
}

// VictoriaMetrics 1.79 has no native histograms: it skips the
// "histograms" field (a field it does not know), storing nothing for an
// exponential view, and stores the other series of the same request.
func TestBackendRemoteWriteNativeVictoriaMetrics(t *testing.T) {
	p := fmt.Sprintf("rwnhvm%d", seq.Add(1))
	m := stats.Float64(p+"/latency", "", stats.UnitSeconds)
	register(t,
		&view.View{Name: p + "/latency", Measure: m, Aggregation: view.ExponentialDistribution(0, 0)},
		&view.View{Name: p + "/requests", Measure: m, Aggregation: view.Count()},
	)
	stats.Record(context.Background(), m.M(0.5), m.M(2))
	vm := testbackend.StartVictoriaMetrics(t)
	w := newWriter(t, Options{URL: vm.URL + "/api/v1/write"})
	if err := w.Push(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := vm.WaitExport(t, fmt.Sprintf(`{__name__=~"%s_.+"}`, p), 1, 10*time.Second)
	if len(got) != 1 || got[0].Metric["__name__"] != p+"_requests_total" || len(got[0].Values) != 1 || got[0].Values[0] != 2 {
		t.Errorf("VictoriaMetrics stores %+v; want only %s_requests_total 2", got, p)
	}
	if st := w.Stats(); st.DroppedPoints != 0 {
		t.Errorf("stats %+v", st)
	}
}

// A Prometheus 2.42 without native histograms refuses a request that
// carries one (500 "native histograms are disabled"), losing every
// series in it; with NoNativeHistograms the exponential view arrives as
// the text exposition has it ("+Inf" bucket, _sum, _count) with the
// other series.
func TestBackendRemoteWriteNoNativeHistograms(t *testing.T) {
	p := fmt.Sprintf("rwnonh%d", seq.Add(1))
	m := stats.Float64(p+"/latency", "", stats.UnitSeconds)
	register(t,
		&view.View{Name: p + "/latency", Measure: m, Aggregation: view.ExponentialDistribution(0, 0)},
		&view.View{Name: p + "/requests", Measure: m, Aggregation: view.Count()},
	)
	stats.Record(context.Background(), m.M(0.5), m.M(2))
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{RemoteWriteReceiver: true})
	// Refused: a short interval bounds the retries of the 500.
	w := newWriter(t, Options{URL: prom.URL + "/api/v1/write", Interval: time.Second})
	if err := w.Push(context.Background()); err == nil || !strings.Contains(err.Error(), "native histograms are disabled") {
		t.Errorf("push carrying a native histogram: %v; want Prometheus's 500", err)
	}
	if got, err := prom.Query(p + "_requests_total"); err != nil || len(got) != 0 {
		t.Errorf("the counter of the refused request: %v (%v); want nothing stored", got, err)
	}
	w = newWriter(t, Options{URL: prom.URL + "/api/v1/write", NoNativeHistograms: true})
	if err := w.Push(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		p + "_latency_seconds_bucket": "2", p + "_latency_seconds_sum": "2.5", p + "_latency_seconds_count": "2",
		p + "_requests_total": "2",
	}
	got := prom.WaitQuery(t, fmt.Sprintf(`{__name__=~"%s_.+"}`, p), len(want), 10*time.Second)
	for _, s := range got {
		if n := s.Metric["__name__"]; s.Value != want[n] || n == p+"_latency_seconds_bucket" && s.Metric["le"] != "+Inf" {
			t.Errorf("%v = %s; want %s", s.Metric, s.Value, want[n])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d series stored; want %d", len(got), len(want))
	}
}
