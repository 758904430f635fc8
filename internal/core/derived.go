package core

import (
	"context"
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// Derived tag maps: the per-request shortcut of tag.New and
// stats.RecordWithTags.
//
// A handler that calls tag.New(ctx, Upsert(route, r), Upsert(status, s))
// per request applies the same few mutator lists to the same parent map
// (none, or one tag.New built before and the map cache returned). Building
// the result (copy the parent's tags, a sorted insert per mutator, hash the
// set, compare it with the map cache's entry) costs several hundred
// instructions; finding it again by the mutators costs a hash of their
// precomputed hashes and one compare per mutator. derivedCache maps (parent,
// mutators) to the cached result map, whose per-view series cache is warm.
//
// The parent is keyed by its tags (the SetHash NewTagContext stored on it,
// confirmed by comparing the tags with a copy the entry keeps), not by its
// address: a parent built per request finds the entry its predecessors
// left, and the cache keeps no request's map alive. An entry is installed
// on the second miss in a row of its slot (derivedSeen), as the map cache
// does, so that a key seen once costs no allocation.
//
// A parent that is a map of the map cache (what tag.New returns for a tag
// set that recurs, the same map to every request) is also kept by the
// entry (pm), and found by its address: no compare of its tags. Its tags
// are immutable and the map is no request's, so keeping it is safe; it
// pins no request, only that map and the few series its per-view cache
// holds, until the slot is reused. A hit that had to compare the bytes of
// a cached parent's tags (the entry was installed while the parent's tag
// set was still a request's own map, or the map cache has since built
// another map of it) republishes the entry with that parent: one
// allocation, once per change of the cached map, after which the compare
// is a pointer's. Without it, the compare ran over the tags' bytes on
// every record until the slot was reused: a RecordWithTags of 2 mutators
// on a context of 2 tags took 81-88 ns against 53-68 now (BenchmarkRecord
// recordwithtags_2mut, the runs after the first in one process, pinned,
// the project's VM).
//
// The cache is bounded (derivedSize entries, each of at most
// maxDerivedMutators mutators), lock-free and safe for concurrent use:
// entries are immutable once published; racing installs each store a
// valid entry and the last one stays. An entry keeps a copy of its
// parent's tags (or the parent map itself when that is a map of the map
// cache, never a request's own map) and its result map, a map of the map
// cache, alive until its slot is reused.

// derivedSize is the number of cached derivations: a power of two. 8 KiB of
// pointers plus 8 KiB of seen hashes.
const derivedSize = 1024

// maxDerivedMutators bounds the mutator lists the cache keeps: the map
// cache's bound on a tag set (maxCachedTags), so that any list whose
// result the map cache can hold is found again.
const maxDerivedMutators = maxCachedTags

type derivation struct {
	hash  uint64
	pm    *TagMap // the parent when it is a map of the map cache, or nil
	ptags []Tag   // the parent's tags (pm's own when pm is set)
	m     *TagMap
	muts  []Mutator
}

var (
	derivedCache [derivedSize]atomic.Pointer[derivation]
	derivedSeen  [derivedSize]atomic.Uint64
)

// derivedHash mixes the parent's tag set hash (SetHash) and the mutators'
// precomputed hashes (their keys', and their values' with their headers:
// op, TTL). The terms are independent, so the CPU
// overlaps their multiplies; equal hashes are confirmed by comparing.
func derivedHash(ph uint64, muts []Mutator) uint64 {
	h := (ph ^ uint64(len(muts))) * fnvPrime
	for i := range muts {
		m := &muts[i]
		h += (bits.RotateLeft64(m.k.Hash, i) ^ bits.RotateLeft64(m.w, 31)) * fnvPrime
	}
	return h ^ h>>29
}

// sameMutators reports whether two mutator lists are equal, with the
// strings compared by their bytes only when they do not share them.
func sameMutators(a, b []Mutator) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.k != y.k {
			// Interned keys (see InternKey) are equal by pointer, but
			// past the table's bound two keys of one name are not.
			if x.k.Hash != y.k.Hash || x.k.Name != y.k.Name {
				return false
			}
		}
		if x.w != y.w || len(x.val) != len(y.val) {
			return false
		}
		if unsafe.StringData(x.val) != unsafe.StringData(y.val) && x.val != y.val {
			return false
		}
	}
	return true
}

// Derived returns the cached map of parent's tags (nil: none) with muts
// (valid, see Mutator.Valid) applied, or nil on a miss; h is then the key
// to pass to RememberDerived. Cost: a hash of the mutators' hashes, an
// atomic load, a compare per mutator and, unless parent is the cached map
// the entry keeps (see the top of this file), a compare per parent tag. No
// allocation, except once when a hit republishes its entry for a new
// cached parent; safe for concurrent use.
func Derived(parent *TagMap, muts []Mutator) (m *TagMap, h uint64) {
	ph, ok := parent.setHash()
	if !ok || len(muts) > maxDerivedMutators {
		return nil, 0
	}
	h = derivedHash(ph, muts)
	if d := derivedCache[h&(derivedSize-1)].Load(); d != nil && d.hash == h && sameMutators(d.muts, muts) {
		if len(d.ptags) == 0 && parent == nil || d.pm == parent && parent != nil {
			return d.m, h
		}
		if same, shared := compareTags(d.ptags, parent.Tags()); same {
			if !shared && parent.cached() {
				keepParent(d, parent)
			}
			return d.m, h
		}
	}
	return nil, h
}

// keepParent republishes d, found by comparing the tags of parent, a map
// of the map cache other than the one d keeps, to keep parent instead (see
// the top of this file). Not inlined: Derived calls it only off its fast
// path.
//
//go:noinline
func keepParent(d *derivation, parent *TagMap) {
	derivedCache[d.hash&(derivedSize-1)].CompareAndSwap(d, &derivation{hash: d.hash, pm: parent, ptags: parent.tags, m: d.m, muts: d.muts})
}

// setHash returns the SetHash of m's tags when m carries it (a map built
// by NewTagContext, or the empty set of a nil map) and whether it does.
func (m *TagMap) setHash() (uint64, bool) {
	if m == nil {
		return 0, true
	}
	return m.hash, m.hash != 0 || len(m.tags) == 0
}

// cached reports whether the map cache holds m: a map no request context
// owns, which an entry may keep.
func (m *TagMap) cached() bool {
	return m.hash != 0 && mapCache[m.hash&(mapCacheSize-1)].Load() == m
}

// RememberDerived records, after a miss of Derived(parent, muts) that
// returned h, that the result is m, a map of the map cache (CachedTagMap
// or NewTagContext's hit). It keeps nothing for a parent without a set hash
// (see setHash), for no result, or for no or too many mutators, and
// allocates the entry (a copy of the mutators, and of the parent's tags
// unless the parent is a map of the map cache, which the entry then keeps)
// only on the second miss in a row of its slot. Safe for concurrent use.
func RememberDerived(parent *TagMap, muts []Mutator, h uint64, m *TagMap) {
	if _, ok := parent.setHash(); !ok || m == nil || len(muts) == 0 || len(muts) > maxDerivedMutators {
		return
	}
	slot := h & (derivedSize - 1)
	if derivedSeen[slot].Load() != h {
		derivedSeen[slot].Store(h)
		return
	}
	d := &derivation{hash: h, m: m, muts: append([]Mutator(nil), muts...)}
	if parent != nil && parent.cached() {
		d.pm, d.ptags = parent, parent.tags
	} else {
		d.ptags = append([]Tag(nil), parent.Tags()...)
	}
	derivedCache[slot].Store(d)
}

// DeriveContext returns a child of ctx carrying the tags of parent (the
// map of ctx) with muts (valid) applied, as tag.New does after a miss of
// Derived(parent, muts) that returned h: built in buf (which does not
// escape) by NewTagContext, and remembered by the derived cache when the
// result is a map of the map cache. Safe for concurrent use.
func DeriveContext(ctx context.Context, parent *TagMap, muts []Mutator, h uint64, buf []Tag) context.Context {
	tags := AppendTags(buf, parent.Tags())
	for i := range muts {
		tags = muts[i].Apply(tags)
	}
	c := NewTagContext(ctx, tags)
	if tc, ok := c.(*tagCtx); ok && tc.m.cached() {
		RememberDerived(parent, muts, h, tc.m)
	}
	return c
}
