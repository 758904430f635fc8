package promcheck

import (
	"context"
	"errors"
	"io"
	"math"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"

	zsprom "github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// Exemplars in our OpenMetrics output parse with Prometheus's own
// OpenMetrics parser, with the trace and span IDs as labels, the value and
// the record's time (milliseconds); negative and non-finite values too.
func TestExemplarsParseWithPrometheus(t *testing.T) {
	m := stats.Float64("pcex/latency", "", "ms")
	v := &view.View{Name: "pcex/latency", Measure: m, Aggregation: view.Distribution(1, 10)}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	sc := stats.SpanContext{TraceID: [16]byte{0xde, 0xad, 15: 0x01}, SpanID: [8]byte{0xbe, 0xef, 7: 0x02}}
	before := time.Now()
	for _, x := range []float64{0.5, 5, math.NaN(), -2} {
		att := map[string]interface{}{stats.AttachmentKeySpanContext: sc}
		if x == 5 {
			att = map[string]interface{}{"k": "v"} // no span: no labels
		}
		if err := stats.RecordWithOptions(context.Background(), stats.WithMeasurements(m.M(x)), stats.WithAttachments(att)); err != nil {
			t.Fatal(err)
		}
	}
	after := time.Now()
	out := zsprom.NewHandler(zsprom.Options{}).AppendFormat(nil, zsprom.FormatOpenMetrics)
	p := textparse.NewOpenMetricsParser(out, labels.NewSymbolTable())
	got := map[string]exemplar.Exemplar{}
	for {
		e, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("parse: %v\n%s", err, out)
		}
		if e != textparse.EntrySeries {
			continue
		}
		var ls labels.Labels
		p.Labels(&ls)
		if ls.Get("__name__") != "pcex_latency_milliseconds_bucket" {
			continue
		}
		var ex exemplar.Exemplar
		if p.Exemplar(&ex) {
			got[ls.Get("le")] = ex
		}
	}
	// Buckets: [-Inf,1) holds 0.5 then -2 (the latest), [1,10) 5, the
	// last NaN.
	want := map[string]struct {
		v     float64
		trace string
	}{"1.0": {-2, "dead0000000000000000000000000001"}, "10.0": {5, ""}, "+Inf": {math.NaN(), "dead0000000000000000000000000001"}}
	if len(got) != len(want) {
		t.Fatalf("exemplars on %d buckets; want %d\n%s", len(got), len(want), out)
	}
	for le, w := range want {
		ex := got[le]
		if !(ex.Value == w.v || math.IsNaN(w.v) && math.IsNaN(ex.Value)) {
			t.Errorf("le=%s: exemplar value %v; want %v", le, ex.Value, w.v)
		}
		if ex.Labels.Get("trace_id") != w.trace || (w.trace != "" && ex.Labels.Get("span_id") != "beef000000000002") {
			t.Errorf("le=%s: exemplar labels %v; want trace_id %q", le, ex.Labels, w.trace)
		}
		if !ex.HasTs || ex.Ts < before.UnixMilli()-1 || ex.Ts > after.UnixMilli()+1 {
			t.Errorf("le=%s: exemplar time %d (%v); want within [%d, %d]", le, ex.Ts, ex.HasTs, before.UnixMilli(), after.UnixMilli())
		}
	}
}
