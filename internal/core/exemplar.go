package core

import (
	"reflect"
	"sync"
	"sync/atomic"
	"time"
)

// Exemplar is a recorded value kept as the example of its distribution
// bucket: the latest value recorded with attachments (OpenCensus's
// metricdata.Exemplar). Immutable once stored.
type Exemplar struct {
	Value       float64
	Time        int64 // Unix nanoseconds
	Attachments map[string]interface{}
	// The span it was recorded in, read from the "SpanContext" attachment
	// (NewExemplar): what exporters write as the exemplar's trace and span
	// ids; zero without one (see HasSpan). 48 bytes in all, a size class.
	TraceID [16]byte
	SpanID  [8]byte
}

// HasSpan reports whether the exemplar was recorded in a span: a non-zero
// trace id (W3C: an all-zero trace id is invalid).
func (x *Exemplar) HasSpan() bool { return x.TraceID != [16]byte{} }

// SpanIDs is what a span context value may implement to give its ids
// without reflection (stats.SpanContext does).
type SpanIDs interface {
	SpanIDs() (trace [16]byte, span [8]byte)
}

// SpanAttachmentKey is the attachment key of the span a value was
// recorded in (OpenCensus's metricdata.AttachmentKeySpanContext).
const SpanAttachmentKey = "SpanContext"

// NewExemplar returns the exemplar of v recorded at t (Unix nanoseconds)
// with att, its span read from att's "SpanContext" value by its shape: a
// struct (or a pointer to one) with a TraceID of 16 bytes and a SpanID of
// 8, which zerostat's stats.SpanContext and OpenCensus's trace.SpanContext
// (what ocgrpc and OpenCensus users attach) both are; the root module
// needs no dependency on OpenCensus for it. Cost: an interface call for
// a value that implements SpanIDs (stats.SpanContext), else reflection,
// the field indices cached per type (an exemplar's record allocates
// anyway).
func NewExemplar(v float64, t int64, att map[string]interface{}) *Exemplar {
	x := &Exemplar{Value: v, Time: t, Attachments: att}
	switch sc := att[SpanAttachmentKey].(type) {
	case nil:
	case SpanIDs:
		x.TraceID, x.SpanID = sc.SpanIDs()
	default:
		spanOf(sc, &x.TraceID, &x.SpanID)
	}
	return x
}

// spanFields are the indices of a span context type's TraceID and SpanID
// fields, -1 when it has not both with the right shape.
type spanFields struct{ trace, span int }

var spanTypes sync.Map // reflect.Type -> spanFields

// spanOf reads the trace and span ids of v into trace and span, when v
// is a span context by its shape.
func spanOf(v interface{}, trace *[16]byte, span *[8]byte) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return
	}
	t := rv.Type()
	f, ok := spanTypes.Load(t)
	if !ok {
		f = fieldsOf(t)
		spanTypes.Store(t, f)
	}
	fs := f.(spanFields)
	if fs.trace < 0 {
		return
	}
	tv, sv := rv.Field(fs.trace), rv.Field(fs.span)
	for i := range trace {
		trace[i] = byte(tv.Index(i).Uint())
	}
	for i := range span {
		span[i] = byte(sv.Index(i).Uint())
	}
}

// fieldsOf finds t's TraceID ([16]byte) and SpanID ([8]byte) fields.
func fieldsOf(t reflect.Type) spanFields {
	byteArray := func(name string, n int) int {
		f, ok := t.FieldByName(name)
		if !ok || len(f.Index) != 1 || f.Type.Kind() != reflect.Array || f.Type.Len() != n || f.Type.Elem().Kind() != reflect.Uint8 {
			return -1
		}
		return f.Index[0]
	}
	fs := spanFields{byteArray("TraceID", 16), byteArray("SpanID", 8)}
	if fs.trace < 0 || fs.span < 0 {
		return spanFields{-1, -1}
	}
	return fs
}

// exemplars is the exemplar store of an aggregator: one entry per series
// ID (IDs are dense), each holding its series' latest exemplar per bucket
// (a Distribution's) or its reservoir (a Count's, Sum's or LastValue's:
// reservoir.go). It lives on the aggregator, not the series, so a series
// recorded without exemplars pays nothing (not even a word), and the
// record path of every kind is untouched. Entries are replaced as a
// whole; a grown table is published with an atomic store under exMu.
type exemplars struct {
	mu  sync.Mutex
	tab atomic.Pointer[[]atomic.Pointer[exemplarEntry]]
}

type exemplarEntry struct {
	series  *Series // the holder of the ID it was stored for
	buckets []atomic.Pointer[Exemplar]
	// res samples the offers of a Count's, Sum's or LastValue's series
	// into buckets, its reservoir's slots (reservoir.go); nil for a
	// Distribution's, whose buckets are its histogram's.
	res *sampler
}

// RecordMapExemplar is RecordMap that also keeps ex as the exemplar of v's
// bucket in the series recorded into (Distribution views only; other
// kinds just record). Cost on top of RecordMap: finding the series again
// (the cached one, or a probe), a bucket search and, on a series' first
// exemplar, one allocation. Safe for concurrent use: the latest store of
// a bucket wins.
func (a *Aggregator) RecordMapExemplar(m *TagMap, v float64, ex *Exemplar) {
	a.RecordMap(m, v)
	if a.kind != KindDistribution || ex == nil {
		return
	}
	slot := &a.noTags
	if m != nil {
		slot = &m.cache[a.slot%cacheSlots]
	}
	s := slot.Load()
	if s == nil || s.agg != a {
		// Not cached: an overflowed record, or a cache slot another view
		// took meanwhile.
		var buf [16]string
		vals, h := a.project(buf[:0], m.Tags())
		if s = a.table.Load().find(a, h, vals); s == nil {
			s = a.overflow.Load()
		}
	}
	if s != nil {
		a.storeExemplar(s, v, ex)
	}
}

// KeepExemplar keeps v, which the caller has just recorded through b
// (Record or RecordInt), as an exemplar in the series b records into of
// each view over the measure, with the time of the call and the span ids
// trace and span (zero: an exemplar without a span): in a Distribution's
// as the exemplar of v's bucket (the latest wins), in a Count's, a Sum's
// or a LastValue's as an offer to the series' reservoir (reservoir.go:
// the OTel SDK's FixedSizeReservoir); an exponential view's series keep
// none. It is RecordMapExemplar's second half for a handle, which knows
// its series: no tag lookup, no attachments map (the exemplar's
// Attachments are nil). A series b has not resolved (views changed since
// the record, which went to the new state's series before this reads
// them; an overflow series, which b does not cache; a freed one) gets no
// exemplar.
//
// Cost: the load of b's state and, per view, its kind; per view that
// keeps exemplars a series load and a bucket search and the store (a
// Distribution's) or the reservoir's mutex and count (the others'), plus
// once a clock read and one allocation (the Exemplar, 48 bytes), and on
// a series' first exemplar its entry. Safe for concurrent use: the
// latest store of a bucket wins.
func (b *Bound) KeepExemplar(v float64, trace [16]byte, span [8]byte) {
	st := b.st.Load()
	if st.subs == nil {
		return
	}
	slots := st.slots()
	var x *Exemplar
	for i := range slots {
		a := st.subs.Aggs[i]
		if a.kind != KindDistribution && !keepsReservoir(a.kind) {
			continue
		}
		s := slots[i].Load()
		if s == nil || s.freed() {
			continue
		}
		if x == nil {
			x = &Exemplar{Value: v, Time: time.Now().UnixNano(), TraceID: trace, SpanID: span}
		}
		if a.kind == KindDistribution {
			a.storeExemplar(s, v, x)
		} else {
			a.keepInReservoir(s, x)
		}
	}
}

func (a *Aggregator) storeExemplar(s *Series, v float64, ex *Exemplar) {
	e := a.exemplarEntry(s, true)
	e.buckets[bucketIndex(a.bounds, v)].Store(ex)
}

// exemplarEntry returns s's entry, creating it when create is set.
func (a *Aggregator) exemplarEntry(s *Series, create bool) *exemplarEntry {
	x := &a.ex
	if p := x.tab.Load(); p != nil && int(s.id) < len(*p) {
		if e := (*p)[s.id].Load(); e != nil && e.series == s {
			return e
		}
	}
	if !create {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var tab []atomic.Pointer[exemplarEntry]
	if p := x.tab.Load(); p != nil {
		tab = *p
	}
	if int(s.id) >= len(tab) {
		grown := make([]atomic.Pointer[exemplarEntry], max(2*len(tab), int(s.id)+1, 8))
		for i := range tab {
			grown[i].Store(tab[i].Load())
		}
		tab = grown
		x.tab.Store(&tab)
	}
	if e := tab[s.id].Load(); e != nil && e.series == s {
		return e
	}
	e := &exemplarEntry{series: s}
	if a.kind == KindDistribution {
		e.buckets = make([]atomic.Pointer[Exemplar], len(a.bounds)+1)
	} else {
		k := reservoirSize()
		e.buckets, e.res = make([]atomic.Pointer[Exemplar], k), newSampler(k)
	}
	tab[s.id].Store(e)
	return e
}

// Exemplars appends the latest exemplar of each of s's buckets (nil where
// none), len(bounds)+1 of them, to dst; for a Count's, a Sum's or a
// LastValue's series, the slots of its reservoir (nil where none yet), in
// slot order, and the call is a collection: it ends the reservoir's
// sampling cycle (reservoir.go). It appends nothing when s has none.
// Cost: a few atomic loads per bucket.
func (s *Series) Exemplars(dst []*Exemplar) []*Exemplar {
	if s.agg == nil || s.agg.kind != KindDistribution && !keepsReservoir(s.agg.kind) {
		return dst
	}
	e := s.agg.exemplarEntry(s, false)
	if e == nil {
		return dst
	}
	if e.res != nil {
		e.res.ended.Store(true)
	}
	for i := range e.buckets {
		dst = append(dst, e.buckets[i].Load())
	}
	return dst
}
