package otlpcheck

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// The benchmark snapshot: 20 views × 500 series = 10,000 data points, the
// shape of benchmarks/encode's: half of the views distributions with 16
// bounds, the rest count, sum and last value; 3 tag keys per view, values
// from a vocabulary of 60 strings.
const (
	benchViews     = 20
	seriesPerView  = 500
	benchSeries    = benchViews * seriesPerView
	benchPrefix    = "bench/"
	benchVocabSize = 60
)

var benchFix struct {
	once  sync.Once
	views []*view.View
	err   error
}

// benchViewsRegistered registers and fills the benchmark views once per
// process.
func benchViewsRegistered(tb testing.TB) []*view.View {
	tb.Helper()
	benchFix.once.Do(func() { benchFix.views, benchFix.err = registerBench() })
	if benchFix.err != nil {
		tb.Fatal(benchFix.err)
	}
	return benchFix.views
}

func registerBench() ([]*view.View, error) {
	r := rand.New(rand.NewPCG(20240229, 5))
	vocab := make([]string, benchVocabSize)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("%s-%02d", []string{"GET", "/api/v1/users", "us-east-1", "web", "gold", "postgres"}[i%6], i)
	}
	keyNames := []string{"method", "route", "status", "region", "host", "tier", "peer", "client"}
	keys := make([]tag.Key, len(keyNames))
	for i, k := range keyNames {
		keys[i] = tag.MustNewKey(k)
	}
	latency := []float64{0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000}
	var vs []*view.View
	for vi := range benchViews {
		var agg *view.Aggregation
		switch {
		case vi%2 == 0:
			agg = view.Distribution(latency...)
		case vi%6 == 1:
			agg = view.Count()
		case vi%6 == 3:
			agg = view.Sum()
		default:
			agg = view.LastValue()
		}
		m := stats.Float64(fmt.Sprintf("%smeasure%02d", benchPrefix, vi), "A measure of the benchmark", "ms")
		vkeys := []tag.Key{keys[vi%8], keys[(vi+3)%8], keys[(vi+5)%8]}
		v := &view.View{Name: fmt.Sprintf("%sview%02d/%s", benchPrefix, vi, strings.ToLower(agg.Type.String())),
			Description: "A view of the benchmark", Measure: m, Aggregation: agg, TagKeys: vkeys}
		if err := view.Register(v); err != nil {
			return nil, err
		}
		vs = append(vs, v)
		seen := map[[3]int]bool{}
		for len(seen) < seriesPerView {
			c := [3]int{r.IntN(len(vocab)), r.IntN(len(vocab)), r.IntN(len(vocab))}
			if seen[c] {
				continue
			}
			seen[c] = true
			ctx, err := tag.New(context.Background(),
				tag.Upsert(vkeys[0], vocab[c[0]]), tag.Upsert(vkeys[1], vocab[c[1]]), tag.Upsert(vkeys[2], vocab[c[2]]))
			if err != nil {
				return nil, err
			}
			for range 1 + r.IntN(8) {
				x := math.Round(math.Exp(math.Log(0.2)+r.Float64()*math.Log(60000/0.2))*1000) / 1000
				stats.Record(ctx, m.M(x))
			}
		}
	}
	return vs, nil
}

// benchReference builds the official message for the benchmark views from
// rows, with the timestamps of an encoding by our exporter.
func benchReference(vs []*view.View, rows snapshot, ts map[string]times) *colmetricspb.ExportMetricsServiceRequest {
	return referenceRequest(resource, referenceMetrics(vs, rows, nil, ts))
}

// TestBenchSnapshot checks the benchmark's snapshot the way
// TestMatchesOfficial does: our encoding decodes to the reference
// conversion (and is protobuf-go's bytes).
//
// The views are registered for the test and unregistered after it, so the
// other tests do not encode them too.
func TestBenchSnapshot(t *testing.T) {
	if raceEnabled {
		t.Skip("slow under the race detector, and single-goroutine")
	}
	vs, err := registerBench()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
	enc, err := otlp.NewEncoder(otlp.Cumulative, resource)
	if err != nil {
		t.Fatal(err)
	}
	raw := enc.Encode(time.Now())
	var req colmetricspb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		t.Fatal(err)
	}
	got := keepMetrics(&req, benchPrefix)
	ts := map[string]times{}
	points := 0
	for _, m := range got.ResourceMetrics[0].ScopeMetrics[0].Metrics {
		ts[m.Name], _ = pointTimes(m)
		sortPoints(m)
		points += numPoints(m)
	}
	if points != benchSeries {
		t.Fatalf("%d data points; want %d", points, benchSeries)
	}
	rows, err := retrieve(vs)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(got, keepMetrics(benchReference(vs, rows, ts), benchPrefix)); d != "" {
		t.Fatalf("the snapshot differs from the reference conversion:\n%.4000s", d)
	}
	canon, err := proto.Marshal(&req)
	if err != nil {
		t.Fatal(err)
	}
	if string(canon) != string(raw) {
		t.Errorf("our %d bytes differ from protobuf-go's %d", len(raw), len(canon))
	}
	t.Logf("%d bytes for %d data points", len(raw), points)
}

func numPoints(m *metricspb.Metric) int {
	switch d := m.Data.(type) {
	case *metricspb.Metric_Sum:
		return len(d.Sum.DataPoints)
	case *metricspb.Metric_Gauge:
		return len(d.Gauge.DataPoints)
	case *metricspb.Metric_Histogram:
		return len(d.Histogram.DataPoints)
	}
	return 0
}

// BenchmarkEncode writes the 10,000-series snapshot as an OTLP request;
// benchstat -col /impl gives one column per implementation:
//
//   - zerostat: otlp.Encoder.Encode, snapshot (an atomic read of every
//     series) and encoding, into the encoder's reused buffer;
//   - official: proto.MarshalOptions{}.MarshalAppend of the request built
//     beforehand with the official types, into a reused buffer;
//   - official-build: building that request from rows read beforehand,
//     then MarshalAppend;
//   - official-snapshot: view.RetrieveData of every view, building the
//     request, MarshalAppend: the official path end to end, the same work
//     as zerostat's.
func BenchmarkEncode(b *testing.B) {
	vs := benchViewsRegistered(b)
	enc, err := otlp.NewEncoder(otlp.Cumulative, resource)
	if err != nil {
		b.Fatal(err)
	}
	var req colmetricspb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(enc.Encode(time.Now()), &req); err != nil {
		b.Fatal(err)
	}
	ts := map[string]times{}
	for _, m := range req.ResourceMetrics[0].ScopeMetrics[0].Metrics {
		ts[m.Name], _ = pointTimes(m)
	}
	rows, err := retrieve(vs)
	if err != nil {
		b.Fatal(err)
	}
	prebuilt := benchReference(vs, rows, ts)
	var buf []byte
	marshal := func(m proto.Message) []byte {
		var err error
		if buf, err = (proto.MarshalOptions{}).MarshalAppend(buf[:0], m); err != nil {
			b.Fatal(err)
		}
		return buf
	}
	impls := []struct {
		name string
		run  func() []byte
	}{
		{"zerostat", func() []byte { return enc.Encode(time.Now()) }},
		{"official", func() []byte { return marshal(prebuilt) }},
		{"official-build", func() []byte { return marshal(benchReference(vs, rows, ts)) }},
		{"official-snapshot", func() []byte {
			rows, err := retrieve(vs)
			if err != nil {
				b.Fatal(err)
			}
			return marshal(benchReference(vs, rows, ts))
		}},
	}
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			out := impl.run()
			n := len(out)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				out = impl.run()
			}
			b.StopTimer()
			if len(out) != n {
				b.Fatalf("%d bytes; the first run wrote %d", len(out), n)
			}
			b.ReportMetric(float64(n), "payload-bytes")
		})
	}
}
