package core

import (
	"errors"
	"fmt"
	"testing"
	"unsafe"
)

// TestMutatorLayout: four words on a 64-bit machine, so that the compiler
// returns a Mutator in registers (see Mutator); a larger one is copied
// through memory with stalls.
func TestMutatorLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layout is for 64-bit machines")
	}
	if got := unsafe.Sizeof(Mutator{}); got != 32 {
		t.Fatalf("Mutator is %d bytes; want 32 (four words)", got)
	}
}

// TestMutatorHeader: every op, TTL and validation result survives the
// packing into the value hash's top byte.
func TestMutatorHeader(t *testing.T) {
	k := InternKey("key")
	for _, op := range []uint8{OpInsert, OpUpdate, OpUpsert, OpDelete} {
		for _, ttl := range []int8{TTLNoPropagation, TTLUnlimitedPropagation} {
			for _, v := range []string{"", "ok", "a longer value of 30 bytes...", "bad\x01", string(make([]byte, 256))} {
				for _, key := range []*KeyInfo{k, nil} {
					val := v
					if op == OpDelete {
						val = ""
					}
					m := MakeMutator(op, key, val, ttl)
					name := fmt.Sprintf("op %d ttl %d key %v value %q", op, ttl, key != nil, val)
					if m.op() != op || m.ttl() != ttl || m.val != val || m.w&hashMask != HashString(val) {
						t.Fatalf("%s: got op %d ttl %d value %q hash %#x", name, m.op(), m.ttl(), m.val, m.w&hashMask)
					}
					wantErr := error(nil)
					switch {
					case key == nil:
						wantErr = ErrInvalidKey
					case !ValidValue(val):
						wantErr = ErrInvalidValue
					}
					if err := m.Err(); !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) {
						t.Fatalf("%s: Err() = %v; want %v", name, err, wantErr)
					}
					if m.Valid() != (wantErr == nil) {
						t.Fatalf("%s: Valid() = %v; want %v", name, m.Valid(), wantErr == nil)
					}
				}
			}
		}
	}
	var zero Mutator
	if zero.Valid() || !errors.Is(zero.Err(), errZeroMutator) {
		t.Fatalf("zero Mutator: Valid() = %v, Err() = %v; want false and the zero-mutator error", zero.Valid(), zero.Err())
	}
	// Not an op: invalid whatever the TTL bit, reported as the zero
	// Mutator (Apply is never reached with one).
	for _, op := range []uint8{0, 5, 7, 8, 9, 255} {
		for _, ttl := range []int8{TTLNoPropagation, TTLUnlimitedPropagation} {
			m := MakeMutator(op, k, "v", ttl)
			if m.Valid() || !errors.Is(m.Err(), errZeroMutator) {
				t.Fatalf("op %d ttl %d: Valid() = %v, Err() = %v; want false and the zero-mutator error", op, ttl, m.Valid(), m.Err())
			}
		}
	}
}

// TestInternKeyBound: one KeyInfo per name while the table has room; past
// maxInternedKeys a new name gets a KeyInfo of its own (equal in name and
// hash), the table does not grow, and mutators of such keys are still
// equal for the derived cache.
func TestInternKeyBound(t *testing.T) {
	a := InternKey("intern/a")
	if InternKey("intern/a") != a || a.Name != "intern/a" || a.Hash != HashString("intern/a") {
		t.Fatalf("InternKey(%q) twice: %p and %p (%+v); want one KeyInfo with the name and its hash", "intern/a", a, InternKey("intern/a"), *a)
	}
	internedKeys.mu.RLock()
	n := len(internedKeys.m)
	internedKeys.mu.RUnlock()
	defer func(max int) { maxInternedKeys = max }(maxInternedKeys)
	maxInternedKeys = n + 1
	b := InternKey("intern/b") // the last room
	if InternKey("intern/b") != b {
		t.Fatal("the last name with room was not interned")
	}
	c1, c2 := InternKey("intern/c"), InternKey("intern/c")
	if c1 == c2 || c1.Name != c2.Name || c1.Hash != c2.Hash {
		t.Fatalf("past the bound: %p %+v and %p %+v; want two KeyInfos equal in name and hash", c1, *c1, c2, *c2)
	}
	internedKeys.mu.RLock()
	got := len(internedKeys.m)
	internedKeys.mu.RUnlock()
	if got != n+1 {
		t.Fatalf("the table holds %d names; want %d (its bound)", got, n+1)
	}
	m1 := []Mutator{MakeMutator(OpUpsert, c1, "v", TTLUnlimitedPropagation)}
	m2 := []Mutator{MakeMutator(OpUpsert, c2, "v", TTLUnlimitedPropagation)}
	if !sameMutators(m1, m2) || derivedHash(0, m1) != derivedHash(0, m2) {
		t.Fatal("mutators of two KeyInfos of one name differ for the derived cache")
	}
	m3 := []Mutator{MakeMutator(OpUpsert, a, "v", TTLUnlimitedPropagation)}
	if sameMutators(m1, m3) {
		t.Fatal("mutators of different keys compare equal")
	}
}

// TestInternPeerKeyBudget: names from outside (decoded tags) are interned
// only while the table is under a quarter of its bound, and an interned
// name is found by either call; NewKey's names keep the rest of the room.
func TestInternPeerKeyBudget(t *testing.T) {
	internedKeys.mu.RLock()
	n := len(internedKeys.m)
	internedKeys.mu.RUnlock()
	defer func(max int) { maxInternedKeys = max }(maxInternedKeys)
	maxInternedKeys = 4 * (n + 1) // room for one peer name
	p := InternPeerKey("peer/a")
	if InternPeerKey("peer/a") != p || InternKey("peer/a") != p {
		t.Fatal("a peer name with room was not interned")
	}
	if InternPeerKey("peer/b") == InternPeerKey("peer/b") {
		t.Fatal("a peer name past its budget was interned")
	}
	own := InternKey("peer/own") // NewKey's room is still there
	if InternKey("peer/own") != own || InternPeerKey("peer/own") != own {
		t.Fatal("a NewKey name was not interned after the peers' budget was spent")
	}
}
