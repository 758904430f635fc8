package tag

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestNewKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"k", true},
		{"http.method", true},
		{" ~", true},
		{strings.Repeat("a", 255), true},
		{"", false},
		{strings.Repeat("a", 256), false},
		{"tab\t", false},
		{"del\x7f", false},
		{"é", false},
		{"nul\x00", false},
	} {
		k, err := NewKey(tc.name)
		if tc.ok {
			if err != nil || k.Name() != tc.name {
				t.Errorf("NewKey(%q) = %v, %v; want the key, nil", tc.name, k, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidKey) {
			t.Errorf("NewKey(%q) error = %v; want ErrInvalidKey", tc.name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "got") {
			t.Errorf("NewKey(%q) error %q does not name the input", tc.name, err)
		}
	}
}

func TestMustNewKeyPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustNewKey(\"\") did not panic")
		}
	}()
	MustNewKey("")
}

func TestKeysCompareByName(t *testing.T) {
	if MustNewKey("a") != MustNewKey("a") || MustNewKey("a") == MustNewKey("b") {
		t.Error("keys do not compare by name")
	}
}

func mustNew(t *testing.T, ctx context.Context, ms ...Mutator) context.Context {
	t.Helper()
	ctx, err := New(ctx, ms...)
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

func TestMutators(t *testing.T) {
	a, b, c := MustNewKey("a"), MustNewKey("b"), MustNewKey("c")
	base := mustNew(t, context.Background(), Insert(b, "b0"), Insert(a, "a0"))
	for _, tc := range []struct {
		name string
		muts []Mutator
		want string
	}{
		{"none", nil, "{ {a a0}{b b0} }"},
		{"insert new", []Mutator{Insert(c, "c1")}, "{ {a a0}{b b0}{c c1} }"},
		{"insert existing keeps", []Mutator{Insert(a, "a1")}, "{ {a a0}{b b0} }"},
		{"update existing", []Mutator{Update(a, "a1")}, "{ {a a1}{b b0} }"},
		{"update missing is no-op", []Mutator{Update(c, "c1")}, "{ {a a0}{b b0} }"},
		{"upsert both", []Mutator{Upsert(a, "a1"), Upsert(c, "c1")}, "{ {a a1}{b b0}{c c1} }"},
		{"delete", []Mutator{Delete(a)}, "{ {b b0} }"},
		{"delete missing", []Mutator{Delete(c)}, "{ {a a0}{b b0} }"},
		{"in order", []Mutator{Delete(a), Insert(a, "a2"), Upsert(a, "a3")}, "{ {a a3}{b b0} }"},
		{"empty value kept", []Mutator{Upsert(c, "")}, "{ {a a0}{b b0}{c } }"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FromContext(mustNew(t, base, tc.muts...)).String()
			if got != tc.want {
				t.Errorf("got %s; want %s", got, tc.want)
			}
		})
	}
	// The original map is immutable.
	if got := FromContext(base).String(); got != "{ {a a0}{b b0} }" {
		t.Errorf("base map changed to %s", got)
	}
}

func TestNewErrors(t *testing.T) {
	ctx := context.Background()
	good := MustNewKey("good")
	for _, tc := range []struct {
		name string
		mut  Mutator
		want error
	}{
		{"zero key", Upsert(Key{}, "v"), ErrInvalidKey},
		{"long value", Insert(good, strings.Repeat("v", 256)), ErrInvalidValue},
		{"non-ascii value", Update(good, "caf\xc3\xa9"), ErrInvalidValue},
		{"control value", Upsert(good, "a\nb"), ErrInvalidValue},
		{"zero mutator", Mutator{}, nil},
	} {
		got, err := New(ctx, Upsert(good, "x"), tc.mut)
		if err == nil {
			t.Errorf("%s: New succeeded; want an error", tc.name)
			continue
		}
		if tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v; want %v", tc.name, err, tc.want)
		}
		if got != ctx {
			t.Errorf("%s: New returned a new context on error", tc.name)
		}
	}
}

func TestValueAndNil(t *testing.T) {
	k := MustNewKey("k")
	var m *Map
	if v, ok := m.Value(k); ok || v != "" {
		t.Errorf("nil map Value = %q, %v", v, ok)
	}
	if m.String() != "nil" || m.Len() != 0 {
		t.Errorf("nil map String %q Len %d", m.String(), m.Len())
	}
	ctx := mustNew(t, context.Background(), Upsert(k, "v"))
	if v, ok := k.ValueFromContext(ctx); !ok || v != "v" {
		t.Errorf("ValueFromContext = %q, %v; want v, true", v, ok)
	}
	if FromContext(context.Background()) != nil {
		t.Error("FromContext of a bare context is not nil")
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	k1, k2, k3 := MustNewKey("k1"), MustNewKey("k2"), MustNewKey("local")
	ctx := mustNew(t, context.Background(),
		Upsert(k2, "v2"), Upsert(k1, ""), Upsert(k3, "x", WithTTL(TTLNoPropagation)))
	b := Encode(FromContext(ctx))
	want := []byte{0, 0, 2, 'k', '1', 0, 0, 2, 'k', '2', 2, 'v', '2'}
	if !bytes.Equal(b, want) {
		t.Fatalf("Encode = %v; want %v", b, want)
	}
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.String(); got != "{ {k1 }{k2 v2} }" {
		t.Errorf("Decode = %s", got)
	}
	if Encode(nil) != nil {
		t.Error("Encode(nil) != nil")
	}
	if m, err := Decode(nil); err != nil || m.Len() != 0 {
		t.Errorf("Decode(nil) = %v, %v; want empty map", m, err)
	}
	if b := Encode(FromContext(mustNew(t, context.Background()))); !bytes.Equal(b, []byte{0}) {
		t.Errorf("Encode(empty) = %v; want [0]", b)
	}
}

func TestDecodeRepeatedKeyLastWins(t *testing.T) {
	b := []byte{0, 0, 1, 'k', 1, 'a', 0, 1, 'k', 1, 'b'}
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := m.Value(MustNewKey("k")); v != "b" {
		t.Errorf("got %q; want b", v)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"version", []byte{1}, "unsupported version 1"},
		{"field id", []byte{0, 1, 1, 'k', 0}, "unknown field id 1"},
		{"no key length", []byte{0, 0}, "key length"},
		{"key length past end", []byte{0, 0, 5, 'k'}, "exceeds"},
		{"huge length", []byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, "exceeds"},
		{"overlong varint", []byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "key length"},
		{"no value", []byte{0, 0, 1, 'k'}, "value length"},
		{"value past end", []byte{0, 0, 1, 'k', 3, 'v'}, "exceeds"},
		{"empty key", []byte{0, 0, 0, 0}, "invalid tag key"},
		{"bad value", []byte{0, 0, 1, 'k', 1, 0x80}, "invalid tag value"},
	} {
		m, err := Decode(tc.in)
		if err == nil || m != nil {
			t.Errorf("%s: Decode(%v) = %v, %v; want an error", tc.name, tc.in, m, err)
			continue
		}
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q; want ErrMalformed mentioning %q", tc.name, err, tc.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{0, 0, 2, 'k', '1', 0, 0, 2, 'k', '2', 2, 'v', '2'})
	f.Add([]byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to something that decodes to the same.
		m2, err := Decode(Encode(m))
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if m.String() != m2.String() {
			t.Fatalf("round trip changed %s to %s", m, m2)
		}
	})
}

// TestDecodeManyTags decodes 160,000 distinct 3-byte keys plus a repeat of
// the first one: every key is kept and the later value of a repeated key
// wins. Inserting each decoded tag into a sorted slice (quadratic) took
// 70 s here; sorting once takes well under a second. The time is not
// asserted (timing is never asserted in unit tests); a quadratic
// regression shows as this test's duration in make test's output.
func TestDecodeManyTags(t *testing.T) {
	b := []byte{0}
	n := 0
	for a := byte('!'); a <= '~' && n < 160000; a++ {
		for c := byte('!'); c <= '~' && n < 160000; c++ {
			for d := byte('!'); d <= '~' && n < 160000; d++ {
				b = append(b, 0, 3, a, c, d, 1, d)
				n++
			}
		}
	}
	b = append(b, 0, 3, '!', '!', '!', 4, 'l', 'a', 's', 't')
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() != n {
		t.Errorf("%d tags; want %d", m.Len(), n)
	}
	if v, _ := m.Value(MustNewKey("!!!")); v != "last" {
		t.Errorf(`value of the repeated key "!!!" is %q; want the later "last"`, v)
	}
	if v, _ := m.Value(MustNewKey("!#}")); v != "}" {
		t.Errorf(`value of "!#}" is %q; want "}"`, v)
	}
}

// TestKeysFromMapsAndDecodeCompareEqual: the Keys a Map's Tags and
// DecodeEach return are == to NewKey's of the same name, since a Key is
// its name's interned record.
func TestKeysFromMapsAndDecodeCompareEqual(t *testing.T) {
	k := MustNewKey("equal/route")
	ctx := mustNew(t, context.Background(), Upsert(k, "/a"))
	ts := FromContext(ctx).Tags()
	if len(ts) != 1 || ts[0].Key != k {
		t.Fatalf("Tags() = %v; want one tag whose Key == NewKey's", ts)
	}
	// A name first seen by DecodeEach, then made by NewKey.
	other := "equal/decoded-first"
	var got []Key
	enc := append([]byte{0, 0, byte(len(other))}, other...) // version 0, tag field, key
	enc = append(enc, 1, 'x')                               // value
	if err := DecodeEach(enc, func(key Key, _ string, _ metadatas) {
		got = append(got, key)
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != MustNewKey(other) || got[0].Name() != other {
		t.Fatalf("DecodeEach keys = %v; want one == MustNewKey(%q)", got, other)
	}
	if (Key{}).Name() != "" || (Key{}) == k {
		t.Fatal("the zero Key has a name or equals a real key")
	}
}
