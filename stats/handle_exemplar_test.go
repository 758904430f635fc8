package stats_test

import (
	"context"
	"testing"
	"time"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// A handle's RecordExemplar records as Record does into every view, and
// keeps the value as its bucket's exemplar, with the span's ids and the
// record's time, in the Distribution views only; a zero SpanContext keeps
// an exemplar without a span.
func TestHandleRecordExemplar(t *testing.T) {
	mi := stats.Int64("handle/exemplar/int", "", stats.UnitDimensionless)
	mf := stats.Float64("handle/exemplar/float", "", stats.UnitMilliseconds)
	register(t,
		&view.View{Name: "handle/exemplar/int/dist", Measure: mi, Aggregation: view.Distribution(10), TagKeys: []tag.Key{keyA}},
		&view.View{Name: "handle/exemplar/int/sum", Measure: mi, Aggregation: view.Sum(), TagKeys: []tag.Key{keyA}},
		&view.View{Name: "handle/exemplar/float/dist", Measure: mf, Aggregation: view.DistributionUpperInclusive(10), TagKeys: []tag.Key{keyA}},
	)
	ctx, _ := tag.New(context.Background(), tag.Upsert(keyA, "x"))
	hi, hf := mi.Bind(tag.FromContext(ctx)), mf.Bind(tag.FromContext(ctx))
	sc := stats.SpanContext{TraceID: [16]byte{0x4b, 15: 1}, SpanID: [8]byte{0xf0, 7: 1}}
	before := time.Now()
	hi.RecordExemplar(3, sc)
	hi.RecordExemplar(12, stats.SpanContext{})
	hf.RecordExemplar(10, sc) // le=10: upper-inclusive
	after := time.Now()
	dist := func(name string) *view.DistributionData {
		t.Helper()
		rows, err := view.RetrieveData(name)
		if err != nil || len(rows) != 1 {
			t.Fatalf("%s: %v, %v", name, rows, err)
		}
		return rows[0].Data.(*view.DistributionData)
	}
	d := dist("handle/exemplar/int/dist")
	if d.Count != 2 || len(d.ExemplarsPerBucket) != 2 || d.ExemplarsPerBucket[0].Value != 3 || d.ExemplarsPerBucket[1].Value != 12 {
		t.Fatalf("int dist: count %d, exemplars %v; want 2, 3 and 12", d.Count, d.ExemplarsPerBucket)
	}
	for _, e := range d.ExemplarsPerBucket {
		if e.Timestamp.Before(before) || e.Timestamp.After(after) {
			t.Errorf("exemplar %v at %v; want between %v and %v", e.Value, e.Timestamp, before, after)
		}
	}
	if d := dist("handle/exemplar/float/dist"); d.Count != 1 || d.ExemplarsPerBucket[0] == nil || d.ExemplarsPerBucket[0].Value != 10 {
		t.Errorf("float dist: count %d, exemplars %v; want 10 in le=10", d.Count, d.ExemplarsPerBucket)
	}
	rows, _ := view.RetrieveData("handle/exemplar/int/sum")
	if len(rows) != 1 || rows[0].Data.(*view.SumData).Value != 15 {
		t.Errorf("sum rows %v; want 15", rows)
	}
}
