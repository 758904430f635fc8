package otel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
)

// syncInst is every synchronous instrument of number type N (as the OTel
// SDK's int64Inst and float64Inst): Add makes it a Counter or an
// UpDownCounter, Record a Histogram or a Gauge; its inst's kind decides
// the aggregation.
//
// Cost of a measurement: reading the options' attribute set (from a single
// WithAttributeSet option directly, see fastopt.go; otherwise with
// metric.NewAddConfig or NewRecordConfig: an interface call per option),
// the lookup of the set's hash in the instrument's table (one atomic load
// and a probe), the exemplar filter's look at ctx (see inst.plain) and the
// bound handle's record (see stats.Int64Handle). No allocation once the
// set has been seen, unless the measurement is kept as an exemplar. Safe
// for concurrent use.
type syncInst[N int64 | float64] struct {
	embedded.Int64Counter
	embedded.Int64UpDownCounter
	embedded.Int64Histogram
	embedded.Int64Gauge
	embedded.Float64Counter
	embedded.Float64UpDownCounter
	embedded.Float64Histogram
	embedded.Float64Gauge
	i *inst
}

var (
	_ metric.Int64Counter         = (*syncInst[int64])(nil)
	_ metric.Int64UpDownCounter   = (*syncInst[int64])(nil)
	_ metric.Int64Histogram       = (*syncInst[int64])(nil)
	_ metric.Int64Gauge           = (*syncInst[int64])(nil)
	_ metric.Float64Counter       = (*syncInst[float64])(nil)
	_ metric.Float64UpDownCounter = (*syncInst[float64])(nil)
	_ metric.Float64Histogram     = (*syncInst[float64])(nil)
	_ metric.Float64Gauge         = (*syncInst[float64])(nil)
)

// Add records incr for the attributes of opts, keeping it as an exemplar
// when the provider's exemplar filter offers it (ctx's span: see
// inst.plain).
func (c *syncInst[N]) Add(ctx context.Context, incr N, opts ...metric.AddOption) {
	if h, ok := oneSetHash(opts, addOptTab); ok {
		if e := c.i.find(h); e != nil {
			if c.i.mayHoldSpan(&ctx) && c.i.plain != nil {
				measure(ctx, c.i, e, incr)
				return
			}
			record(e, incr)
			return
		}
	}
	if e := c.i.lookup(addSet(opts)); e != nil {
		if c.i.mayHoldSpan(&ctx) && c.i.plain != nil {
			measure(ctx, c.i, e, incr)
			return
		}
		record(e, incr)
	}
}

// Record records v for the attributes of opts, keeping it as an exemplar
// when the provider's exemplar filter offers it (see Add).
func (c *syncInst[N]) Record(ctx context.Context, v N, opts ...metric.RecordOption) {
	if h, ok := oneSetHash(opts, recOptTab); ok {
		if e := c.i.find(h); e != nil {
			if c.i.mayHoldSpan(&ctx) && c.i.plain != nil {
				measure(ctx, c.i, e, v)
				return
			}
			record(e, v)
			return
		}
	}
	if e := c.i.lookup(recordSet(opts)); e != nil {
		if c.i.mayHoldSpan(&ctx) && c.i.plain != nil {
			measure(ctx, c.i, e, v)
			return
		}
		record(e, v)
	}
}

// Enabled reports whether the instrument takes measurements: until the
// provider's Shutdown.
func (c *syncInst[N]) Enabled(context.Context) bool { return !c.i.p.isShutdown() }

// record records v through e's handle: its Int64 handle for an Int64
// instrument (N is int64 then), its Float64 one otherwise.
func record[N int64 | float64](e *entry, v N) {
	if e.i != nil {
		e.i.Record(int64(v))
		return
	}
	e.f.Record(float64(v))
}

var emptySet = *attribute.EmptySet()

func addSet(opts []metric.AddOption) attribute.Set {
	if len(opts) == 0 {
		return emptySet
	}
	return metric.NewAddConfig(opts).Attributes()
}

func recordSet(opts []metric.RecordOption) attribute.Set {
	if len(opts) == 0 {
		return emptySet
	}
	return metric.NewRecordConfig(opts).Attributes()
}
