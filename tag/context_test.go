package tag

import (
	"context"
	"testing"
	"time"
)

type parentKey struct{}

// The context tag.New returns is a child of its parent, whatever path built
// it (a new tag set, its second sight, a cached map): values, deadline and
// cancellation pass through, and the tags are exactly the mutated set.
func TestNewIsChildContext(t *testing.T) {
	k1, k2 := MustNewKey("ctx/k1"), MustNewKey("ctx/k2")
	deadline := time.Now().Add(time.Hour)
	parent, cancel := context.WithDeadline(context.WithValue(context.Background(), parentKey{}, "p"), deadline)
	defer cancel()
	for i := range 4 { // first sight, second (cached), then hits
		ctx, err := New(parent, Upsert(k1, "a"), Upsert(k2, "b0"))
		if err != nil {
			t.Fatal(err)
		}
		if got := ctx.Value(parentKey{}); got != "p" {
			t.Errorf("round %d: parent value %v; want p", i, got)
		}
		if d, ok := ctx.Deadline(); !ok || !d.Equal(deadline) {
			t.Errorf("round %d: deadline %v %v; want %v", i, d, ok, deadline)
		}
		if got := FromContext(ctx).String(); got != "{ {ctx/k1 a}{ctx/k2 b0} }" {
			t.Errorf("round %d: tags %s", i, got)
		}
	}
	ctx, _ := New(parent, Upsert(k1, "a"))
	cancel()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("child not cancelled with its parent")
	}
	if ctx.Err() != context.Canceled {
		t.Errorf("Err %v; want context.Canceled", ctx.Err())
	}
}

// Tag sets that differ only in a value, in a TTL, or by having a key more
// never share a cached map, however often each recurs.
func TestNewCacheKeepsSetsApart(t *testing.T) {
	k1, k2 := MustNewKey("cache/k1"), MustNewKey("cache/k2")
	sets := [][]Mutator{
		{Upsert(k1, "x")},
		{Upsert(k1, "y")},
		{Upsert(k1, "x", WithTTL(TTLNoPropagation))},
		{Upsert(k1, "x"), Upsert(k2, "")},
	}
	want := []string{"{ {cache/k1 x} }", "{ {cache/k1 y} }", "{ {cache/k1 x} }", "{ {cache/k1 x}{cache/k2 } }"}
	for round := range 3 {
		for i, ms := range sets {
			ctx, err := New(context.Background(), ms...)
			if err != nil {
				t.Fatal(err)
			}
			m := FromContext(ctx)
			if got := m.String(); got != want[i] {
				t.Errorf("round %d set %d: %s; want %s", round, i, got, want[i])
			}
			// TTL tells set 2 from set 0: only set 2 is left out of Encode.
			if enc := Encode(m); (i == 2) != (len(enc) == 1) {
				t.Errorf("round %d set %d: encoded %d bytes; TTL mixed up", round, i, len(enc))
			}
		}
	}
}

// NewContext with a nil map hides the tags of the parent.
func TestNewContextNilHides(t *testing.T) {
	ctx, _ := New(context.Background(), Upsert(MustNewKey("hide/k"), "v"))
	if m := FromContext(NewContext(ctx, nil)); m != nil {
		t.Errorf("got %v; want no map", m)
	}
}
