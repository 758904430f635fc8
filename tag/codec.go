package tag

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zerostat/zerostat/internal/core"
)

// The OpenCensus binary tag format (go.opencensus.io/tag/map_codec.go, and
// the OpenCensus BinaryEncoding spec): a version byte (0), then for each tag
// a field id byte (0: a string key), the key and the value, each prefixed
// with its length as an unsigned varint.
const (
	versionID    byte = 0
	fieldKeyType byte = 0
)

// ErrMalformed is wrapped by every Decode error.
var ErrMalformed = errors.New("tag: malformed binary tag map")

// Encode returns the OpenCensus binary encoding of the tags of m whose TTL
// lets them propagate (tags inserted with TTLNoPropagation are left out).
// Unlike OpenCensus, which follows Go's map order, tags are written sorted
// by key, so equal maps encode to equal bytes. A nil map encodes to nil.
// Cost: two allocations.
func Encode(m *Map) []byte {
	if m == nil {
		return nil
	}
	tags := m.core().SortedByName()
	n := 1
	for _, t := range tags {
		if t.TTL == core.TTLUnlimitedPropagation {
			n += 1 + 2*binary.MaxVarintLen16 + len(t.Key) + len(t.Value)
		}
	}
	b := make([]byte, 0, n)
	b = append(b, versionID)
	for _, t := range tags {
		if t.TTL != core.TTLUnlimitedPropagation {
			continue
		}
		b = append(b, fieldKeyType)
		b = binary.AppendUvarint(b, uint64(len(t.Key)))
		b = append(b, t.Key...)
		b = binary.AppendUvarint(b, uint64(len(t.Value)))
		b = append(b, t.Value...)
	}
	return b
}

// Decode parses the OpenCensus binary encoding. Decoded tags propagate
// (TTLUnlimitedPropagation); a repeated key keeps its last value, as in
// OpenCensus. Empty input decodes to an empty map.
//
// Decode never panics: truncated, oversized or otherwise hostile input is
// answered with an error wrapping ErrMalformed (and, for a bad key or
// value, ErrInvalidKey or ErrInvalidValue) that names the offset, and no
// map. It allocates in proportion to the input it has actually read, and
// takes O(n log n) time for n tags.
func Decode(b []byte) (*Map, error) {
	var tags []core.Tag
	err := decodeEach(b, func(k, v string) {
		tags = append(tags, core.Tag{Key: k, Value: v, KeyHash: core.HashString(k),
			ValueHash: core.HashString(v), TTL: core.TTLUnlimitedPropagation})
	})
	if err != nil {
		return nil, err
	}
	return (*Map)(core.NewTagMap(core.Canonical(tags))), nil
}

// DecodeEach parses the OpenCensus binary encoding as Decode does and
// calls fn for each tag, in input order (a repeated key is passed each
// time), with the metadata decoded tags have (TTLUnlimitedPropagation).
// Tags before a malformed part have been passed when it returns the error.
// Cost: one string per key and value, and a lookup of each key name
// among the interned ones (see NewKey); no map is built.
func DecodeEach(bytes []byte, fn func(key Key, val string, md metadatas)) error {
	md := metadatas{ttl: TTLUnlimitedPropagation}
	return decodeEach(bytes, func(k, v string) {
		fn(peerKeyOf(k), v, md)
	})
}

// decodeEach validates b and calls fn with each key and value.
func decodeEach(b []byte, fn func(k, v string)) error {
	if len(b) == 0 {
		return nil
	}
	if b[0] > versionID {
		return fmt.Errorf("%w: unsupported version %d at offset 0 (supported: %d)", ErrMalformed, b[0], versionID)
	}
	for i := 1; i < len(b); {
		if b[i] != fieldKeyType {
			return fmt.Errorf("%w: unknown field id %d at offset %d (want %d, a string key)", ErrMalformed, b[i], i, fieldKeyType)
		}
		i++
		k, next, err := readString(b, i, "key")
		if err != nil {
			return err
		}
		if !core.ValidKey(k) {
			return fmt.Errorf("%w: at offset %d: %w", ErrMalformed, i, &core.KeyError{Key: k})
		}
		i = next
		v, next, err := readString(b, i, "value")
		if err != nil {
			return err
		}
		if !core.ValidValue(v) {
			return fmt.Errorf("%w: at offset %d: %w", ErrMalformed, i, &core.ValueError{Key: k, Value: v})
		}
		i = next
		fn(k, v)
	}
	return nil
}

// readString reads a uvarint length and that many bytes at b[i:].
func readString(b []byte, i int, what string) (string, int, error) {
	n, w := binary.Uvarint(b[i:])
	if w <= 0 {
		return "", 0, fmt.Errorf("%w: truncated or overlong %s length at offset %d", ErrMalformed, what, i)
	}
	i += w
	if n > uint64(len(b)-i) {
		return "", 0, fmt.Errorf("%w: %s length %d at offset %d exceeds the %d bytes left", ErrMalformed, what, n, i-w, len(b)-i)
	}
	return string(b[i : i+int(n)]), i + int(n), nil
}
