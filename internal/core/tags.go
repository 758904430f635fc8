package core

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// MaxTagLength is the longest key name or value the OpenCensus tag model
// allows (tag/validate.go in go.opencensus.io: maxKeyLength = 255).
const MaxTagLength = 255

// Propagation TTLs, with OpenCensus's values (tag/metadata.go).
const (
	TTLNoPropagation        int8 = 0
	TTLUnlimitedPropagation int8 = -1
)

// Tag is one key/value pair of a TagMap, with the hashes of both (computed
// once, when the key or the mutator is built) so that the record path
// compares and combines integers instead of strings.
type Tag struct {
	Key       string
	Value     string
	KeyHash   uint64
	ValueHash uint64
	TTL       int8
}

// less orders tags by key hash, then key name: the internal order of tag
// sets and view keys. Outputs meant for people (String, Encode, rows) sort
// by name instead.
func less(ah uint64, a string, bh uint64, b string) bool {
	return ah < bh || (ah == bh && a < b)
}

// FNV-1a's prime: the multiplier of the hashes that mix other hashes
// (SetHash, derivedHash, combine), and fnvOffset their start.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// hashSeed makes HashString differ from process to process, as Go's maps
// and hash/maphash do, so that the tag values a service receives (from
// propagated tags, say) cannot be picked to collide in its series tables.
// No hash is stored or sent anywhere.
var hashSeed = rand.Uint64()

// hashMask keeps the 56 bits of a HashString.
const hashMask = 1<<hdrShift - 1

// Multipliers of HashString (wyhash's).
const (
	hk0 = 0xa0761d6478bd642f
	hk1 = 0xe7037ed1a0b428db
)

// HashString returns the hash of s (the tag keys' and values' hash): see
// hashPrintable. Its top byte is 0 (hashMask), where a Mutator keeps its
// header beside its value's hash. No allocation.
func HashString(s string) uint64 {
	h, _ := hashPrintable(s)
	return h
}

// hashPrintable returns HashString(s) and whether every byte of s is
// printable ASCII (0x20 to 0x7e), from one read of s. After wyhash: a
// string of up to 16 bytes is read as two words, possibly overlapping (or
// as two 4-byte halves, or three bytes), and mixed by one 64x64->128-bit
// multiply whatever its length, with the length in the seed (for 9 to 16
// bytes the seed and length are mixed first, by a multiply beside the
// loads); a longer one is mixed 16 bytes at a time, then once more. The
// printable check takes the same words, eight bytes at a time. Cost, as
// tag.Upsert measured it (BenchmarkUpsert, pinned, n=6): the same as
// byte-at-a-time FNV-1a for 3 bytes, a third less for 12, half for 28.
func hashPrintable(s string) (uint64, bool) {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	n := len(b)
	seed := hashSeed ^ uint64(n) // the length: overlapping reads
	var x, y, bad uint64
	switch {
	case n > 16:
		i := 0
		for ; n-i > 16; i += 16 {
			p, q := le.Uint64(b[i:]), le.Uint64(b[i+8:])
			bad |= unprintable(p) | unprintable(q)
			seed = mix(p^hk1, q^seed)
		}
		x, y = le.Uint64(b[n-16:]), le.Uint64(b[n-8:])
		bad |= unprintable(x) | unprintable(y)
		return mix(hk1^uint64(n), mix(x^seed^hk1, y^seed^hk0)) & hashMask, bad == 0
	case n > 8:
		x, y = le.Uint64(b), le.Uint64(b[n-8:])
		bad = unprintable(x) | unprintable(y)
		// Both words are the string's: a length XORed into both as is
		// would let x^d, y^d of another length collide for any seed; the
		// length mixed with the seed (a multiply beside the loads) keeps
		// such pairs unknowable.
		seed = mix(seed, hk1)
	case n >= 4:
		x = uint64(le.Uint32(b))<<32 | uint64(le.Uint32(b[n-4:]))
		bad = unprintable(x)
	default:
		h, bad := hashShort(s)
		return h, bad == 0
	}
	// Up to 16 bytes: one multiply.
	return mix(x^seed^hk1, y^seed^hk0) & hashMask, bad == 0
}

// hashShort is hashPrintable for a string of up to 3 bytes (read as three
// bytes, the middle one possibly twice), small enough to inline where a
// call would cost as much: MakeMutator, for a value such as "GET" or
// "200".
func hashShort(s string) (h, bad uint64) {
	x := uint64(0x202020) // "": as three spaces (the length tells them apart)
	if len(s) > 0 {
		x = uint64(s[0])<<16 | uint64(s[len(s)>>1])<<8 | uint64(s[len(s)-1])
	}
	seed := hashSeed ^ uint64(len(s))
	hi, lo := bits.Mul64(x^seed^hk1, seed^hk0)
	// unprintable's test, on the three bytes.
	return (hi ^ lo) & hashMask, ((x-0x202020)&^x | (x + 0x010101) | x) & 0x808080
}

// unprintable returns a word whose byte i has its top bit set when byte i
// of w is below 0x20 (w-0x20 borrows into its top bit, which w's own is
// not) or above 0x7e (w+1 carries into it, or it is set), and 0 when
// every byte is printable. A borrow or carry between bytes happens only
// past a byte that is already flagged.
func unprintable(w uint64) uint64 {
	const ones, tops = 0x0101010101010101, 0x8080808080808080
	return ((w-0x20*ones)&^w | (w + ones) | w) & tops
}

var le = binary.LittleEndian

// mix folds the 128-bit product of a and b into 64 bits.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// cacheSlots is the number of per-view series pointers cached on a TagMap.
// A direct-mapped cache indexed by Aggregator.slot: 8 slots cover the
// common case of one map recorded into up to 8 views with no collisions
// (the "8 measures, 8 tags" scenario), for 64 bytes per map.
const cacheSlots = 8

// TagMap is the immutable tag set behind tag.Map (which is defined as this
// type, so the two convert freely without copying).
//
// Tags are sorted by (KeyHash, Key) and keys are unique. A TagMap is never modified
// after construction except for its cache, which only holds pointers to
// series derived from the tags; it is safe for concurrent use.
type TagMap struct {
	// own is the map's own cell (mapcell.go): first, so that it shares
	// the context's first line with the context's own fields.
	own  mapCell
	tags []Tag
	// hash is SetHash(tags) for maps built by NewTagContext (0 for
	// others): the key of the map cache (context.go).
	hash uint64
	// cache remembers, per view (slot = Aggregator.slot % cacheSlots), the
	// series these tags resolve to. An entry is valid when its owner is the
	// Aggregator asking; a stale entry (another view, an unregistered one)
	// is simply overwritten. Reading it costs one atomic load.
	cache [cacheSlots]atomic.Pointer[Series]
}

// NewTagMap returns a map over tags, which must be in internal order (as
// Mutator.Apply leaves them) with unique keys.
// The map takes ownership of the slice.
func NewTagMap(tags []Tag) *TagMap { return &TagMap{tags: tags} }

// Tags returns the tags in internal order. The caller must not modify the
// slice.
func (m *TagMap) Tags() []Tag {
	if m == nil {
		return nil
	}
	return m.tags
}

// Value returns the value of key and whether it is present.
func (m *TagMap) Value(key string) (string, bool) {
	if m == nil {
		return "", false
	}
	for i := range m.tags {
		if m.tags[i].Key == key { // not hot: no need for the hash
			return m.tags[i].Value, true
		}
	}
	return "", false
}

// Mutator operations.
const (
	opInsert = 1 + iota
	opUpdate
	opUpsert
	opDelete
)

// Mutator is one pre-validated change to a tag set; tag.Mutator is defined
// as this type. Building one validates it once, so applying it on the record
// path is a few compares and a copy, with no interface call. The validation
// result is a code, and the error is built (allocated) only when Err is
// called on an invalid mutator.
//
// Four words, so that the compiler keeps one in registers: MakeMutator
// returns it in four registers and a caller of tag.New(ctx, Upsert(k, v),
// ...) stores them straight into the variadic array. A larger Mutator
// (64 bytes, until this layout) is not kept in registers by its caller:
// stored to a temporary with 8-byte moves, then copied into the array
// with 16-byte moves, which cannot forward from them: a stall of several
// ns per mutator (about 7 ns each in BenchmarkRecord/scenario=request_1m's
// profile).
type Mutator struct {
	k   *KeyInfo // nil: the zero Mutator, or one of the zero Key
	val string
	// w is the value's hash (HashString's, which leaves the top byte 0)
	// with the header in its top byte: op (bits 0-2), ttl (bit 3: set
	// for TTLUnlimitedPropagation) and bad (bits 4-5: badKey, badValue).
	w uint64
}

// Validation results of a Mutator.
const (
	badKey = 1 + iota
	badValue
)

// Errors of the tag model. They name what was wrong; wrapped errors add the
// offending key or value.
var (
	ErrInvalidKey   = errors.New("invalid tag key: want 1 to 255 printable ASCII characters (0x20-0x7e)")
	ErrInvalidValue = errors.New("invalid tag value: want 0 to 255 printable ASCII characters (0x20-0x7e)")
	errZeroMutator  = errors.New("tag: zero Mutator (build one with tag.Insert, tag.Update, tag.Upsert or tag.Delete)")
)

// ValidKey reports whether name is a valid key name.
func ValidKey(name string) bool {
	return len(name) > 0 && len(name) <= MaxTagLength && printable(name)
}

// ValidValue reports whether v is a valid tag value.
func ValidValue(v string) bool {
	return len(v) <= MaxTagLength && printable(v)
}

func printable(s string) bool {
	_, ok := hashPrintable(s)
	return ok
}

// KeyError wraps ErrInvalidKey with the key.
type KeyError struct{ Key string }

func (e *KeyError) Error() string {
	return ErrInvalidKey.Error() + ": got " + strconv.Quote(e.Key)
}
func (e *KeyError) Unwrap() error { return ErrInvalidKey }

// ValueError wraps ErrInvalidValue with the key and the value.
type ValueError struct{ Key, Value string }

func (e *ValueError) Error() string {
	return ErrInvalidValue.Error() + ": key " + strconv.Quote(e.Key) + " got " + strconv.Quote(e.Value)
}
func (e *ValueError) Unwrap() error { return ErrInvalidValue }

// Header bits of Mutator.w's top byte.
const (
	hdrShift = 56
	hdrTTL   = 1 << 3
	hdrBad   = 4
)

// KeyInfo is a tag key: its name and HashString of it, one per name (see
// InternKey), so that tag.Key and a Mutator carry a pointer, not the name
// and its hash.
type KeyInfo struct {
	Name string
	Hash uint64
}

// maxInternedKeys bounds the interned key names: tag keys are a service's
// schema, few. Names that arrive from outside (a decoded tag set's keys,
// see InternPeerKey) are interned only while the table is under a quarter
// of the bound, so that a peer sending new names cannot take the room
// NewKey's need. Past the bound a name gets a KeyInfo of its own, equal
// in name and hash (Keys of it compare unequal with ==).
var maxInternedKeys = 1 << 16

var internedKeys struct {
	mu sync.RWMutex
	m  map[string]*KeyInfo
}

// InternKey returns the KeyInfo of name, a valid key name (ValidKey): the
// same pointer for the same name while the table has room. Cost: a read
// lock and a map lookup; the first call for a name allocates (a copy of
// the name and the KeyInfo; the map may grow). Safe for concurrent use.
func InternKey(name string) *KeyInfo { return internKey(name, maxInternedKeys) }

// InternPeerKey is InternKey for a name that came from outside the process
// (a decoded tag): a new name is interned only while the table, the
// service's own names included, holds fewer than a quarter of
// maxInternedKeys.
func InternPeerKey(name string) *KeyInfo { return internKey(name, maxInternedKeys/4) }

func internKey(name string, limit int) *KeyInfo {
	internedKeys.mu.RLock()
	k, n := internedKeys.m[name], len(internedKeys.m)
	internedKeys.mu.RUnlock()
	if k != nil {
		return k
	}
	k = &KeyInfo{Name: strings.Clone(name), Hash: HashString(name)}
	if n >= limit {
		// Full: no write lock, so that new names from a peer do not
		// stall everyone's lookups.
		return k
	}
	internedKeys.mu.Lock()
	defer internedKeys.mu.Unlock()
	if old := internedKeys.m[name]; old != nil {
		return old
	}
	if len(internedKeys.m) >= limit {
		return k
	}
	if internedKeys.m == nil {
		internedKeys.m = make(map[string]*KeyInfo)
	}
	internedKeys.m[k.Name] = k
	return k
}

// MakeMutator builds and validates the mutator op (OpInsert, OpUpdate,
// OpUpsert, or OpDelete with val ""; any other op makes an invalid
// mutator, which Err reports as the zero Mutator) of k (nil, the zero
// Key's, is a bad key) to val, with a TTL (TTLNoPropagation or
// TTLUnlimitedPropagation). Cost: one pass over val, no allocation; not
// inlined, so its result comes back in registers (see Mutator).
func MakeMutator(op uint8, k *KeyInfo, val string, ttl int8) Mutator {
	var h uint64
	var ok bool
	if len(val) <= 3 {
		var b uint64
		h, b = hashShort(val)
		ok = b == 0
	} else {
		h, ok = hashPrintable(val)
	}
	hdr := uint64(op)
	if op-1 >= opDelete {
		hdr = 0 // not an op: the zero Mutator's header (op 0)
	}
	if ttl != TTLNoPropagation {
		hdr |= hdrTTL
	}
	if k == nil {
		hdr |= badKey << hdrBad
	} else if (len(val) > MaxTagLength || !ok) && op != opDelete {
		hdr |= badValue << hdrBad
	}
	return Mutator{k: k, val: val, w: h | hdr<<hdrShift}
}

// Upsert, Insert, Update and Delete ops for MakeMutator.
const (
	OpInsert = opInsert
	OpUpdate = opUpdate
	OpUpsert = opUpsert
	OpDelete = opDelete
)

func (m *Mutator) hdr() uint8 { return uint8(m.w >> hdrShift) }
func (m *Mutator) op() uint8  { return m.hdr() & 7 }
func (m *Mutator) bad() uint8 { return m.hdr() >> hdrBad }
func (m *Mutator) ttl() int8 {
	if m.hdr()&hdrTTL != 0 {
		return TTLUnlimitedPropagation
	}
	return TTLNoPropagation
}

// key returns the mutator's key name ("" for the zero Key's).
func (m *Mutator) key() string {
	if m.k == nil {
		return ""
	}
	return m.k.Name
}

// MutUpsert sets key (any string: checked in full; an invalid one makes a
// mutator whose Err reports it, so check Valid before Apply) to val, for
// tests and callers that hold a name rather than a tag.Key.
func MutUpsert(key string, val string, ttl int8) Mutator {
	var k *KeyInfo
	if ValidKey(key) {
		k = InternKey(key)
	}
	return MakeMutator(opUpsert, k, val, ttl)
}

// Valid reports whether Err is nil: two compares on the header, inlined,
// so that callers check a list of mutators without a call each.
func (m *Mutator) Valid() bool { h := m.hdr(); return h&7 != 0 && h>>hdrBad == 0 }

// Err returns the validation error of the mutator, if any.
func (m *Mutator) Err() error {
	switch {
	case m.op() == 0:
		return errZeroMutator
	case m.bad() == badKey:
		return &KeyError{Key: m.key()}
	case m.bad() == badValue:
		return &ValueError{Key: m.key(), Value: m.val}
	}
	return nil
}

// Apply returns dst (internal order, unique keys) with the mutation
// applied, in place. Check Err first: Apply assumes a valid mutator. With a dst of
// enough capacity (a stack array on the record path) it does not allocate.
func (mu *Mutator) Apply(dst []Tag) []Tag {
	// Find key's position in the sorted dst.
	kh, key := mu.k.Hash, mu.k.Name
	j := 0
	for j < len(dst) && less(dst[j].KeyHash, dst[j].Key, kh, key) {
		j++
	}
	found := j < len(dst) && dst[j].KeyHash == kh && dst[j].Key == key
	switch mu.op() {
	case opInsert:
		if found {
			return dst
		}
	case opUpdate:
		if !found {
			return dst
		}
	case opDelete:
		if found {
			dst = append(dst[:j], dst[j+1:]...)
		}
		return dst
	}
	if !found {
		// Shift the tags after j up by one, element by element: for the
		// few tags of a record path (usually none after j) this beats
		// append's and copy's calls into the runtime (typedslicecopy).
		dst = append(dst, Tag{})
		for k := len(dst) - 1; k > j; k-- {
			dst[k] = dst[k-1]
		}
	}
	// Field by field: no Tag temporary to copy.
	t := &dst[j]
	t.Key, t.Value, t.KeyHash, t.ValueHash, t.TTL = key, mu.val, kh, mu.w&hashMask, mu.ttl()
	return dst
}

// AppendTags appends tags to dst field by field: dst is usually a stack
// buffer, and a plain copy of a type with pointers calls into the runtime
// (typedslicecopy) for a handful of tags.
func AppendTags(dst, tags []Tag) []Tag {
	for i := range tags {
		dst = append(dst, tags[i])
	}
	return dst
}

// SortedByName returns a copy of the tags sorted by key name.
func (m *TagMap) SortedByName() []Tag {
	ts := append([]Tag(nil), m.Tags()...)
	slices.SortFunc(ts, func(a, b Tag) int { return strings.Compare(a.Key, b.Key) })
	return ts
}

// Canonical sorts tags into internal order and keeps, of a repeated key,
// the last one (as successive upserts would), in place. O(n log n).
func Canonical(tags []Tag) []Tag {
	slices.SortStableFunc(tags, func(a, b Tag) int {
		switch {
		case less(a.KeyHash, a.Key, b.KeyHash, b.Key):
			return -1
		case less(b.KeyHash, b.Key, a.KeyHash, a.Key):
			return 1
		}
		return 0
	})
	out := tags[:0]
	for i, t := range tags {
		if i+1 < len(tags) && tags[i+1].KeyHash == t.KeyHash && tags[i+1].Key == t.Key {
			continue // a later occurrence wins
		}
		out = append(out, t)
	}
	return out
}
