package otel

import (
	"context"
	"fmt"
	"strings"
	"unsafe"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/zerostat/zerostat/internal/otelenv"
	"github.com/zerostat/zerostat/stats"
)

// ExemplarFilter decides which measurements of the synchronous
// instruments are offered to be kept as exemplars: the OTel SDK's
// exemplar.Filter, as one of the three filters the specification
// defines (a value, not a function: the record path makes no call
// through it). Set it with WithExemplarFilter or
// OTEL_METRICS_EXEMPLAR_FILTER.
type ExemplarFilter uint8

// The exemplar filters (the specification's names are their String).
const (
	// ExemplarsTraceBased offers a measurement whose context holds a
	// sampled span (trace.SpanContextFromContext(ctx).IsSampled()): the
	// default, as the SDK's (exemplar.TraceBasedFilter).
	ExemplarsTraceBased ExemplarFilter = iota
	// ExemplarsAlwaysOn offers every measurement, with the ids of the
	// context's span when it holds one, sampled or not, and without them
	// otherwise (exemplar.AlwaysOnFilter). Each measurement then costs
	// an exemplar: an allocation and a clock read for a histogram.
	ExemplarsAlwaysOn
	// ExemplarsAlwaysOff offers none (exemplar.AlwaysOffFilter): a
	// measurement does not even look at its context.
	ExemplarsAlwaysOff
)

var filterName = [...]string{"trace_based", "always_on", "always_off"}

// String returns the filter's name in OTEL_METRICS_EXEMPLAR_FILTER.
func (f ExemplarFilter) String() string {
	if int(f) < len(filterName) {
		return filterName[f]
	}
	return fmt.Sprintf("ExemplarFilter(%d)", f)
}

// EnvExemplarFilter is the variable NewMeterProvider reads the exemplar
// filter from (always_on, always_off or trace_based, in any case, as the
// SDK reads it); WithExemplarFilter takes precedence.
const EnvExemplarFilter = "OTEL_METRICS_EXEMPLAR_FILTER"

// WithExemplarFilter sets the provider's exemplar filter (the SDK's
// metric.WithExemplarFilter), over OTEL_METRICS_EXEMPLAR_FILTER. See
// Exemplars in the package documentation.
func WithExemplarFilter(f ExemplarFilter) Option {
	return func(c *config) { c.filter, c.filterSet = f, true }
}

// exemplarFilter returns the filter the options set, else the one the
// environment names, else ExemplarsTraceBased. An unrecognised value (of
// the variable, or of the option) is reported through otel.Handle and
// ignored, as the specification asks of an enum ("MUST produce a warning
// and be ignored"; the SDK ignores it silently).
func exemplarFilter(c *config, env otelenv.Env) ExemplarFilter {
	if c.filterSet {
		if c.filter <= ExemplarsAlwaysOff {
			return c.filter
		}
		otel.Handle(fmt.Errorf("otel: WithExemplarFilter(%v): not a filter: ignored", c.filter))
	}
	v := env.Get(EnvExemplarFilter)
	if v == "" {
		return ExemplarsTraceBased
	}
	for f, name := range filterName {
		if strings.EqualFold(v, name) {
			return ExemplarFilter(f)
		}
	}
	otel.Handle(otelenv.Ignored{Err: fmt.Errorf("otel: %s=%q: want always_on, always_off or trace_based", EnvExemplarFilter, v)})
	return ExemplarsTraceBased
}

// plainTab returns the span type word of the measurements of kind k that
// filter f records without looking further (inst.plain): nil, every
// measurement, for ExemplarsAlwaysOff and for the kinds that keep no
// exemplars (the observable ones, whose observations have no context);
// noSpanTab, those made outside a span, for ExemplarsTraceBased; for
// ExemplarsAlwaysOn, a word no span has. A histogram keeps its exemplars
// per bucket, a counter, an up-down counter and a gauge in a reservoir
// per point (core's reservoir.go, the SDK's FixedSizeReservoir).
func plainTab(f ExemplarFilter, k Kind) unsafe.Pointer {
	switch {
	case f == ExemplarsAlwaysOff || !keepsExemplars(k):
		return nil
	case f == ExemplarsTraceBased && noSpanTab != nil:
		return noSpanTab
	}
	return unsafe.Pointer(&noTab)
}

// keepsExemplars reports whether the measurements of an instrument of
// kind k may be kept as exemplars: those of the synchronous instruments.
func keepsExemplars(k Kind) bool {
	switch k {
	case KindCounter, KindUpDownCounter, KindHistogram, KindGauge:
		return true
	}
	return false
}

// ctxTabs returns the context type words that filter f records without
// looking into them (inst.bg and inst.todo): context.Background()'s and
// context.TODO()'s, which hold no value, under ExemplarsTraceBased and
// ExemplarsAlwaysOff (which offers nothing anyway: a measurement in them
// then costs one compare, as under trace_based); under ExemplarsAlwaysOn,
// which offers them too, words no context has.
func ctxTabs(f ExemplarFilter) (bg, todo unsafe.Pointer) {
	if f != ExemplarsAlwaysOn {
		return bgTab, todoTab
	}
	return unsafe.Pointer(&noTab), unsafe.Pointer(&noTab)
}

// bgTab and todoTab are the type words of context.Background() and
// context.TODO().
var bgTab, todoTab = func() (unsafe.Pointer, unsafe.Pointer) {
	bg, todo := context.Background(), context.TODO()
	return ctxTab(&bg), ctxTab(&todo)
}()

// ctxTab returns the type word of *ctx. It takes the context's address,
// not a copy: Add and Record pass their own argument's, which sits in its
// spill slot, so the word is one load (a copy would be stored to a
// temporary and loaded back, on the path of every record: +0.5 to 1 ns
// with a counter's record in context.Background(), benchmarked).
func ctxTab(ctx *context.Context) unsafe.Pointer { return (*iface)(unsafe.Pointer(ctx)).tab }

// noTab's address is a type word no span and no context has.
var noTab byte

// mayHoldSpan reports whether a measurement made in ctx may take the
// exemplar path: under trace_based (and always_off), false for
// context.Background() and context.TODO(), which hold no values, so no
// span (ctx's type word compared with theirs, i.bg and i.todo: see
// ctxTabs), sparing a measurement in them trace.SpanFromContext's
// ctx.Value call; under always_on, true. Add and Record ask it before
// they load i.plain: a measurement in context.Background(), the common
// case, costs one load and one compare, as when only i.plain was
// checked. Inlined; ctx is the address of Add's or Record's argument
// (see ctxTab).
func (i *inst) mayHoldSpan(ctx *context.Context) bool {
	t := ctxTab(ctx)
	return t != i.bg && t != i.todo
}

// measure records v through e for a measurement made in ctx, for an
// instrument whose plain word is not nil (see inst.plain): through
// measureInSpan when ctx's span is not the no-op one (a span is in ctx)
// or the filter is always_on (i.plain is then no span's word), else
// plainly. Cost for a context without a span: trace.SpanFromContext (a
// ctx.Value lookup and a type assertion) and a compare of the span's type
// word with noSpanTab, no allocation. Out of Add's and Record's bodies:
// those look at ctx's type word (mayHoldSpan) and at i.plain before they
// call it.
func measure[N int64 | float64](ctx context.Context, i *inst, e *entry, v N) {
	if s := trace.SpanFromContext(ctx); spanTab(s) != i.plain {
		measureInSpan(s, i.filter, e, v)
		return
	}
	record(e, v)
}

// measureInSpan records v through e for a measurement made in span s
// (ctx's, or the no-op span outside a span under ExemplarsAlwaysOn): with
// an exemplar with s's ids when filter f offers the measurement
// (ExemplarsTraceBased: s is sampled), else a plain record. Cost, for a
// span not sampled: the interface call of its SpanContext.
func measureInSpan[N int64 | float64](s trace.Span, f ExemplarFilter, e *entry, v N) {
	sc := s.SpanContext()
	if f == ExemplarsTraceBased && !sc.IsSampled() {
		record(e, v)
		return
	}
	recordExemplar(e, v, stats.SpanContext{TraceID: sc.TraceID(), SpanID: sc.SpanID()})
}

// recordExemplar records v through e's handle and keeps it as an
// exemplar with sc's ids (stats.Int64Handle.RecordExemplar).
func recordExemplar[N int64 | float64](e *entry, v N, sc stats.SpanContext) {
	if e.i != nil {
		e.i.RecordExemplar(int64(v), sc)
		return
	}
	e.f.RecordExemplar(float64(v), sc)
}

// noSpanTab is the type word of the span trace.SpanFromContext returns
// for a context that holds none (otel/trace's no-op span, whose
// SpanContext is the zero one: neither sampled nor with ids), so that
// measure tells it apart with a compare, not the interface call of its
// SpanContext (which returns a 56-byte struct: 8.0 ns for
// trace.SpanContextFromContext(ctx).IsSampled() on a background context
// against 2.9 ns for trace.SpanFromContext and this compare; scratch
// benchmark, medians of 3). Comparing the interfaces with == would call
// the runtime's ifaceeq (7 to 11 ns). init checks that this span's
// SpanContext is the zero one, and leaves noSpanTab nil otherwise (then
// every context holding values takes measureInSpan, which reads the span
// context: correct, slower).
var noSpanTab unsafe.Pointer

func init() {
	s := trace.SpanFromContext(context.Background())
	if sc := s.SpanContext(); sc.Equal(trace.SpanContext{}) && !sc.IsSampled() {
		noSpanTab = spanTab(s)
	}
}

// spanTab returns the type word of s.
func spanTab(s trace.Span) unsafe.Pointer { return (*iface)(unsafe.Pointer(&s)).tab }
