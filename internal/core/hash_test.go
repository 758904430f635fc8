package core

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPrintableMatchesBytes: the eight-bytes-at-a-time check agrees with
// the byte rule (0x20 to 0x7e) for strings of every length up to 40 made
// of bytes at and around the bounds, at every position.
func TestPrintableMatchesBytes(t *testing.T) {
	edges := []byte{0x00, 0x01, 0x1f, 0x20, 0x21, 0x41, 0x7d, 0x7e, 0x7f, 0x80, 0x9f, 0xe0, 0xfe, 0xff}
	byByte := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 || s[i] > 0x7e {
				return false
			}
		}
		return true
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 40; n++ {
		for range 400 {
			b := []byte(strings.Repeat("a", n))
			for j := range b {
				if r.IntN(4) == 0 {
					b[j] = edges[r.IntN(len(edges))]
				}
			}
			if got, want := printable(string(b)), byByte(string(b)); got != want {
				t.Fatalf("printable(%q) = %v; want %v", b, got, want)
			}
		}
		for pos := 0; pos < n; pos++ { // one bad byte anywhere
			for _, c := range edges {
				b := []byte(strings.Repeat("~", n))
				b[pos] = c
				if got, want := printable(string(b)), byByte(string(b)); got != want {
					t.Fatalf("printable(%q) = %v; want %v", b, got, want)
				}
			}
		}
	}
}

// TestHashStringSpreads: no two of 200,000 distinct strings of 0 to 40
// bytes (many sharing prefixes, suffixes and lengths) hash alike, nor do
// the low 20 bits (what a table indexes by) of more than a few in a
// thousand pairs beyond chance.
func TestHashStringSpreads(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	seen := map[uint64]string{}
	strs := map[string]bool{}
	alpha := "abc/_0123456789"
	for len(strs) < 200000 {
		n := r.IntN(41)
		b := make([]byte, n)
		for j := range b {
			b[j] = alpha[r.IntN(len(alpha))]
		}
		s := string(b)
		if strs[s] {
			continue
		}
		strs[s] = true
		h := HashString(s)
		if o, ok := seen[h]; ok {
			t.Fatalf("HashString(%q) == HashString(%q)", s, o)
		}
		seen[h] = s
		if HashString(strings.Clone(s)) != h {
			t.Fatalf("HashString(%q) differs for a copy", s)
		}
	}
	low := map[uint64]int{}
	for h := range seen {
		low[h&(1<<20-1)]++
	}
	// Pairs of lengths 9 to 16 whose words differ by the XOR of their
	// lengths (they collided when the length went into both words as is).
	for _, p := range [][2]string{{"xbaaaaaaz", "{baaaaaaaz"}, {"a30000001", "b300000001"}} {
		if HashString(p[0]) == HashString(p[1]) {
			t.Errorf("HashString(%q) == HashString(%q)", p[0], p[1])
		}
	}
	// 200,000 in 2^20 buckets: about 18,000 collide by chance.
	if coll := len(seen) - len(low); coll > 22000 {
		t.Errorf("%d collisions in the low 20 bits; want about 18,000", coll)
	}
}

// TestHashLeavesTopByte: every HashString (each length path: short, up to
// 8, up to 16, longer) leaves the top byte 0, where a Mutator keeps its
// header, and a Mutator's value hash is the HashString of its value.
func TestHashLeavesTopByte(t *testing.T) {
	k := InternKey("k")
	for n := 0; n <= 40; n++ {
		for i := range 50 {
			s := strings.Repeat(string(rune('a'+i%26)), n)
			if h := HashString(s); h&^hashMask != 0 {
				t.Fatalf("HashString(%q) = %#x; want the top byte 0", s, h)
			}
			m := MakeMutator(OpUpsert, k, s, TTLUnlimitedPropagation)
			tags := m.Apply(nil)
			if len(tags) != 1 || tags[0].ValueHash != HashString(s) || tags[0].Value != s || tags[0].TTL != TTLUnlimitedPropagation {
				t.Fatalf("Upsert(k, %q) applied: %+v; want the value, its HashString and TTL -1", s, tags)
			}
		}
	}
}
