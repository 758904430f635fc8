package e2e

import (
	"context"
	"encoding/hex"
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/internal/testbackend"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestCollectorExemplars (issue 47): exemplars sent by zerostat's OTLP
// exporter reach a real Prometheus (2.42, --enable-feature=exemplar-storage)
// through a real Collector's otlp receiver and prometheusremotewrite
// exporter: a histogram's, each on the bucket series ("le") it was
// recorded into, and a counter's (the reservoir a bound handle's
// RecordExemplar fills: the otel MeterProvider's counters), on its
// "_total" series; each with the recorded span's trace_id and span_id
// (none for an exemplar recorded without a span), the recorded value and
// its time to the millisecond, as zerostat keeps them. A later record
// into a bucket adds its exemplar there.
func TestCollectorExemplars(t *testing.T) {
	if was := runtime.GOMAXPROCS(0); was < 2 {
		runtime.GOMAXPROCS(2) // a counter's reservoir of 2 slots at least: both offers below kept
		t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	}
	bin := collectorBinary(t)
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{RemoteWriteReceiver: true, ExemplarStorage: true})
	otlpAddr := freeAddr(t)
	cfg := fmt.Sprintf(`
receivers:
  otlp: {protocols: {http: {endpoint: %q}}}
exporters:
  prometheusremotewrite:
    endpoint: %q
    target_info: {enabled: false}
service:
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    metrics/otlp: {receivers: [otlp], exporters: [prometheusremotewrite]}
`, otlpAddr, prom.URL+"/api/v1/write")
	startCollector(t, bin, cfg, otlpAddr)

	route := tag.MustNewKey("route")
	lat := stats.Float64("e2e/ex_latency", "", stats.UnitMilliseconds)
	sent := stats.Int64("e2e/ex_sent", "", stats.UnitBytes)
	views := []*view.View{
		{Name: "e2e/ex_latency", Measure: lat, Aggregation: view.DistributionUpperInclusive(10, 100), TagKeys: []tag.Key{route}},
		{Name: "e2e/ex_sent", Measure: sent, Aggregation: view.Sum(), TagKeys: []tag.Key{route}},
	}
	if err := view.Register(views...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(views...) })
	ctx, err := tag.New(context.Background(), tag.Upsert(route, "/a"))
	if err != nil {
		t.Fatal(err)
	}
	span := func(b byte) stats.SpanContext {
		return stats.SpanContext{TraceID: [16]byte{0x4b, 0xf9, 0x2f, 0x35, 14: b, 15: 0x01}, SpanID: [8]byte{0x00, 0xf0, 0x67, 0xaa, 7: b}}
	}
	recordEx := func(v float64, att map[string]interface{}) {
		t.Helper()
		if err := stats.RecordWithOptions(ctx, stats.WithMeasurements(lat.M(v)), stats.WithAttachments(att)); err != nil {
			t.Fatal(err)
		}
	}
	inSpan := func(sc stats.SpanContext) map[string]interface{} {
		return map[string]interface{}{stats.AttachmentKeySpanContext: sc}
	}
	start := time.Now()
	recordEx(7, inSpan(span(0xa)))                     // le=10
	recordEx(50, inSpan(span(0xb)))                    // le=100
	recordEx(500, map[string]interface{}{"user": "u"}) // +Inf, without a span: no labels
	stats.Record(ctx, lat.M(20))                       // le=100, no exemplar: 50 stays
	h := sent.Bind(tag.FromContext(ctx))
	h.RecordExemplar(2, span(0xc))
	time.Sleep(2 * time.Millisecond) // Prometheus stores one exemplar per millisecond and series
	h.RecordExemplar(3, span(0xd))

	exp, err := otlp.New(otlp.Options{Endpoint: "http://" + otlpAddr, Timeout: 5 * time.Second, Temporality: otlp.Cumulative,
		Resource: exporter.Resource{ServiceName: "e2e-ex-otlp"}})
	if err != nil {
		t.Fatal(err)
	}

	type stored = testbackend.StoredExemplar
	ids := func(sc stats.SpanContext) map[string]string {
		return map[string]string{"trace_id": hex.EncodeToString(sc.TraceID[:]), "span_id": hex.EncodeToString(sc.SpanID[:])}
	}
	// bucket is what Prometheus must store for bucket i's exemplar:
	// zerostat's (view.RetrieveData), its time in milliseconds.
	bucket := func(i int, labels map[string]string) stored {
		t.Helper()
		rows, err := view.RetrieveData("e2e/ex_latency")
		if err != nil || len(rows) != 1 {
			t.Fatalf("RetrieveData: %v, %v", rows, err)
		}
		e := rows[0].Data.(*view.DistributionData).ExemplarsPerBucket[i]
		return stored{Labels: labels, Value: strconv.FormatFloat(e.Value, 'f', -1, 64), Ms: e.Timestamp.UnixMilli()}
	}
	// byLe reads Prometheus's answer: le (as the Collector spells it) →
	// exemplars, checking each series' name, job and route.
	byLe := func(got []testbackend.ExemplarSeries, name string) map[string][]stored {
		t.Helper()
		out := map[string][]stored{}
		for _, s := range got {
			if l := s.SeriesLabels; l["__name__"] != name || l["job"] != "e2e-ex-otlp" || l["route"] != "/a" {
				t.Errorf("series %v; want %s of job e2e-ex-otlp, route /a", l, name)
			}
			for _, e := range s.Exemplars {
				ms, err := e.Millis()
				if err != nil {
					t.Error(err)
				}
				l := e.Labels
				if l == nil {
					l = map[string]string{}
				}
				out[s.SeriesLabels["le"]] = append(out[s.SeriesLabels["le"]], stored{Labels: l, Value: e.Value, Ms: ms})
			}
		}
		return out
	}
	count := func(n int) func([]testbackend.ExemplarSeries) bool {
		return func(got []testbackend.ExemplarSeries) bool {
			k := 0
			for _, s := range got {
				k += len(s.Exemplars)
			}
			return k >= n
		}
	}
	hist, counter := "e2e_ex_latency_milliseconds_bucket", "e2e_ex_sent_bytes_total"
	wants := map[string][]stored{
		"10":   {bucket(0, ids(span(0xa)))},
		"100":  {bucket(1, ids(span(0xb)))},
		"+Inf": {bucket(2, map[string]string{})},
	}
	if wants["10"][0].Value != "7" || wants["100"][0].Value != "50" || wants["+Inf"][0].Value != "500" {
		t.Fatalf("zerostat keeps %+v", wants)
	}

	if err := exp.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := byLe(prom.WaitExemplars(t, hist+`{job="e2e-ex-otlp"}`, start, 30*time.Second, count(3)), hist); !reflect.DeepEqual(g, wants) {
		t.Errorf("the histogram: Prometheus stores\n%+v\nwant\n%+v", g, wants)
	}
	// The counter's: both offers, as the OTLP Sum point carries them
	// (zerostat's own encoding of the point, read here, would end the
	// reservoir's cycle: the values and spans are known, the times are
	// the records').
	g := byLe(prom.WaitExemplars(t, counter+`{job="e2e-ex-otlp"}`, start, 30*time.Second, count(2)), counter)[""]
	sort.Slice(g, func(i, j int) bool { return g[i].Ms < g[j].Ms })
	if len(g) != 2 || g[0].Value != "2" || !reflect.DeepEqual(g[0].Labels, ids(span(0xc))) || g[1].Value != "3" || !reflect.DeepEqual(g[1].Labels, ids(span(0xd))) ||
		g[0].Ms < start.UnixMilli() || g[1].Ms > time.Now().UnixMilli() {
		t.Errorf("the counter: Prometheus stores %+v; want 2 and 3 with their spans, recorded since %d", g, start.UnixMilli())
	}

	// A later record into le=10 in a span: Prometheus adds it there.
	recordEx(8, inSpan(span(0xe)))
	wants["10"] = append(wants["10"], bucket(0, ids(span(0xe))))
	if err := exp.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := byLe(prom.WaitExemplars(t, hist+`{job="e2e-ex-otlp"}`, start, 30*time.Second, count(4)), hist); !reflect.DeepEqual(g, wants) {
		t.Errorf("after a record into le=10: Prometheus stores\n%+v\nwant\n%+v", g, wants)
	}
}
