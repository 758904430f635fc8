package tag

import (
	"context"
	"strings"
	"unsafe"

	"github.com/zerostat/zerostat/internal/core"
)

// Tag is a key and its value.
type Tag struct {
	Key   Key
	Value string
}

// Map is an immutable set of tags, sorted by key. It is carried in a
// context.Context (NewContext, FromContext) and built by New. A Map is safe
// for concurrent use.
//
// Recording with the same Map again is the fast path: the series a Map
// resolves to in each view is remembered on the Map itself, so build a Map
// once per distinct tag combination (per route, per request type) and keep
// the context, rather than calling New for every request.
type Map core.TagMap

func (m *Map) core() *core.TagMap { return (*core.TagMap)(m) }

// Value returns the value of k and whether the map holds it. Safe on a nil
// Map.
func (m *Map) Value(k Key) (string, bool) {
	return m.core().Value(k.Name())
}

// Len returns the number of tags.
func (m *Map) Len() int { return len(m.core().Tags()) }

// Tags returns the tags, sorted by key name, in a new slice.
func (m *Map) Tags() []Tag {
	if m == nil {
		return nil
	}
	ts := m.core().SortedByName()
	out := make([]Tag, len(ts))
	for i, t := range ts {
		out[i] = Tag{Key: peerKeyOf(t.Key), Value: t.Value}
	}
	return out
}

// String returns the tags as "{ {k1 v1}{k2 v2} }", sorted by key, as
// OpenCensus prints a map (values without their metadata).
func (m *Map) String() string {
	if m == nil {
		return "nil"
	}
	var b strings.Builder
	b.WriteString("{ ")
	for _, t := range m.core().SortedByName() {
		b.WriteString("{")
		b.WriteString(t.Key)
		b.WriteString(" ")
		b.WriteString(t.Value)
		b.WriteString("}")
	}
	b.WriteString(" }")
	return b.String()
}

// Mutator is a change to a tag set, built (and validated) by Insert, Update,
// Upsert or Delete. Unlike OpenCensus's Mutator interface it is a plain
// value: applying it on the record path costs no interface call and no
// allocation. An invalid key or value is reported by New or
// stats.RecordWithTags, which apply it.
type Mutator core.Mutator

// Insert adds k=v unless the map already holds k.
func Insert(k Key, v string, mds ...Metadata) Mutator {
	return Mutator(core.MakeMutator(core.OpInsert, k.ki, v, ttlOf(mds)))
}

// Update sets the value of k if the map holds k.
func Update(k Key, v string, mds ...Metadata) Mutator {
	return Mutator(core.MakeMutator(core.OpUpdate, k.ki, v, ttlOf(mds)))
}

// Upsert sets k=v. Cost: a pass over v (validated and hashed); the four
// words of the result come back in registers. No allocation.
func Upsert(k Key, v string, mds ...Metadata) Mutator {
	return Mutator(core.MakeMutator(core.OpUpsert, k.ki, v, ttlOf(mds)))
}

// ttlOf is the TTL of a mutator's metadata: unlimited without any (the
// common case, checked inline).
func ttlOf(mds []Metadata) int8 {
	if len(mds) == 0 {
		return TTLUnlimitedPropagation.ttl
	}
	return createMetadatas(mds).ttl.ttl
}

// Delete removes k.
func Delete(k Key) Mutator {
	return Mutator(core.MakeMutator(core.OpDelete, k.ki, "", core.TTLNoPropagation))
}

// New returns a context whose tag map is the map of ctx with the mutators
// applied in order. On an invalid mutator it returns ctx unchanged and the
// error (wrapping ErrInvalidKey or ErrInvalidValue, naming the input).
//
// Cost: when the same mutators were applied to the same tags recently (by
// any goroutine), the map is found by them (a hash of their precomputed
// hashes and a compare of each, see stats.RecordWithTags), and the one
// allocation is the 24-byte context; Record then finds the series the map
// resolved before. Otherwise a sorted insert per mutator, then one
// allocation for up to 16 tags (two for more): a tag set built recently is
// reused from a bounded cache of 4096 maps (the 24-byte context again); a
// new one is one larger allocation (the context, the map and its tags
// together), and when it recurs a copy is cached (a second allocation,
// once). Recording with a new Map resolves each view's series by hash.
// Safe for concurrent use.
func New(ctx context.Context, mutator ...Mutator) (context.Context, error) {
	for i := range mutator {
		if m := (*core.Mutator)(&mutator[i]); !m.Valid() {
			return ctx, m.Err()
		}
	}
	parent := core.FromContext(ctx)
	muts := coreMutators(mutator)
	m, h := core.Derived(parent, muts)
	if m != nil {
		return core.NewContext(ctx, m), nil
	}
	// A stack buffer sized to the result: zeroing 16 tags costs more than
	// building 2.
	switch n := len(parent.Tags()) + len(mutator); {
	case n <= 4:
		var buf [4]core.Tag
		return core.DeriveContext(ctx, parent, muts, h, buf[:0]), nil
	case n <= 8:
		var buf [8]core.Tag
		return core.DeriveContext(ctx, parent, muts, h, buf[:0]), nil
	case n <= 16:
		var buf [16]core.Tag
		return core.DeriveContext(ctx, parent, muts, h, buf[:0]), nil
	}
	return core.DeriveContext(ctx, parent, muts, h, nil), nil
}

// coreMutators returns ms as the core mutators they are defined as,
// without copying.
func coreMutators(ms []Mutator) []core.Mutator {
	return unsafe.Slice((*core.Mutator)(unsafe.SliceData(ms)), len(ms))
}
