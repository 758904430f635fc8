package core

import (
	"context"
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// Tag maps in contexts.
//
// A request handler that calls tag.New per request with the same few tag
// sets (a route, a method, a status) should not pay for a new map, nor for
// resolving its series again, each time. NewTagContext therefore looks the
// tag set up in mapCache, a direct-mapped cache of recently built maps
// (keyed by SetHash, checked by comparing the tags): on a hit the result is
// the cached map, whose per-view series cache is already warm, in a 24-byte
// context (one allocation). On a miss the map, its tags and the context are
// one allocation; that map holds its parent context, so it is not cached.
// The second miss of a tag set in a row of its slot (seen) caches a
// stand-alone copy (a second allocation, once), so tag sets that recur are
// cached and one-off ones (a user id as a tag value) only churn seen.
//
// The cache is bounded (mapCacheSize maps, each of at most
// maxCachedTags tags) and lock-free: concurrent misses of one slot each
// store a valid map, the last one stays. A cached map's series cache may
// keep series of an unregistered view (and their interned values) alive
// until the slot is reused: at most 8 series per cached map.

// mapCacheSize is the number of cached tag maps: a power of two, enough for
// the route × method × status sets of a large service (a miss costs one
// allocation more, nothing else). 32 KiB of pointers plus 32 KiB of seen
// hashes.
const mapCacheSize = 4096

// maxCachedTags bounds the maps the cache holds, so that it cannot pin
// large tag sets.
const maxCachedTags = 16

var (
	mapCache [mapCacheSize]atomic.Pointer[TagMap]
	mapSeen  [mapCacheSize]atomic.Uint64
)

type ctxKey struct{}

// tagCtx is a child context carrying a tag map: 24 bytes, half of what
// context.WithValue allocates. Value answers the tag map key itself and
// passes any other key to the parent.
type tagCtx struct {
	context.Context
	m *TagMap
}

func (c *tagCtx) Value(key any) any {
	if _, ok := key.(ctxKey); ok {
		return c.m
	}
	return c.Context.Value(key)
}

// String describes the context as context.WithValue's String does.
func (c *tagCtx) String() string { return "zerostat tag context" }

// ownCtx is a child context carrying a map of its own, allocated with it
// (NewTagContext's miss; mapCtx2 and the others add the tags' array). The
// map is at a fixed offset from the context, so that a record computes
// the address of its series cache instead of loading it: with many cold
// contexts (many tag combinations), it reads one cache line of the
// context, not the context and then the map's line. The map comes first:
// its own cell and tag word (mapcell.go) then share the object's first
// line with the nil check of a record's type switch.
type ownCtx struct {
	TagMap
	context.Context
}

// rootCtx is an ownCtx whose parent is context.Background() or
// context.TODO(): its own type, so that a record tells it from the others
// by the type word alone, and only its records look at the map's own cell
// (mapcell.go). The same memory as the ownCtx it converts.
type rootCtx struct{ ownCtx }

func (c *ownCtx) Value(key any) any {
	if _, ok := key.(ctxKey); ok {
		return &c.TagMap
	}
	return c.Context.Value(key)
}

// String describes the context as context.WithValue's String does.
func (c *ownCtx) String() string { return "zerostat tag context" }

// FromContext returns the TagMap carried by ctx, or nil. A nil ctx has none.
// Cost: for a context tag.New returned, a type check and, for one that
// refers to a cached map, a load (what its Value would answer, without
// the interface call); otherwise one context.Value lookup.
func FromContext(ctx context.Context) *TagMap {
	switch c := ctx.(type) {
	case *ownCtx:
		return &c.TagMap
	case *rootCtx:
		return &c.TagMap
	case *tagCtx:
		return c.m
	}
	return fromValue(ctx)
}

// fromValue is FromContext's lookup through ctx.Value; not inlined, so
// that FromContext is.
//
//go:noinline
func fromValue(ctx context.Context) *TagMap {
	if ctx == nil {
		return nil
	}
	m, _ := ctx.Value(ctxKey{}).(*TagMap)
	return m
}

// NewContext returns a child of ctx carrying m (nil hides the tags of
// ctx). Cost: one 24-byte allocation.
func NewContext(ctx context.Context, m *TagMap) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return &tagCtx{Context: ctx, m: m}
}

// SetHash returns the hash of a tag set (internal order): its keys, values
// and TTLs, from the hashes the tags carry. The tags are mixed
// independently and summed (the order is canonical already), so the CPU
// overlaps the multiplies: a few ns for 4 tags. Equal hashes are confirmed
// by comparing the tags.
func SetHash(tags []Tag) uint64 {
	h := uint64(len(tags))
	for i := range tags {
		t := &tags[i]
		h += (t.KeyHash ^ bits.RotateLeft64(t.ValueHash, 31) ^ uint64(uint8(t.TTL))) * fnvPrime
	}
	return h ^ h>>29
}

// sameTags reports whether two tag sets (internal order) are equal; see
// compareTags.
func sameTags(a, b []Tag) bool {
	same, _ := compareTags(a, b)
	return same
}

// compareTags reports whether two tag sets (internal order) are equal, and
// whether every string of a shares its bytes with b's. The common case,
// tags whose strings share their bytes (from one literal, one interned
// value, one map), is one branch per tag on a combined compare; strings
// with other bytes are compared in full.
func compareTags(a, b []Tag) (same, shared bool) {
	if len(a) != len(b) {
		return false, false
	}
	shared = true
	for i := range a {
		x, y := &a[i], &b[i]
		d := (x.KeyHash ^ y.KeyHash) | (x.ValueHash ^ y.ValueHash) | uint64(uint8(x.TTL^y.TTL)) |
			uint64(len(x.Key)^len(y.Key)) | uint64(len(x.Value)^len(y.Value))
		if d != 0 {
			return false, false
		}
		if unsafe.StringData(x.Key) != unsafe.StringData(y.Key) || unsafe.StringData(x.Value) != unsafe.StringData(y.Value) {
			if x.Key != y.Key || x.Value != y.Value {
				return false, false
			}
			shared = false
		}
	}
	return true, shared
}

// The one-allocation forms of a context with a new map: the context, the
// map and its tags together, by size class (240, 352, 576 and 1024 bytes).
type (
	mapCtx2 struct {
		ownCtx
		arr [2]Tag
	}
	mapCtx4 struct {
		ownCtx
		arr [4]Tag
	}
	mapCtx8 struct {
		ownCtx
		arr [8]Tag
	}
	mapCtx16 struct {
		ownCtx
		arr [16]Tag
	}
)

// CachedTagMap returns the cached map of tags (internal order, unique
// keys), caching a copy when tags were the last miss of their slot, or nil:
// RecordWithTags then records through the map's per-view series cache
// instead of hashing the tags for each view. Cost: a hash of the tag
// hashes and a compare of the tags; one allocation on a second miss in a
// row (a tag set that recurs), none otherwise. Safe for concurrent use.
func CachedTagMap(tags []Tag) *TagMap {
	if len(tags) > maxCachedTags {
		return nil
	}
	return cachedMap(tags, SetHash(tags))
}

// cachedMap is CachedTagMap for tags of hash h (SetHash). A miss marks h
// seen in its slot and returns nil.
func cachedMap(tags []Tag, h uint64) *TagMap {
	slot := h & (mapCacheSize - 1)
	if m := mapCache[slot].Load(); m != nil && m.hash == h && sameTags(m.tags, tags) {
		return m
	}
	if mapSeen[slot].Load() == h {
		// Seen just before: cache a map of its own, which holds no context.
		m := &TagMap{tags: append([]Tag(nil), tags...), hash: h}
		mapCache[slot].Store(m)
		return m
	}
	mapSeen[slot].Store(h)
	return nil
}

// NewTagContext returns a child of parent carrying a map of a copy of tags
// (internal order, unique keys), reusing a cached map of the same tags when
// there is one (see the top of this file). Cost: one allocation (24 bytes
// on a cache hit; the map and tags with it on a miss), two for the second
// miss of a tag set and for more than 16 tags. Safe for concurrent use.
func NewTagContext(parent context.Context, tags []Tag) context.Context {
	if parent == nil {
		parent = context.Background()
	}
	if len(tags) > maxCachedTags {
		return NewContext(parent, &TagMap{tags: append([]Tag(nil), tags...)})
	}
	h := SetHash(tags)
	if m := cachedMap(tags, h); m != nil {
		return &tagCtx{Context: parent, m: m}
	}
	var c *ownCtx
	switch n := len(tags); {
	case n <= 2:
		x := new(mapCtx2)
		x.tags = x.arr[:n:n]
		c = &x.ownCtx
	case n <= 4:
		x := new(mapCtx4)
		x.tags = x.arr[:n:n]
		c = &x.ownCtx
	case n <= 8:
		x := new(mapCtx8)
		x.tags = x.arr[:n:n]
		c = &x.ownCtx
	default:
		x := new(mapCtx16)
		x.tags = x.arr[:n:n]
		c = &x.ownCtx
	}
	copy(c.tags, tags)
	c.hash = h
	c.Context = parent
	if parent == context.Background() || parent == context.TODO() {
		// A context kept, most likely: its map's cell keeps nothing else
		// alive (mapcell.go).
		c.takeOwnCell()
		return (*rootCtx)(unsafe.Pointer(c))
	}
	return c
}
