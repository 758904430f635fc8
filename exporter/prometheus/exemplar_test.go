package prometheus

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// OpenMetrics carries each bucket's latest exemplar, with the trace and
// span IDs of its SpanContext attachment; the text format has none.
func TestExemplarsOpenMetrics(t *testing.T) {
	m := stats.Float64("promex/latency", "", stats.UnitMilliseconds)
	register(t, &view.View{Name: "promex_latency", Measure: m, Aggregation: view.DistributionUpperInclusive(10, 100)})
	sc := stats.SpanContext{TraceID: [16]byte{0x4b, 0xf9, 0x2f, 0x35, 15: 0x01}, SpanID: [8]byte{0x00, 0xf0, 0x67, 0xaa, 7: 0xba}}
	before := time.Now()
	if err := stats.RecordWithOptions(context.Background(), stats.WithMeasurements(m.M(7)),
		stats.WithAttachments(map[string]interface{}{stats.AttachmentKeySpanContext: sc})); err != nil {
		t.Fatal(err)
	}
	if err := stats.RecordWithOptions(context.Background(), stats.WithMeasurements(m.M(500)),
		stats.WithAttachments(map[string]interface{}{"user": "u"})); err != nil {
		t.Fatal(err)
	}
	stats.Record(context.Background(), m.M(50)) // no exemplar
	after := time.Now()
	h := NewHandler(Options{})
	om := linesWith(h.AppendFormat(nil, FormatOpenMetrics), "promex_latency_milliseconds_bucket")
	lines := strings.Split(strings.TrimSpace(om), "\n")
	if len(lines) != 3 {
		t.Fatalf("bucket lines:\n%s", om)
	}
	check := func(line, wantPrefix string, wantValue float64) {
		t.Helper()
		head, ts, ok := strings.Cut(strings.TrimPrefix(line, wantPrefix), " ")
		if !strings.HasPrefix(line, wantPrefix) || !ok {
			t.Fatalf("line %q; want prefix %q", line, wantPrefix)
		}
		if v, err := strconv.ParseFloat(head, 64); err != nil || v != wantValue {
			t.Errorf("line %q: exemplar value %q; want %v", line, head, wantValue)
		}
		sec, err := strconv.ParseFloat(ts, 64)
		if err != nil || sec < float64(before.UnixNano())/1e9-1e-3 || sec > float64(after.UnixNano())/1e9+1e-3 {
			t.Errorf("line %q: timestamp %q not within the record's time", line, ts)
		}
	}
	check(lines[0], `promex_latency_milliseconds_bucket{le="10.0"} 1 # {trace_id="4bf92f35000000000000000000000001",span_id="00f067aa000000ba"} `, 7)
	if lines[1] != `promex_latency_milliseconds_bucket{le="100.0"} 2` {
		t.Errorf("le=100 line %q; want no exemplar", lines[1])
	}
	check(lines[2], `promex_latency_milliseconds_bucket{le="+Inf"} 3 # {} `, 500)
	text := linesWith(h.AppendFormat(nil, FormatText), "promex_latency_milliseconds_bucket")
	if strings.Contains(text, "#") {
		t.Errorf("the text format has exemplars:\n%s", text)
	}
}
