package conformance

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	octag "go.opencensus.io/tag"

	"github.com/zerostat/zerostat/tag"
)

// parseRecords is an independent decoder of the OpenCensus binary tag
// format (version byte 0, then per tag: field id 0, uvarint key length, key,
// uvarint value length, value). It returns the records in wire order.
func parseRecords(b []byte) ([]kv, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[0] != 0 {
		return nil, fmt.Errorf("version %d; want 0", b[0])
	}
	var out []kv
	i := 1
	read := func() (string, error) {
		n, w := binary.Uvarint(b[i:])
		if w <= 0 || n > uint64(len(b)-i-w) {
			return "", fmt.Errorf("bad length at offset %d", i)
		}
		i += w
		s := string(b[i : i+int(n)])
		i += int(n)
		return s, nil
	}
	for i < len(b) {
		if b[i] != 0 {
			return nil, fmt.Errorf("field id %d at offset %d; want 0", b[i], i)
		}
		i++
		k, err := read()
		if err != nil {
			return nil, err
		}
		v, err := read()
		if err != nil {
			return nil, err
		}
		out = append(out, kv{K: k, V: v})
	}
	return out, nil
}

func sortedKV(s []kv) []kv {
	s = slices.Clone(s)
	slices.SortFunc(s, func(a, b kv) int { return strings.Compare(a.K, b.K) })
	return s
}

// zsTags returns the tags of a zerostat map as kv, in its order.
func zsTags(m *tag.Map) []kv {
	var out []kv
	for _, t := range m.Tags() {
		out = append(out, kv{K: t.Key.Name(), V: t.Value})
	}
	return out
}

// ocTags returns the tags of an OpenCensus map, sorted by key. OpenCensus
// has no public iteration over a Map, so this re-encodes it (every tag of
// a decoded map propagates) and parses the bytes.
func ocTags(t *testing.T, m *octag.Map) []kv {
	t.Helper()
	recs, err := parseRecords(octag.Encode(m))
	if err != nil {
		t.Fatalf("parsing OpenCensus's own encoding: got error %v; want nil", err)
	}
	return sortedKV(recs)
}

type tagSpec struct {
	k, v   string
	noProp bool
}

// randTagMap returns 0–10 tags with unique random printable keys of 1–255
// bytes and values of 0–255 bytes; about a quarter do not propagate.
func randTagMap(r *rand.Rand) []tagSpec {
	n := r.IntN(11)
	seen := map[string]bool{}
	var specs []tagSpec
	for len(specs) < n {
		kl := 1 + r.IntN(16)
		if r.IntN(3) == 0 {
			kl = 1 + r.IntN(255)
		}
		k := randPrintable(r, kl)
		if seen[k] {
			continue
		}
		seen[k] = true
		vl := r.IntN(16)
		switch r.IntN(4) {
		case 0:
			vl = r.IntN(256)
		case 1:
			vl = []int{0, 127, 128, 255}[r.IntN(4)] // uvarint 1/2-byte edges
		}
		specs = append(specs, tagSpec{k: k, v: randPrintable(r, vl), noProp: r.IntN(4) == 0})
	}
	return specs
}

// build returns the map of specs in both SDKs (built with tag.New and
// Upsert, in spec order) and the propagating tags, sorted by key.
func build(t *testing.T, specs []tagSpec) (*tag.Map, *octag.Map, []kv) {
	t.Helper()
	var zm []tag.Mutator
	var om []octag.Mutator
	var want []kv
	for _, s := range specs {
		var zmd []tag.Metadata
		var omd []octag.Metadata
		if s.noProp {
			zmd = []tag.Metadata{tag.WithTTL(tag.TTLNoPropagation)}
			omd = []octag.Metadata{octag.WithTTL(octag.TTLNoPropagation)}
		} else {
			want = append(want, kv{K: s.k, V: s.v})
		}
		zm = append(zm, tag.Upsert(tag.MustNewKey(s.k), s.v, zmd...))
		om = append(om, octag.Upsert(octag.MustNewKey(s.k), s.v, omd...))
	}
	zc, err := tag.New(context.Background(), zm...)
	if err != nil {
		t.Fatalf("zerostat tag.New: got error %v; want nil", err)
	}
	oc, err := octag.New(context.Background(), om...)
	if err != nil {
		t.Fatalf("opencensus tag.New: got error %v; want nil", err)
	}
	return tag.FromContext(zc), octag.FromContext(oc), sortedKV(want)
}

func TestTagCodecInterop(t *testing.T) {
	maps := 300
	if testing.Short() || raceEnabled {
		maps = 60
	}
	for _, seed := range []uint64{1, 2, 3, 4} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0xc0dec))
			sizes := map[int]int{}
			for i := 0; i < maps; i++ {
				specs := randTagMap(r)
				zm, om, want := build(t, specs)
				sizes[len(want)]++
				zb := tag.Encode(zm)
				ob := octag.Encode(om)
				where := fmt.Sprintf("map %d (%d tags, %d propagating)", i, len(specs), len(want))

				// Both encodings hold exactly the propagating tags.
				zr, err := parseRecords(zb)
				if err != nil {
					t.Fatalf("%s: parsing zerostat's encoding %x: got error %v; want nil", where, zb, err)
				}
				or, err := parseRecords(ob)
				if err != nil {
					t.Fatalf("%s: parsing OpenCensus's encoding %x: got error %v; want nil", where, ob, err)
				}
				if got := sortedKV(zr); !slices.Equal(got, want) {
					t.Fatalf("%s: zerostat Encode records: got %q; want %q", where, got, want)
				}
				if got := sortedKV(or); !slices.Equal(got, want) {
					t.Fatalf("%s: OpenCensus Encode records: got %q; want %q", where, got, want)
				}
				if len(want) <= 1 && !bytes.Equal(zb, ob) {
					t.Fatalf("%s: zerostat Encode: got %x; want %x (OpenCensus's bytes)", where, zb, ob)
				}
				if len(zb) != len(ob) {
					t.Fatalf("%s: zerostat Encode length: got %d; want %d (OpenCensus's)", where, len(zb), len(ob))
				}

				// zerostat Encode -> OpenCensus Decode.
				om2, err := octag.Decode(zb)
				if err != nil {
					t.Fatalf("%s: OpenCensus Decode of zerostat's %x: got error %v; want nil", where, zb, err)
				}
				for _, w := range want {
					if v, ok := om2.Value(octag.MustNewKey(w.K)); !ok || v != w.V {
						t.Fatalf("%s: OpenCensus Decode of zerostat's bytes: key %q: got %q, %v; want %q, true", where, w.K, v, ok, w.V)
					}
				}
				if got := ocTags(t, om2); !slices.Equal(got, want) {
					t.Fatalf("%s: OpenCensus Decode of zerostat's bytes: got %q; want %q", where, got, want)
				}

				// OpenCensus Encode -> zerostat Decode.
				zm2, err := tag.Decode(ob)
				if err != nil {
					t.Fatalf("%s: zerostat Decode of OpenCensus's %x: got error %v; want nil", where, ob, err)
				}
				if got := zsTags(zm2); !slices.Equal(got, want) {
					t.Fatalf("%s: zerostat Decode of OpenCensus's bytes: got %q; want %q (sorted by key)", where, got, want)
				}
				for _, w := range want {
					if v, ok := zm2.Value(tag.MustNewKey(w.K)); !ok || v != w.V {
						t.Fatalf("%s: zerostat Decode: Value(%q): got %q, %v; want %q, true", where, w.K, v, ok, w.V)
					}
				}

				// Determinism: the same map always encodes the same, and so
				// does a map with the same tags built in another order.
				for j := 0; j < 50; j++ {
					if b := tag.Encode(zm); !bytes.Equal(b, zb) {
						t.Fatalf("%s: zerostat Encode call %d: got %x; want %x (the first call's)", where, j+2, b, zb)
					}
				}
				if b := tag.Encode(zm2); !bytes.Equal(b, zb) {
					t.Fatalf("%s: zerostat Encode of the map decoded from OpenCensus's bytes: got %x; want %x", where, b, zb)
				}
			}
			for _, n := range []int{0, 1, 2} {
				if sizes[n] == 0 {
					t.Errorf("no map with %d propagating tags was generated; want some (sizes %v)", n, sizes)
				}
			}
		})
	}
}

func TestTagCodecKnownBytes(t *testing.T) {
	// From go.opencensus.io/tag/map_codec_test.go (TestDecode "valid"): the
	// map {k1: v1}.
	want := []byte{0, 0, 2, 'k', '1', 2, 'v', '1'}
	zc, _ := tag.New(context.Background(), tag.Insert(tag.MustNewKey("k1"), "v1"))
	oc, _ := octag.New(context.Background(), octag.Insert(octag.MustNewKey("k1"), "v1"))
	if got := tag.Encode(tag.FromContext(zc)); !bytes.Equal(got, want) {
		t.Errorf("zerostat Encode({k1: v1}): got %v; want %v", got, want)
	}
	if got := octag.Encode(octag.FromContext(oc)); !bytes.Equal(got, want) {
		t.Errorf("OpenCensus Encode({k1: v1}): got %v; want %v (the test's premise)", got, want)
	}
	m, err := tag.Decode(want)
	if err != nil {
		t.Fatalf("zerostat Decode(%v): got error %v; want nil", want, err)
	}
	if got := zsTags(m); !slices.Equal(got, []kv{{K: "k1", V: "v1"}}) {
		t.Errorf("zerostat Decode(%v): got %q; want [{k1 v1}]", want, got)
	}

	// Empty maps: one version byte. A nil map encodes as nil in both.
	zc, _ = tag.New(context.Background())
	oc, _ = octag.New(context.Background())
	if zb, ob := tag.Encode(tag.FromContext(zc)), octag.Encode(octag.FromContext(oc)); !bytes.Equal(zb, ob) || !bytes.Equal(zb, []byte{0}) {
		t.Errorf("Encode(empty map): zerostat %v, OpenCensus %v; want [0] both", zb, ob)
	}
	if zb, ob := tag.Encode(nil), octag.Encode(nil); zb != nil || ob != nil {
		t.Errorf("Encode(nil): zerostat %v, OpenCensus %v; want nil both", zb, ob)
	}

	// OpenCensus's map_codec_test "4": keys and values with every kind of
	// punctuation, a space and a backslash.
	weird := "v4 is very weird <>.,?/'\";:`~!@#$%^&*()_-+={[}]|\\"
	specs := []tagSpec{{k: "k1", v: "v1"}, {k: "k2", v: "v2"}, {k: "k3 is very weird <>.,?/'\";:`~!@#$%^&*()_-+={[}]|\\", v: "v3"}, {k: "k4", v: weird}}
	zm, om, wantKV := build(t, specs)
	if got := ocTags(t, mustOCDecode(t, tag.Encode(zm))); !slices.Equal(got, wantKV) {
		t.Errorf("OpenCensus Decode(zerostat Encode(weird map)): got %q; want %q", got, wantKV)
	}
	zm2, err := tag.Decode(octag.Encode(om))
	if err != nil {
		t.Fatalf("zerostat Decode(OpenCensus Encode(weird map)): got error %v; want nil", err)
	}
	if got := zsTags(zm2); !slices.Equal(got, wantKV) {
		t.Errorf("zerostat Decode(OpenCensus Encode(weird map)): got %q; want %q", got, wantKV)
	}
}

func mustOCDecode(t *testing.T, b []byte) *octag.Map {
	t.Helper()
	m, err := octag.Decode(b)
	if err != nil {
		t.Fatalf("OpenCensus Decode(%x): got error %v; want nil", b, err)
	}
	return m
}

// ocDecode decodes with OpenCensus, turning its panics (it slices with an
// unchecked uvarint length: a huge length wraps int) into errors.
func ocDecode(b []byte) (m *octag.Map, err error) {
	defer func() {
		if p := recover(); p != nil {
			m, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	return octag.Decode(b)
}

// TestTagCodecMalformed: both decoders reject the same malformed inputs
// (OpenCensus's own cases, then random corruptions of valid encodings) and
// accept the same valid ones with the same result.
func TestTagCodecMalformed(t *testing.T) {
	long := append([]byte{0, 0, 2, 'k', '1', 2, 'v', '1', 0, 2, 'k', '2', 172, 2}, bytes.Repeat([]byte{'a'}, 300)...)
	cases := []struct {
		name  string
		b     []byte
		valid bool
	}{
		{"empty", nil, true},
		{"version only", []byte{0}, true},
		{"duplicate key, last wins", []byte{0, 0, 1, 'k', 1, 'a', 0, 1, 'k', 1, 'b'}, true},
		{"empty value", []byte{0, 0, 1, 'k', 0}, true},
		{"non-ascii key (OpenCensus's case)", []byte{0, 0, 2, 107, 49, 2, 118, 49, 0, 2, 107, 25, 2, 118, 49}, false},
		{"non-ascii value (OpenCensus's case)", []byte{0, 0, 2, 107, 49, 2, 118, 49, 0, 2, 107, 50, 2, 118, 25}, false},
		{"300-byte value (OpenCensus's case)", long, false},
		{"256-byte key", append([]byte{0, 0, 128, 2}, append(bytes.Repeat([]byte{'k'}, 256), 0)...), false},
		{"empty key", []byte{0, 0, 0, 1, 'v'}, false},
		{"version 1", []byte{1, 0, 1, 'k', 1, 'v'}, false},
		{"field id 1 (int64 tag)", []byte{0, 1, 1, 'k', 1, 0, 0, 0, 0, 0, 0, 0}, false},
		{"truncated key", []byte{0, 0, 5, 'k'}, false},
		{"missing value", []byte{0, 0, 1, 'k'}, false},
		{"truncated value length", []byte{0, 0, 1, 'k', 0x80}, false},
		{"field id only", []byte{0, 0}, false},
		// A uvarint key length of 2^64-1: OpenCensus's int conversion wraps
		// and it panics slicing (ocDecode turns that into an error).
		{"huge key length", []byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 'k'}, false},
		{"overlong uvarint", []byte{0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			zm, zerr := tag.Decode(tc.b)
			om, oerr := ocDecode(tc.b)
			if (zerr == nil) != tc.valid || (oerr == nil) != tc.valid {
				t.Fatalf("Decode(%x): zerostat error %v, OpenCensus error %v; want valid=%v for both", tc.b, zerr, oerr, tc.valid)
			}
			if tc.valid {
				if got, want := zsTags(zm), ocTags(t, om); !slices.Equal(got, want) {
					t.Errorf("Decode(%x): zerostat %q; want %q (OpenCensus)", tc.b, got, want)
				}
			} else if !errors.Is(zerr, tag.ErrMalformed) {
				t.Errorf("zerostat Decode(%x): got error %v; want one wrapping tag.ErrMalformed", tc.b, zerr)
			}
		})
	}

	t.Run("random corruptions", func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 9))
		n := 3000
		if testing.Short() || raceEnabled {
			n = 500
		}
		agreeValid, agreeInvalid := 0, 0
		for i := 0; i < n; i++ {
			zm, _, _ := build(t, randTagMap(r))
			b := tag.Encode(zm)
			switch r.IntN(4) {
			case 0: // flip a byte to anything
				if len(b) > 0 {
					b[r.IntN(len(b))] = byte(r.IntN(256))
				}
			case 1: // truncate
				b = b[:r.IntN(len(b)+1)]
			case 2: // set a byte to a length-ish value
				if len(b) > 1 {
					b[1+r.IntN(len(b)-1)] = []byte{0, 1, 0x7f, 0x80, 0xff}[r.IntN(5)]
				}
			default: // insert a byte
				j := r.IntN(len(b) + 1)
				b = slices.Insert(b, j, byte(r.IntN(256)))
			}
			zm2, zerr := tag.Decode(b)
			om2, oerr := ocDecode(b)
			switch {
			case (zerr == nil) != (oerr == nil):
				t.Fatalf("Decode(%x): zerostat error %v, OpenCensus error %v; want both nil or both non-nil", b, zerr, oerr)
			case zerr == nil:
				if got, want := zsTags(zm2), ocTags(t, om2); !slices.Equal(got, want) {
					t.Fatalf("Decode(%x): zerostat %q; want %q (OpenCensus)", b, got, want)
				}
				agreeValid++
			default:
				agreeInvalid++
			}
		}
		if agreeValid == 0 || agreeInvalid == 0 {
			t.Errorf("corruptions: got %d accepted and %d rejected by both; want some of each", agreeValid, agreeInvalid)
		}
		t.Logf("%d corrupted inputs: %d accepted by both with equal results, %d rejected by both", n, agreeValid, agreeInvalid)
	})
}

// TestOpenCensusDecodePanicsOnHugeLength documents why ocDecode recovers:
// go.opencensus.io v0.24.0 tag.Decode panics (slice bounds out of range) on
// a uvarint length of 2^64-1, where zerostat returns ErrMalformed.
func TestOpenCensusDecodePanicsOnHugeLength(t *testing.T) {
	b := []byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 'k'}
	_, oerr := ocDecode(b)
	t.Logf("OpenCensus Decode(%x): %v", b, oerr)
	if _, err := tag.Decode(b); !errors.Is(err, tag.ErrMalformed) {
		t.Errorf("zerostat Decode(%x): got error %v; want one wrapping tag.ErrMalformed", b, err)
	}
}
