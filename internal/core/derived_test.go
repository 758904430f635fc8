package core

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

var derivedRuns atomic.Int64

// freshTags returns tags of kv built from new strings (other bytes than
// kv's literals), as tag values that come from a request are.
func freshTags(kv ...string) []Tag {
	c := make([]string, len(kv))
	for i, s := range kv {
		c[i] = strings.Clone(s)
	}
	return tagsOf(c...)
}

// TestDerivedKeysCachedParentByAddress: an entry installed while its
// parent tag set was a request's own map (strings of that request) is
// republished, on its first hit with the map the map cache then returns
// for that set, to keep that map; later hits find the parent by its
// address and give the same result, and a parent of other tags (or none)
// still misses. A request's own map is never kept.
func TestDerivedKeysCachedParentByAddress(t *testing.T) {
	run := derivedRuns.Add(1) // a tag set new to both caches on every run (-count)
	pk, mk := fmt.Sprintf("derived-%d-parent", run), fmt.Sprintf("derived-%d-mut", run)
	muts := []Mutator{MutUpsert(mk, "gold", TTLUnlimitedPropagation)}

	// Two requests, each with its own map of the parent set (the map
	// cache has not seen it twice yet when the first is built).
	own := func() *TagMap {
		m, _ := ownMap(NewTagContext(context.Background(), freshTags(pk, "eu")))
		return m
	}
	p1 := own()
	if p1 == nil {
		t.Fatal("the first context of a new tag set is not a context with its own map")
	}
	result := muts[0].Apply(AppendTags(nil, p1.Tags()))
	CachedTagMap(result) // seen
	want := CachedTagMap(result)
	if want == nil {
		t.Fatal("the result tag set seen twice is not cached")
	}
	for range 2 { // the second miss installs the entry
		if m, h := Derived(p1, muts); m == nil {
			RememberDerived(p1, muts, h, want)
		}
	}
	m, h := Derived(p1, muts)
	if m != want {
		t.Fatalf("Derived after two misses = %p; want the remembered map %p", m, want)
	}
	d := derivedCache[h&(derivedSize-1)].Load()
	if d.pm != nil {
		t.Fatalf("the entry keeps the request's own map %p; want none (it would pin the request's context)", d.pm)
	}

	// The parent set now recurs: the map cache returns one map for it.
	NewTagContext(context.Background(), freshTags(pk, "eu"))
	pc := FromContext(NewTagContext(context.Background(), freshTags(pk, "eu")))
	if !pc.cached() {
		t.Fatal("the parent set seen three times has no cached map")
	}
	if m, _ := Derived(pc, muts); m != want {
		t.Fatalf("Derived with the cached parent = %p; want %p", m, want)
	}
	if d := derivedCache[h&(derivedSize-1)].Load(); d.pm != pc || !sameTags(d.ptags, pc.Tags()) || d.m != want {
		t.Fatalf("after a hit with the cached parent the entry keeps parent %p (tags %v) and result %p; want %p, %v, %p", d.pm, d.ptags, d.m, pc, pc.Tags(), want)
	}
	for _, p := range []*TagMap{pc, p1} {
		if m, _ := Derived(p, muts); m != want {
			t.Fatalf("Derived(%p) = %p; want %p for every map of the parent set", p, m, want)
		}
	}
	if d := derivedCache[h&(derivedSize-1)].Load(); d.pm != pc {
		t.Fatalf("a hit with a request's own map replaced the kept parent %p by %p", pc, d.pm)
	}
	other := FromContext(NewTagContext(context.Background(), freshTags(pk, "us")))
	for _, p := range []*TagMap{other, nil} {
		if m, _ := Derived(p, muts); m == want {
			t.Fatalf("Derived(%v) found the map derived from %v", p.Tags(), pc.Tags())
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { Derived(pc, muts) }); allocs != 0 {
		t.Fatalf("Derived with the kept parent: %v allocs; want 0", allocs)
	}
}
