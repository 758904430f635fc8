package stats

import (
	"context"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/tag"
)

// AttachmentKeySpanContext is the attachment key of the span a value was
// recorded in (OpenCensus's metricdata.AttachmentKeySpanContext).
const AttachmentKeySpanContext = core.SpanAttachmentKey

// SpanContext identifies the span a value was recorded in: the value of
// the AttachmentKeySpanContext attachment that RecordWithOptions adds when
// SetSpanContextFunc is set and the context carries a span. zerostat's
// exporters write it as the exemplar's trace_id and span_id (OpenMetrics)
// or traceId and spanId (OTLP).
type SpanContext struct {
	TraceID [16]byte
	SpanID  [8]byte
}

// SpanIDs returns the ids (core.SpanIDs: an exemplar reads them without
// reflection).
func (sc SpanContext) SpanIDs() ([16]byte, [8]byte) { return sc.TraceID, sc.SpanID }

// RecordExemplar records v as Record does, and keeps it as the exemplar
// of its bucket, with sc's trace and span ids (none when sc is zero) and
// the time of the call, in each Distribution view over the measure
// (view.DistributionData.ExemplarsPerBucket, which shows it without
// attachments; exporters write the ids as OpenMetrics, OTLP and remote
// write exemplars). It is what RecordWithOptions with a span context
// does, for a handle: no context, no attachments map, no tag lookup.
// Unlike RecordWithOptions, it also offers v to the exemplar reservoir
// of its series in each Count, Sum and LastValue view over the measure,
// as the OTel SDK's default reservoir for sums and gauges (GOMAXPROCS
// slots, reservoir sampling, a collection ending each sampling cycle;
// exporters write them as OTLP exemplars, a counter's in OpenMetrics and
// remote write); exponential views only record v. zerostat's otel
// MeterProvider calls it for a measurement its exemplar filter offers.
//
// Cost: Record's, the load of the handle's state and a kind check per
// view, and for the views that keep exemplars one allocation (the
// exemplar, 48 bytes), a clock read, and per view a bucket search and an
// atomic store, or the reservoir's mutex (core.Bound.KeepExemplar). Safe
// for concurrent use: of exemplars kept in one bucket at once, one wins.
func (h *Int64Handle) RecordExemplar(v int64, sc SpanContext) {
	b := bound(unsafe.Pointer(h))
	b.RecordInt(v)
	b.KeepExemplar(float64(v), sc.TraceID, sc.SpanID)
}

// RecordExemplar records v and keeps it as an exemplar; see
// Int64Handle.RecordExemplar.
func (h *Float64Handle) RecordExemplar(v float64, sc SpanContext) {
	b := bound(unsafe.Pointer(h))
	b.Record(v)
	b.KeepExemplar(v, sc.TraceID, sc.SpanID)
}

var spanFunc atomic.Pointer[func(context.Context) (SpanContext, bool)]

// SetSpanContextFunc sets how RecordWithOptions finds the span of a
// context (zerostat has no tracer of its own, and no dependency on one);
// nil stops looking. With OpenTelemetry, for instance:
//
//	stats.SetSpanContextFunc(func(ctx context.Context) (stats.SpanContext, bool) {
//		sc := trace.SpanContextFromContext(ctx)
//		return stats.SpanContext{TraceID: sc.TraceID(), SpanID: sc.SpanID()}, sc.IsValid()
//	})
//
// Once set, every RecordWithOptions calls f (Record and RecordWithTags
// never do: they stay the 0-allocation path), and a record whose context
// has a span is recorded with a SpanContext attachment (added to a copy of
// the WithAttachments map, if any, unless it has one), which costs what
// WithAttachments costs plus the map. Safe for concurrent use.
func SetSpanContextFunc(f func(context.Context) (SpanContext, bool)) {
	if f == nil {
		spanFunc.Store(nil)
		return
	}
	spanFunc.Store(&f)
}

// withSpan returns att with the context's span added (a copy), or att.
func withSpan(ctx context.Context, att map[string]interface{}) map[string]interface{} {
	f := spanFunc.Load()
	if f == nil || ctx == nil {
		return att
	}
	if _, ok := att[AttachmentKeySpanContext]; ok {
		return att
	}
	sc, ok := (*f)(ctx)
	if !ok {
		return att
	}
	next := make(map[string]interface{}, len(att)+1)
	for k, v := range att {
		next[k] = v
	}
	next[AttachmentKeySpanContext] = sc
	return next
}

// recordExemplars is RecordWithOptions with attachments or a span
// context: it records as RecordWithTags does, and keeps an exemplar of
// each measurement in its distribution views.
func recordExemplars(ctx context.Context, muts []tag.Mutator, ms []Measurement, att map[string]interface{}) error {
	for i := range muts {
		if err := (*core.Mutator)(&muts[i]).Err(); err != nil {
			return err
		}
	}
	if att = withSpan(ctx, att); len(att) == 0 {
		return RecordWithTags(ctx, muts, ms...)
	}
	var tm *core.TagMap
	loaded := false
	now := time.Now().UnixNano()
	for _, m := range ms {
		if m.desc() == nil {
			continue
		}
		subs := m.desc().Subscribers()
		if subs == nil {
			continue
		}
		if !loaded {
			tctx := ctx
			if len(muts) > 0 {
				var err error
				if tctx, err = tag.New(ctx, muts...); err != nil {
					return err
				}
			}
			tm, loaded = core.FromContext(tctx), true
		}
		ex := core.NewExemplar(m.v, now, att)
		for _, a := range subs {
			a.RecordMapExemplar(tm, m.v, ex)
		}
	}
	return nil
}
