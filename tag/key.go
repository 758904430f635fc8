package tag

import (
	"context"

	"github.com/zerostat/zerostat/internal/core"
)

// Key is a tag key. Keys compare with ==; two keys with the same name are
// equal. The zero Key is invalid.
type Key struct {
	name string
	hash uint64 // core.HashString(name), computed once
}

// NewKey returns the key named name, or an error wrapping ErrInvalidKey when
// the name is not 1 to 255 printable ASCII characters.
// Safe for concurrent use; allocation-free.
func NewKey(name string) (Key, error) {
	if !core.ValidKey(name) {
		return Key{}, &core.KeyError{Key: name}
	}
	return Key{name: name, hash: core.HashString(name)}, nil
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

// Name returns the key's name.
func (k Key) Name() string { return k.name }

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
func (k Key) String() string { return k.name }
