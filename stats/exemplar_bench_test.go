package stats_test

import (
	"context"
	"testing"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// BenchmarkHistogram2Tags_RecordWithOptions: BenchmarkHistogram2Tags
// through RecordWithOptions without attachments, the path exemplars must
// leave unchanged (0 allocations, the cost of RecordWithTags).
func BenchmarkHistogram2Tags_RecordWithOptions(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Distribution(benchBounds...), ks...)
	ctx := benchCtx(b, ks)
	b.ReportAllocs()
	var v int64
	for b.Loop() {
		v = (v + 7919) & 65535
		if err := stats.RecordWithOptions(ctx, stats.WithMeasurements(bv.m.M(v))); err != nil {
			b.Fatal(err)
		}
	}
	bv.expect(b, float64(b.N))
}

// BenchmarkHistogram2Tags_Attachments: the same record with attachments,
// kept as its bucket's exemplar: the bounded extra cost of an exemplar
// (one allocation, a clock read, the series found again).
func BenchmarkHistogram2Tags_Attachments(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Distribution(benchBounds...), ks...)
	ctx := benchCtx(b, ks)
	att := map[string]interface{}{"request": "r-1"}
	b.ReportAllocs()
	var v int64
	for b.Loop() {
		v = (v + 7919) & 65535
		if err := stats.RecordWithOptions(ctx, stats.WithMeasurements(bv.m.M(v)), stats.WithAttachments(att)); err != nil {
			b.Fatal(err)
		}
	}
	bv.expect(b, float64(b.N))
}

// BenchmarkHistogram2Tags_SpanContext: RecordWithOptions with a span
// context function set and a span in the context: the exemplar plus the
// attachment map built per record.
func BenchmarkHistogram2Tags_SpanContext(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Distribution(benchBounds...), ks...)
	sc := stats.SpanContext{TraceID: [16]byte{1}, SpanID: [8]byte{2}}
	ctx := context.WithValue(benchCtx(b, ks), spanCtxKey{}, sc)
	stats.SetSpanContextFunc(func(ctx context.Context) (stats.SpanContext, bool) {
		sc, ok := ctx.Value(spanCtxKey{}).(stats.SpanContext)
		return sc, ok
	})
	b.Cleanup(func() { stats.SetSpanContextFunc(nil) })
	b.ReportAllocs()
	var v int64
	for b.Loop() {
		v = (v + 7919) & 65535
		if err := stats.RecordWithOptions(ctx, stats.WithMeasurements(bv.m.M(v))); err != nil {
			b.Fatal(err)
		}
	}
	bv.expect(b, float64(b.N))
}

type spanCtxKey struct{}

// ocSpanContext has the shape of OpenCensus's trace.SpanContext, which
// ocgrpc and OpenCensus code attach (the root module does not import it):
// an exemplar reads its ids by reflection.
type ocSpanContext struct {
	TraceID      [16]byte
	SpanID       [8]byte
	TraceOptions uint32
	Tracestate   *struct{}
}

// BenchmarkHistogram2Tags_OpenCensusSpanContext: RecordWithOptions with
// an OpenCensus-shaped span context attached: the exemplar's ids read by
// reflection (core.NewExemplar).
func BenchmarkHistogram2Tags_OpenCensusSpanContext(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Distribution(benchBounds...), ks...)
	ctx := benchCtx(b, ks)
	att := map[string]interface{}{stats.AttachmentKeySpanContext: ocSpanContext{TraceID: [16]byte{1}, SpanID: [8]byte{2}, TraceOptions: 1}}
	b.ReportAllocs()
	var v int64
	for b.Loop() {
		v = (v + 7919) & 65535
		if err := stats.RecordWithOptions(ctx, stats.WithMeasurements(bv.m.M(v)), stats.WithAttachments(att)); err != nil {
			b.Fatal(err)
		}
	}
	bv.expect(b, float64(b.N))
}
