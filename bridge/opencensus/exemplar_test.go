package opencensus_test

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"go.opencensus.io/metric/metricdata"
	"go.opencensus.io/trace"

	"github.com/zerostat/zerostat/bridge/opencensus"
	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// TestOpenCensusSpanContextExemplar (issue 47, item 1): a value recorded
// with OpenCensus's own trace.SpanContext attached (what ocgrpc and
// OpenCensus users attach, through RecordWithOptions, which compiles
// unchanged) keeps its trace and span ids: the OpenMetrics exemplar has
// them as trace_id and span_id, and so does the OTLP exemplar; and
// OpenCensus's exporters through the bridge still see the attachment as
// OpenCensus's type. Before, the exemplar had {} labels and no ids.
func TestOpenCensusSpanContextExemplar(t *testing.T) {
	lat := stats.Float64("bridge/oc_exemplar", "", stats.UnitMilliseconds)
	v := &view.View{Name: "bridge_oc_exemplar", Measure: lat, Aggregation: view.Distribution(10, 100)}
	register(t, v)
	sc := trace.SpanContext{
		TraceID:      trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:       trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceOptions: 1,
	}
	if err := stats.RecordWithOptions(context.Background(), stats.WithMeasurements(lat.M(42)),
		stats.WithAttachments(metricdata.Attachments{metricdata.AttachmentKeySpanContext: sc})); err != nil {
		t.Fatal(err)
	}
	traceHex, spanHex := hex.EncodeToString(sc.TraceID[:]), hex.EncodeToString(sc.SpanID[:])

	h := prometheus.NewHandler(prometheus.Options{})
	om := string(h.AppendFormat(nil, prometheus.FormatOpenMetrics))
	want := `bridge_oc_exemplar_milliseconds_bucket{le="100.0"} 1 # {trace_id="` + traceHex + `",span_id="` + spanHex + `"} 42.0`
	if !strings.Contains(om, want) {
		t.Errorf("OpenMetrics lacks %q:\n%s", want, om)
	}

	enc, err := otlp.NewEncoder(otlp.Cumulative, exporter.Resource{})
	if err != nil {
		t.Fatal(err)
	}
	body := enc.Encode(time.Now())
	// The exemplar's ids, as OTLP writes them (span_id = 4, trace_id = 5:
	// a length byte, then the bytes).
	if !strings.Contains(string(body), "\x22\x08"+string(sc.SpanID[:])+"\x2a\x10"+string(sc.TraceID[:])) {
		t.Error("the OTLP request does not carry the exemplar's span and trace ids")
	}

	// OpenCensus's exporters, through the bridge, see OpenCensus's type.
	for _, m := range opencensus.NewProducer(opencensus.Options{}).Read() {
		if m.Descriptor.Name != v.Name {
			continue
		}
		d := m.TimeSeries[0].Points[0].Value.(*metricdata.Distribution)
		ex := d.Buckets[1].Exemplar
		if ex == nil {
			t.Fatal("no exemplar in bucket [10, 100) through the bridge")
		}
		if got, ok := ex.Attachments[metricdata.AttachmentKeySpanContext].(trace.SpanContext); !ok || got != sc {
			t.Errorf("the bridge's exemplar attachment %#v; want OpenCensus's SpanContext", ex.Attachments[metricdata.AttachmentKeySpanContext])
		}
	}
}
