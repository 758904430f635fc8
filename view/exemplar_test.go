package view_test

import (
	"context"
	"testing"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// WithAttachments keeps the latest value of each bucket with its
// attachments, as OpenCensus does; a record without attachments leaves the
// exemplars alone.
func TestExemplarsPerBucket(t *testing.T) {
	m := stats.Float64("exemplar/latency", "", stats.UnitMilliseconds)
	v := &view.View{Measure: m, Aggregation: view.Distribution(10, 100), TagKeys: []tag.Key{keyA}}
	cnt := &view.View{Name: "exemplar/count", Measure: m, Aggregation: view.Count()}
	register(t, v, cnt)
	ctx := ctxWith(t, tag.Insert(keyA, "x"))
	rec := func(x float64, att map[string]interface{}) {
		t.Helper()
		if err := stats.RecordWithOptions(ctx, stats.WithMeasurements(m.M(x)), stats.WithAttachments(att)); err != nil {
			t.Fatal(err)
		}
	}
	rec(5, map[string]interface{}{"id": "first"})
	rec(7, map[string]interface{}{"id": "second"})
	rec(500, map[string]interface{}{"id": "big"})
	stats.Record(ctx, m.M(50)) // no attachments: no exemplar
	rs := rows(t, v.Name)
	if len(rs) != 1 {
		t.Fatalf("rows %v", rs)
	}
	d := rs[0].Data.(*view.DistributionData)
	if d.Count != 4 {
		t.Errorf("count %d; want 4", d.Count)
	}
	ex := d.ExemplarsPerBucket
	if len(ex) != 3 {
		t.Fatalf("ExemplarsPerBucket has %d entries; want 3", len(ex))
	}
	if ex[0] == nil || ex[0].Value != 7 || ex[0].Attachments["id"] != "second" || ex[0].Timestamp.IsZero() {
		t.Errorf("bucket 0 exemplar %+v; want the latest, 7 (second)", ex[0])
	}
	if ex[1] != nil {
		t.Errorf("bucket 1 exemplar %+v; want none", ex[1])
	}
	if ex[2] == nil || ex[2].Value != 500 || ex[2].Attachments["id"] != "big" {
		t.Errorf("bucket 2 exemplar %+v; want 500 (big)", ex[2])
	}
	if got := countOf(t, rows(t, cnt.Name)); got != 4 {
		t.Errorf("count view %d; want 4", got)
	}
	// A row recorded without attachments has none.
	stats.Record(ctxWith(t, tag.Insert(keyA, "y")), m.M(1))
	for _, r := range rows(t, v.Name) {
		if r.Tags[0].Value == "y" && r.Data.(*view.DistributionData).ExemplarsPerBucket != nil {
			t.Errorf("row a=y has exemplars %v; want nil", r.Data.(*view.DistributionData).ExemplarsPerBucket)
		}
	}
}

type spanKey struct{}

// With SetSpanContextFunc, RecordWithOptions attaches the context's span,
// keeping the caller's attachments (and their map unchanged).
func TestExemplarSpanContext(t *testing.T) {
	m := stats.Float64("exemplar/span", "", stats.UnitMilliseconds)
	v := &view.View{Measure: m, Aggregation: view.Distribution(10)}
	register(t, v)
	stats.SetSpanContextFunc(func(ctx context.Context) (stats.SpanContext, bool) {
		sc, ok := ctx.Value(spanKey{}).(stats.SpanContext)
		return sc, ok
	})
	t.Cleanup(func() { stats.SetSpanContextFunc(nil) })
	sc := stats.SpanContext{TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{4, 5}}
	ctx := context.WithValue(context.Background(), spanKey{}, sc)
	if err := stats.RecordWithOptions(ctx, stats.WithMeasurements(m.M(1))); err != nil {
		t.Fatal(err)
	}
	att := map[string]interface{}{"user": "u"}
	if err := stats.RecordWithOptions(ctx, stats.WithMeasurements(m.M(20)), stats.WithAttachments(att)); err != nil {
		t.Fatal(err)
	}
	stats.RecordWithOptions(context.Background(), stats.WithMeasurements(m.M(2))) // no span: no exemplar
	ex := rows(t, v.Name)[0].Data.(*view.DistributionData).ExemplarsPerBucket
	if ex[0] == nil || ex[0].Value != 1 || ex[0].Attachments[stats.AttachmentKeySpanContext] != sc {
		t.Errorf("bucket 0 exemplar %+v; want 1 with the span", ex[0])
	}
	if ex[1] == nil || ex[1].Attachments[stats.AttachmentKeySpanContext] != sc || ex[1].Attachments["user"] != "u" {
		t.Errorf("bucket 1 exemplar %+v; want 20 with the span and user", ex[1])
	}
	if len(att) != 1 {
		t.Errorf("the caller's attachments were modified: %v", att)
	}
}

// A meter's Record keeps attachments as exemplars too.
func TestMeterExemplars(t *testing.T) {
	m := stats.Float64("exemplar/meter", "", stats.UnitMilliseconds)
	meter := view.NewMeter()
	v := &view.View{Measure: m, Aggregation: view.Distribution(10)}
	if err := meter.Register(v); err != nil {
		t.Fatal(err)
	}
	meter.Record(nil, []stats.Measurement{m.M(3)}, map[string]interface{}{"k": 1})
	rs, _ := meter.RetrieveData(v.Name)
	if ex := rs[0].Data.(*view.DistributionData).ExemplarsPerBucket; len(ex) != 2 || ex[0] == nil || ex[0].Attachments["k"] != 1 {
		t.Errorf("exemplars %v; want bucket 0's", ex)
	}
}

// An empty attachments map is no attachments, as in OpenCensus (its
// getExemplar tests len): through RecordWithOptions, WithRecorder and
// Meter.Record, it leaves the bucket's earlier exemplar in place.
func TestEmptyAttachmentsKeepNoExemplar(t *testing.T) {
	m := stats.Float64("exemplar/empty", "", stats.UnitMilliseconds)
	mk := func() *view.View {
		return &view.View{Name: "exemplar/empty", Measure: m, Aggregation: view.Distribution(10)}
	}
	register(t, mk())
	meter := view.NewMeter()
	if err := meter.Register(mk()); err != nil {
		t.Fatal(err)
	}
	first := map[string]interface{}{"id": "first"}
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		record func(att map[string]interface{})
		rows   func() ([]*view.Row, error)
	}{
		{"RecordWithOptions", func(att map[string]interface{}) {
			if err := stats.RecordWithOptions(ctx, stats.WithMeasurements(m.M(5)), stats.WithAttachments(att)); err != nil {
				t.Fatal(err)
			}
		}, func() ([]*view.Row, error) { return view.RetrieveData("exemplar/empty") }},
		{"WithRecorder", func(att map[string]interface{}) {
			if err := stats.RecordWithOptions(ctx, stats.WithRecorder(meter), stats.WithMeasurements(m.M(5)), stats.WithAttachments(att)); err != nil {
				t.Fatal(err)
			}
		}, func() ([]*view.Row, error) { return meter.RetrieveData("exemplar/empty") }},
		{"Meter.Record", func(att map[string]interface{}) {
			meter.Record(nil, []stats.Measurement{m.M(5)}, att)
		}, func() ([]*view.Row, error) { return meter.RetrieveData("exemplar/empty") }},
	} {
		c.record(first)
		c.record(map[string]interface{}{})
		rs, err := c.rows()
		if err != nil || len(rs) != 1 {
			t.Fatalf("%s: rows %v, %v", c.name, rs, err)
		}
		ex := rs[0].Data.(*view.DistributionData).ExemplarsPerBucket
		if len(ex) != 2 || ex[0] == nil || ex[0].Attachments["id"] != "first" {
			t.Errorf("%s: exemplars %v; want bucket 0's still the first", c.name, ex)
		}
	}
}
