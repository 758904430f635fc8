package otel_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	zotel "github.com/zerostat/zerostat/otel"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// BenchmarkAdd is the record path's micro-benchmark (the side-by-side rows
// with the OTel SDK are in benchmarks/, BenchmarkRecord impl=zerostat_otel*).
func BenchmarkAdd(b *testing.B) {
	p := zotel.NewMeterProvider(zotel.WithViewPrefix("bench."))
	defer p.Shutdown(ctx)
	c, _ := p.Meter("m").Int64Counter("c")
	h, _ := p.Meter("m").Float64Histogram("h")
	set := attribute.NewSet(attribute.String("method", "v0"), attribute.String("status", "v1"))
	add := []metric.AddOption{metric.WithAttributeSet(set)}
	rec := []metric.RecordOption{metric.WithAttributeSet(set)}
	b.Run("attrset", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.Add(ctx, 1, add...)
		}
	})
	b.Run("noattrs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.Add(ctx, 1)
		}
	})
	b.Run("histogram_attrset", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			h.Record(ctx, float64(i&127), rec...)
			i++
		}
	})
	b.Run("config_only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s := metric.NewAddConfig(add).Attributes()
			sink = s.Len()
		}
	})
}

var sink int

func BenchmarkAddAttributes(b *testing.B) {
	p := zotel.NewMeterProvider(zotel.WithViewPrefix("benchattrs."))
	defer p.Shutdown(ctx)
	c, _ := p.Meter("m").Int64Counter("c")
	b.ReportAllocs()
	for b.Loop() {
		c.Add(ctx, 1, metric.WithAttributes(attribute.String("method", "v0"), attribute.String("status", "v1")))
	}
}

// BenchmarkAttributesAB is WithAttributes per call on zerostat and on the
// OTel SDK (a ManualReader) in one run, for a quick ratio; the published
// rows are benchmarks/ BenchmarkRecord.
func BenchmarkAttributesAB(b *testing.B) {
	zp := zotel.NewMeterProvider(zotel.WithViewPrefix("ab."))
	defer zp.Shutdown(ctx)
	sp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer sp.Shutdown(ctx)
	for _, p := range []struct {
		name string
		mp   metric.MeterProvider
	}{{"zerostat", zp}, {"sdk", sp}} {
		c, _ := p.mp.Meter("m").Int64Counter("c")
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.Add(ctx, 1, metric.WithAttributes(attribute.String("method", "v0"), attribute.String("status", "v1")))
			}
		})
	}
}

// BenchmarkHistogramVsHandle: a histogram Record with WithAttributeSet
// beside the zerostat handle it ends in (same bounds, same values).
func BenchmarkHistogramVsHandle(b *testing.B) {
	p := zotel.NewMeterProvider(zotel.WithViewPrefix("hvh."))
	defer p.Shutdown(ctx)
	h, _ := p.Meter("m").Float64Histogram("h")
	rec := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("method", "v0"), attribute.String("status", "v1")))}
	m := stats.Float64("hvh.handle", "", "")
	k1, k2 := tag.MustNewKey("method"), tag.MustNewKey("status")
	if err := view.Register(&view.View{Name: "hvh.handle", Measure: m, TagKeys: []tag.Key{k1, k2},
		Aggregation: view.DistributionUpperInclusive(zotel.DefaultBoundaries...)}); err != nil {
		b.Fatal(err)
	}
	tctx, _ := tag.New(ctx, tag.Upsert(k1, "v0"), tag.Upsert(k2, "v1"))
	hd := m.Bind(tag.FromContext(tctx))
	b.Run("otel", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			h.Record(ctx, float64(i&1023), rec...)
			i++
		}
	})
	b.Run("handle", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			hd.Record(float64(i & 1023))
			i++
		}
	})
}

// BenchmarkExemplars: Add and Record with WithAttributeSet under the
// trace_based filter, in context.Background(), in a request's context
// without a span (values: what trace.SpanFromContext walks),
// in a span not sampled, and in a sampled one (each then offers an
// exemplar: a histogram keeps it, a counter's reservoir samples it), on
// zerostat and on the OTel SDK (a ManualReader).
func BenchmarkExemplars(b *testing.B) {
	zp := zotel.NewMeterProvider(zotel.WithViewPrefix("benchex."))
	defer zp.Shutdown(ctx)
	sp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer sp.Shutdown(ctx)
	set := attribute.NewSet(attribute.String("method", "v0"), attribute.String("status", "v1"))
	add := []metric.AddOption{metric.WithAttributeSet(set)}
	rec := []metric.RecordOption{metric.WithAttributeSet(set)}
	ctxs := []struct {
		name string
		ctx  context.Context
	}{
		{"nospan", ctx},
		{"values", requestCtx(ctx)},
		{"unsampled", trace.ContextWithSpanContext(requestCtx(ctx), unsampled)},
		{"sampled", trace.ContextWithSpanContext(ctx, sampledSpans[0])},
	}
	for _, p := range []struct {
		name string
		mp   metric.MeterProvider
	}{{"zerostat", zp}, {"sdk", sp}} {
		c, _ := p.mp.Meter("m").Int64Counter("c")
		h, _ := p.mp.Meter("m").Float64Histogram("h")
		for _, x := range ctxs {
			b.Run("impl="+p.name+"/inst=counter/ctx="+x.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					c.Add(x.ctx, 1, add...)
				}
			})
			b.Run("impl="+p.name+"/inst=histogram/ctx="+x.name, func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					h.Record(x.ctx, float64(i&127), rec...)
					i++
				}
			})
		}
	}
}

type benchKey int

// requestCtx is a context as a server's request has one: a few values,
// none of them a span.
func requestCtx(parent context.Context) context.Context {
	c := parent
	for k := range 4 {
		c = context.WithValue(c, benchKey(k), k)
	}
	return c
}
