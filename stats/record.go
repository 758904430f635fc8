package stats

import (
	"context"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/tag"
)

// maxStackTags is how many tags RecordWithTags builds on the stack; a
// larger result is built on the heap.
const maxStackTags = 8

// Record records the measurements against the tags of ctx, into every view
// registered over their measures.
//
// Cost: for a measure with no view, one atomic load and a branch. Otherwise
// one context lookup per call (none when no view of the measures has tag
// keys), then per view an atomic load (the series the
// tag map resolved to before, cached on the map) and the atomic update of
// that series. No allocation, no lock, no channel; safe for concurrent use.
// A zero Measurement is ignored; a nil ctx records without tags.
func Record(ctx context.Context, ms ...Measurement) {
	var tm *core.TagMap
	loaded := false
	for i := range ms {
		if ms[i].desc == nil {
			continue
		}
		subs := ms[i].desc.Subs()
		if subs == nil {
			continue
		}
		if subs.Tagged && !loaded {
			// Only views keyed by tags need the context's map: without
			// them, the record skips the lookup (an interface call).
			tm, loaded = core.FromContext(ctx), true
		}
		for _, a := range subs.Aggs {
			a.RecordMap(tm, ms[i].v)
		}
	}
}

// RecordWithTags records the measurements against the tags of ctx changed
// by mutators, as if by tag.New, without building a tag.Map or a context:
// with up to 8 resulting tags the tag set lives on the stack. A tag set
// that recurs is found in the bounded cache of recent tag maps tag.New
// uses (a hash of the tags' hashes and a compare), and recorded through
// that map's per-view series cache; a new one resolves each view's series
// by hashing the values it keys on. Cost: no allocation, except one when a
// tag set is seen the second time in a row of its cache slot (it is then
// cached).
//
// It returns the first invalid mutator's error, and then records nothing.
func RecordWithTags(ctx context.Context, mutators []tag.Mutator, ms ...Measurement) error {
	for i := range mutators {
		if err := (*core.Mutator)(&mutators[i]).Err(); err != nil {
			return err
		}
	}
	if len(mutators) == 0 {
		Record(ctx, ms...)
		return nil
	}
	var (
		buf  [maxStackTags]core.Tag
		tags []core.Tag
		tm   *core.TagMap
	)
	for i := range ms {
		if ms[i].desc == nil {
			continue
		}
		subs := ms[i].desc.Subscribers()
		if subs == nil {
			continue
		}
		if tags == nil {
			tags = append(buf[:0], core.FromContext(ctx).Tags()...)
			for j := range mutators {
				tags = (*core.Mutator)(&mutators[j]).Apply(tags)
			}
			tm = core.CachedTagMap(tags)
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
	return nil
}

// Options are the arguments of RecordWithOptions. Unlike OpenCensus's
// functional options they are plain values, so building them costs nothing.
type Options struct {
	mutators     []tag.Mutator
	measurements []Measurement
	hasTags      bool
	hasMs        bool
}

// WithTags sets the tag mutators to apply to the context's tags.
func WithTags(mutators ...tag.Mutator) Options {
	return Options{mutators: mutators, hasTags: true}
}

// WithMeasurements sets the measurements to record.
func WithMeasurements(measurements ...Measurement) Options {
	return Options{measurements: measurements, hasMs: true}
}

// RecordWithOptions records the measurements of the options against the
// tags of ctx changed by their mutators (later options of one kind replace
// earlier ones, as in OpenCensus). Same cost and errors as RecordWithTags.
func RecordWithOptions(ctx context.Context, ros ...Options) error {
	var (
		muts []tag.Mutator
		ms   []Measurement
	)
	for i := range ros {
		if ros[i].hasTags {
			muts = ros[i].mutators
		}
		if ros[i].hasMs {
			ms = ros[i].measurements
		}
	}
	return RecordWithTags(ctx, muts, ms...)
}
