package otlpcheck

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// Exemplars reach the collector as OTLP exemplars — value, time, trace and
// span IDs, per bucket — in protobuf-go's bytes; with Delta temporality an
// exemplar older than the interval is left out.
func TestExemplars(t *testing.T) {
	for _, temporality := range []otlp.Temporality{otlp.Cumulative, otlp.Delta} {
		t.Run(temporality.String(), func(t *testing.T) {
			prefix := "otlpcheck/exemplar/" + temporality.String() + "/"
			m := stats.Float64(prefix+"latency", "", stats.UnitMilliseconds)
			v := &view.View{Name: prefix + "dist", Measure: m, Aggregation: view.Distribution(10)}
			if err := view.Register(v); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { view.Unregister(v) })
			rcv := newReceiver(t, "")
			ex, err := otlp.New(otlp.Options{Endpoint: rcv.URL, Temporality: temporality, Resource: resource,
				Header: http.Header{"Authorization": {"Bearer t0ken"}}})
			if err != nil {
				t.Fatal(err)
			}
			sc := stats.SpanContext{TraceID: [16]byte{1, 2, 3, 15: 4}, SpanID: [8]byte{5, 6, 7: 8}}
			before := time.Now()
			if err := stats.RecordWithOptions(context.Background(), stats.WithMeasurements(m.M(3)),
				stats.WithAttachments(map[string]interface{}{stats.AttachmentKeySpanContext: sc})); err != nil {
				t.Fatal(err)
			}
			stats.RecordWithOptions(context.Background(), stats.WithMeasurements(m.M(20)),
				stats.WithAttachments(map[string]interface{}{"k": "v"})) // no span: no IDs
			after := time.Now()
			for round := range 2 {
				if round == 1 {
					stats.Record(context.Background(), m.M(30)) // a change, no new exemplar
				}
				if err := ex.Export(context.Background()); err != nil {
					t.Fatal(err)
				}
				req, raw := rcv.last(t)
				if canon, err := (proto.MarshalOptions{Deterministic: true}).Marshal(req); err != nil || !bytes.Equal(canon, raw) {
					t.Errorf("round %d: our bytes differ from protobuf-go's for the same message (%v)", round, err)
				}
				got := keepMetrics(req, prefix).ResourceMetrics[0].ScopeMetrics[0].Metrics
				if len(got) != 1 {
					t.Fatalf("round %d: %d metrics", round, len(got))
				}
				exs := got[0].GetHistogram().DataPoints[0].Exemplars
				if temporality == otlp.Delta && round == 1 {
					if len(exs) != 0 {
						t.Errorf("delta round 1: %d exemplars from the previous interval; want none", len(exs))
					}
					continue
				}
				if len(exs) != 2 {
					t.Fatalf("round %d: %d exemplars; want 2", round, len(exs))
				}
				e0, e1 := exs[0], exs[1]
				if e0.GetAsDouble() != 3 || !bytes.Equal(e0.TraceId, sc.TraceID[:]) || !bytes.Equal(e0.SpanId, sc.SpanID[:]) {
					t.Errorf("exemplar 0 %v; want 3 with the span", e0)
				}
				if e1.GetAsDouble() != 20 || e1.TraceId != nil || e1.SpanId != nil {
					t.Errorf("exemplar 1 %v; want 20 without IDs", e1)
				}
				for _, e := range exs {
					if e.TimeUnixNano < ns(before) || e.TimeUnixNano > ns(after) {
						t.Errorf("exemplar time %d not within the record's [%d, %d]", e.TimeUnixNano, ns(before), ns(after))
					}
				}
			}
		})
	}
}
