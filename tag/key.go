package tag

import (
	"context"

	"github.com/zerostat/zerostat/internal/core"
)

// Key is a tag key. Keys compare with ==: two keys with the same name are
// equal while the name is interned (a key is a pointer to its name's one
// interned record), which is always the case unless the process has seen
// tens of thousands of key names (see NewKey); Name compares them in any
// case. The zero Key is invalid.
type Key struct {
	ki *core.KeyInfo // the name and its hash; nil for the zero Key
}

// peerKeyOf returns the Key of name, a valid key name read from a tag set
// (perhaps a decoded one): see core.InternPeerKey.
func peerKeyOf(name string) Key { return Key{ki: core.InternPeerKey(name)} }

// NewKey returns the key named name, or an error wrapping ErrInvalidKey when
// the name is not 1 to 255 printable ASCII characters.
//
// Cost: a read lock and a map lookup, plus two small allocations the first
// time a name is seen (the key's record: a copy of the name and its hash,
// kept for the life of the process, as a service's keys are). Names are
// interned up to 65,536 of them; a name first seen in decoded tags
// (DecodeEach, a Map's Tags) only while the table holds fewer than 16,384.
// Past that, a new name's Key is a record of its own, and two such Keys of
// one name are not == (Name compares them). Safe for concurrent use.
func NewKey(name string) (Key, error) {
	if !core.ValidKey(name) {
		return Key{}, &core.KeyError{Key: name}
	}
	return Key{ki: core.InternKey(name)}, nil
}

// MustNewKey is NewKey for package-level variables: it panics on an invalid
// name, as regexp.MustCompile does.
func MustNewKey(name string) Key {
	k, err := NewKey(name)
	if err != nil {
		panic(err)
	}
	return k
}

// Name returns the key's name ("" for the zero Key).
func (k Key) Name() string {
	if k.ki == nil {
		return ""
	}
	return k.ki.Name
}

// ValueFromContext returns the value of k in the tag map of ctx.
func (k Key) ValueFromContext(ctx context.Context) (string, bool) {
	return FromContext(ctx).Value(k)
}

// Errors returned (wrapped, with the offending input) by NewKey, New and
// Decode. Test with errors.Is.
var (
	ErrInvalidKey   = core.ErrInvalidKey
	ErrInvalidValue = core.ErrInvalidValue
)

// String returns the key's name.
func (k Key) String() string { return k.Name() }
