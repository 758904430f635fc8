package stats

import (
	"context"
	"slices"
	"unsafe"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/tag"
)

// maxStackTags is how many tags RecordWithTags builds on the stack (the
// bound of the cache of recent tag maps); a larger result is built on the
// heap.
const maxStackTags = 16

// Record records the measurements against the tags of ctx, into every view
// registered over their measures.
//
// Cost: for a measure with no view, one atomic load and a branch. For
// views with no tag keys, no context lookup: per view the load of the
// series cached on the measure's subscriber list and its update (one
// atomic add for a Count or a Sum of an Int64 measure). Otherwise one
// context lookup per measurement, then per view an atomic load (the
// series the tag map resolved to before, cached on the map) and the
// atomic update of that series. The lookup is a type check for a context
// tag.New returned, a ctx.Value walk for one that wraps it (a
// context.WithValue made after tag.New: 8 measures with 8 tags cost 114
// ns through one wrapper, 80 ns without; pinned, n=6).
//
// Record is inlined into its caller: one call per measurement down to the
// series, with the measure and the value in registers (a counter without
// tags over a Sum view, pinned, n=6: 9.35 -> 8.45 ns, against 6.04 ns for
// one atomic add). No allocation, no lock, no channel; safe for
// concurrent use. A zero Measurement is ignored; a nil ctx records
// without tags.
func Record(ctx context.Context, ms ...Measurement) {
	for i := range ms {
		core.RecordOne(ctx, ms[i].m, ms[i].v)
	}
}

// RecordWithTags records the measurements against the tags of ctx changed
// by mutators, as if by tag.New, without building a tag.Map or a context.
// When the same mutators were applied to the same tags recently (by any
// goroutine), the result is found by them, in a bounded cache of 1024
// derivations (a hash of the mutators' precomputed hashes, a compare of
// each mutator and of each parent tag, or of the parent's address when it
// is a map of tag.New's map cache), and recorded through that map's per-view
// series cache (docs/performance.md, recordwithtags_2mut and the request
// rows). Otherwise the tag set is built on the stack (up to 16 tags),
// looked up in the bounded cache of recent tag maps tag.New uses, and a
// new one resolves each view's series by hashing the values it keys on.
// Cost: no allocation, except when a tag set or a derivation is seen the
// second time in a row of its cache slot (it is then cached, once), and
// once when a derivation is found for another cached map of its parent's
// tags (it is then kept with that map).
//
// It returns the first invalid mutator's error, and then records nothing.
func RecordWithTags(ctx context.Context, mutators []tag.Mutator, ms ...Measurement) error {
	for i := range mutators {
		if m := (*core.Mutator)(&mutators[i]); !m.Valid() {
			return m.Err()
		}
	}
	if len(mutators) == 0 {
		Record(ctx, ms...)
		return nil
	}
	if !anyView(ms) {
		// Nothing aggregates these measures: no context lookup, no
		// derived-map lookup, no tags built.
		return nil
	}
	parent := core.FromContext(ctx)
	muts := unsafe.Slice((*core.Mutator)(unsafe.SliceData(mutators)), len(mutators))
	tm, h := core.Derived(parent, muts)
	if tm != nil {
		recordMap(tm, ms)
		return nil
	}
	// A stack buffer sized to the result: zeroing 8 tags (448 bytes) costs
	// more than building 4.
	switch n := len(parent.Tags()) + len(mutators); {
	case n <= 4:
		var buf [4]core.Tag
		recordWithTags(buf[:0], parent, muts, h, ms)
	case n <= 8:
		var buf [8]core.Tag
		recordWithTags(buf[:0], parent, muts, h, ms)
	case n <= maxStackTags:
		var buf [maxStackTags]core.Tag
		recordWithTags(buf[:0], parent, muts, h, ms)
	default:
		recordWithTags(nil, parent, muts, h, ms)
	}
	return nil
}

// anyView reports whether some measurement of ms has a view. Cost: one
// atomic load per measurement up to the first that has.
func anyView(ms []Measurement) bool {
	for i := range ms {
		if ms[i].desc() != nil && ms[i].desc().Subs() != nil {
			return true
		}
	}
	return false
}

// recordMap records the measurements for the tags of tm.
func recordMap(tm *core.TagMap, ms []Measurement) {
	for i := range ms {
		if ms[i].desc() == nil {
			continue
		}
		for _, a := range ms[i].desc().Subscribers() {
			a.RecordMap(tm, ms[i].v)
		}
	}
}

// recordWithTags is RecordWithTags after a miss of the derived-map cache
// (h is its key): it builds the tag set in buf (which does not escape)
// when some measurement has a view, and records through the map cache's
// map of it when there is one, which the derived cache then remembers.
func recordWithTags(buf []core.Tag, parent *core.TagMap, muts []core.Mutator, h uint64, ms []Measurement) {
	var (
		tags  []core.Tag
		tm    *core.TagMap
		built bool
	)
	for i := range ms {
		if ms[i].desc() == nil {
			continue
		}
		subs := ms[i].desc().Subscribers()
		if subs == nil {
			continue
		}
		if !built {
			built = true
			tags = core.AppendTags(buf, parent.Tags())
			for j := range muts {
				tags = muts[j].Apply(tags)
			}
			tm = core.CachedTagMap(tags)
			core.RememberDerived(parent, muts, h, tm)
		}
		if tm != nil {
			for _, a := range subs {
				a.RecordMap(tm, ms[i].v)
			}
			continue
		}
		for _, a := range subs {
			a.RecordTags(tags, ms[i].v)
		}
	}
}

// Recorder records measurements into a set of views other than the
// default ones: a view.Meter is one (OpenCensus's stats.Recorder).
// RecordWithOptions with WithRecorder calls its Record with the tags of the
// context changed by the mutators, the []Measurement to record and the
// attachments (nil when none), through an interface call; the default
// path (no recorder) makes none.
type Recorder interface {
	// Record records the measurements (a []Measurement) with the tags and
	// attachments.
	Record(*tag.Map, interface{}, map[string]interface{})
}

// Options are the arguments of RecordWithOptions. Unlike OpenCensus's
// functional options they are plain values, so building them costs nothing.
type Options struct {
	mutators     []tag.Mutator
	measurements []Measurement
	// ext holds what WithAttachments and WithRecorder set, one pointer
	// further away: these escape (into exemplars, into an interface
	// call), and escape analysis, which tells levels of indirection apart
	// but not fields, then lets the measurements stay on the caller's
	// stack.
	ext *optionsExt
	set uint8 // which of the fields this option sets
}

type optionsExt struct {
	attachments map[string]interface{}
	recorder    Recorder
}

const (
	setTags = 1 << iota
	setMeasurements
	setAttachments
	setRecorder
)

// WithTags sets the tag mutators to apply to the context's tags.
func WithTags(mutators ...tag.Mutator) Options {
	return Options{mutators: mutators, set: setTags}
}

// WithMeasurements sets the measurements to record.
func WithMeasurements(measurements ...Measurement) Options {
	return Options{measurements: measurements, set: setMeasurements}
}

// WithAttachments sets the exemplar attachments of the measurements (as
// OpenCensus's metricdata.Attachments, which converts implicitly): a
// distribution view keeps the latest recorded value of each bucket with its
// attachments and time as the bucket's exemplar
// (view.DistributionData.ExemplarsPerBucket). Recording with attachments
// costs one allocation per measurement and a clock read, on top of the
// record; the map is kept, not copied: do not modify it afterwards. An
// empty map is no attachments, as in OpenCensus: the record keeps no
// exemplar (the bucket's earlier one stays).
func WithAttachments(attachments map[string]interface{}) Options {
	return Options{ext: &optionsExt{attachments: attachments}, set: setAttachments}
}

// WithRecorder records the measurements into r (a view.Meter, say) rather
// than into the default meter's views.
func WithRecorder(r Recorder) Options {
	return Options{ext: &optionsExt{recorder: r}, set: setRecorder}
}

// RecordWithOptions records the measurements of the options against the
// tags of ctx changed by their mutators (later options of one kind replace
// earlier ones, as in OpenCensus). Same cost and errors as RecordWithTags
// without attachments, recorder or span context; see WithAttachments,
// WithRecorder and SetSpanContextFunc for what those add.
func RecordWithOptions(ctx context.Context, ros ...Options) error {
	var (
		muts []tag.Mutator
		ms   []Measurement
		att  map[string]interface{}
		rec  Recorder
	)
	for i := range ros {
		r := &ros[i]
		if r.set&setTags != 0 {
			muts = r.mutators
		}
		if r.set&setMeasurements != 0 {
			ms = r.measurements
		}
		if r.set&setAttachments != 0 {
			att = r.ext.attachments
		}
		if r.set&setRecorder != 0 {
			rec = r.ext.recorder
		}
	}
	if rec != nil {
		return recordTo(ctx, rec, muts, ms, att)
	}
	if len(att) == 0 && spanFunc.Load() == nil {
		return RecordWithTags(ctx, muts, ms...)
	}
	return recordExemplars(ctx, muts, ms, att)
}

// recordTo hands the record to o.recorder.
// The recorder gets a copy of the measurements (it may keep them, and the
// caller's slice then needs no heap allocation on the default path).
func recordTo(ctx context.Context, r Recorder, muts []tag.Mutator, ms []Measurement, att map[string]interface{}) error {
	if len(ms) == 0 {
		return nil
	}
	if len(muts) > 0 {
		var err error
		if ctx, err = tag.New(ctx, muts...); err != nil {
			return err
		}
	}
	r.Record(tag.FromContext(ctx), slices.Clone(ms), withSpan(ctx, att))
	return nil
}
