package tag

import (
	"context"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/race"
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

// The derived-map cache (tag.New keyed by parent tags and mutators) never
// returns another input's result, however often each input recurs: the
// mutators differ in op, value, TTL or order, and the parents in a value
// or in how (and how often) they were built.
func TestNewDerivedCacheKeepsInputsApart(t *testing.T) {
	k1, k2, k3 := MustNewKey("derived/k1"), MustNewKey("derived/k2"), MustNewKey("derived/k3")
	pa, _ := New(context.Background(), Upsert(k1, "a"))
	pb, _ := New(context.Background(), Upsert(k1, "b"))
	// The value "x" from another buffer: equal strings that share no bytes.
	x := string([]byte{'x'})
	cases := []struct {
		parent func() context.Context
		ms     []Mutator
		want   string
	}{
		{func() context.Context { return pa }, []Mutator{Upsert(k2, "x")}, "{ {derived/k1 a}{derived/k2 x} }"},
		{func() context.Context { return pb }, []Mutator{Upsert(k2, "x")}, "{ {derived/k1 b}{derived/k2 x} }"},
		{func() context.Context { return pa }, []Mutator{Upsert(k2, x)}, "{ {derived/k1 a}{derived/k2 x} }"},
		{func() context.Context { return pa }, []Mutator{Upsert(k2, "y")}, "{ {derived/k1 a}{derived/k2 y} }"},
		{func() context.Context { return pa }, []Mutator{Insert(k1, "z")}, "{ {derived/k1 a} }"},
		{func() context.Context { return pa }, []Mutator{Upsert(k1, "z")}, "{ {derived/k1 z} }"},
		{func() context.Context { return pa }, []Mutator{Update(k3, "z")}, "{ {derived/k1 a} }"},
		{func() context.Context { return pa }, []Mutator{Delete(k1)}, "{  }"},
		{func() context.Context { return pa }, []Mutator{Upsert(k2, "1"), Upsert(k2, "2")}, "{ {derived/k1 a}{derived/k2 2} }"},
		{func() context.Context { return pa }, []Mutator{Upsert(k2, "2"), Upsert(k2, "1")}, "{ {derived/k1 a}{derived/k2 1} }"},
		{func() context.Context { return context.Background() }, []Mutator{Upsert(k2, "x")}, "{ {derived/k2 x} }"},
		// A parent built anew each time (per request) with the same tags.
		{func() context.Context {
			ctx, _ := New(context.Background(), Upsert(k1, "a"), Upsert(k3, "r"))
			return ctx
		}, []Mutator{Upsert(k2, "x")}, "{ {derived/k1 a}{derived/k2 x}{derived/k3 r} }"},
		// A decoded parent carries no set hash: never a key, still right.
		{func() context.Context {
			m, err := Decode(Encode(FromContext(pb)))
			if err != nil {
				t.Fatal(err)
			}
			return NewContext(context.Background(), m)
		}, []Mutator{Upsert(k2, "x")}, "{ {derived/k1 b}{derived/k2 x} }"},
	}
	for round := range 4 {
		for i, c := range cases {
			ctx, err := New(c.parent(), c.ms...)
			if err != nil {
				t.Fatal(err)
			}
			if got := FromContext(ctx).String(); got != c.want {
				t.Errorf("round %d case %d: %s; want %s", round, i, got, c.want)
			}
		}
		// TTL: the same key and value without propagation is another set.
		ctx, _ := New(pa, Upsert(k2, "x", WithTTL(TTLNoPropagation)))
		if enc := Encode(FromContext(ctx)); len(enc) != 1+(1+1+len("derived/k1")+1+1) {
			t.Errorf("round %d: TTL case encoded %d bytes; want only derived/k1=a", round, len(enc))
		}
	}
}

// tag.New with up to 8 mutators makes at most one allocation (the
// context) once its tag set recurs.
func TestNewAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts differ under -race")
	}
	ks := make([]Key, 8)
	for i := range ks {
		ks[i] = MustNewKey("allocs/k" + string(rune('a'+i)))
	}
	parent, _ := New(context.Background(), Upsert(ks[0], "p"))
	for _, n := range []int{1, 2, 4, 8} {
		fn := func() {
			var ms [8]Mutator
			for i := range n {
				ms[i] = Upsert(ks[i], "v")
			}
			if _, err := New(context.Background(), ms[:n]...); err != nil {
				t.Fatal(err)
			}
			if _, err := New(parent, ms[:n]...); err != nil {
				t.Fatal(err)
			}
		}
		fn()
		fn() // the second sight caches the set
		if got := testing.AllocsPerRun(1000, fn); got > 2 {
			t.Errorf("%d mutators: %v allocs for two tag.New; want at most 2", n, got)
		}
	}
}

// Goroutines deriving different tag sets from shared parents at once each
// get their own set: the derived and map caches' racing installs never
// hand one goroutine another's result.
func TestNewDerivedConcurrent(t *testing.T) {
	k1, k2 := MustNewKey("dconc/k1"), MustNewKey("dconc/k2")
	parents := []context.Context{context.Background()}
	for _, v := range []string{"a", "b"} {
		p, _ := New(context.Background(), Upsert(k1, v))
		parents = append(parents, p)
	}
	vals := []string{"0", "1", "2", "3", "4", "5", "6", "7"}
	errs := make(chan string, 4)
	for g := range 4 {
		go func() {
			var bad string
			for i := range 2000 {
				pi, vi := (i+g)%len(parents), (i*7+g)%len(vals)
				ctx, err := New(parents[pi], Upsert(k2, vals[vi]))
				want := "{ {dconc/k2 " + vals[vi] + "} }"
				if pi > 0 {
					want = "{ {dconc/k1 " + []string{"", "a", "b"}[pi] + "}{dconc/k2 " + vals[vi] + "} }"
				}
				if got := FromContext(ctx).String(); err != nil || got != want {
					bad = got + " want " + want
					break
				}
			}
			errs <- bad
		}()
	}
	for range 4 {
		if bad := <-errs; bad != "" {
			t.Error(bad)
		}
	}
}
