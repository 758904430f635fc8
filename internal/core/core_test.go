package core

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

func tagsOf(kv ...string) []Tag {
	var ts []Tag
	for i := 0; i < len(kv); i += 2 {
		m := MutUpsert(kv[i], kv[i+1], TTLUnlimitedPropagation)
		ts = m.Apply(ts)
	}
	return ts
}

func TestTableGrowsAndFinds(t *testing.T) {
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	const n = 5000
	for i := range n {
		a.RecordTags(tagsOf("k", fmt.Sprint(i)), 1)
	}
	for i := range n {
		a.RecordTags(tagsOf("k", fmt.Sprint(i)), 1)
	}
	if a.Len() != n {
		t.Fatalf("got %d series; want %d", a.Len(), n)
	}
	ss := a.AppendSeries(nil)
	if len(ss) != n {
		t.Fatalf("AppendSeries returned %d", len(ss))
	}
	for _, s := range ss {
		if s.ReadCount() != 2 {
			t.Fatalf("series %v count %d; want 2", s.ValueIDs(), s.ReadCount())
		}
	}
}

func TestFindComparesValuesNotJustHashes(t *testing.T) {
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	tab := a.table.Load()
	// Two series forced to the same hash.
	a.mu.Lock()
	s1 := a.newSeries(42, []string{"one"}, 1)
	s2 := a.newSeries(42, []string{"two"}, 1)
	a.setID(s1.id, s1)
	a.setID(s2.id, s2)
	a.mu.Unlock()
	tab.insert(s1)
	tab.insert(s2)
	if tab.find(a, 42, []string{"two"}) != s2 || tab.find(a, 42, []string{"one"}) != s1 || tab.find(a, 42, []string{"three"}) != nil {
		t.Error("find confused series with equal hashes")
	}
}

func TestBucketIndex(t *testing.T) {
	small := []float64{1, 2, 3}
	var large []float64
	for i := 1; i <= 40; i++ {
		large = append(large, float64(i))
	}
	for _, bounds := range [][]float64{nil, small, large} {
		for _, v := range []float64{-1, 0, 0.5, 1, 1.5, 2, 3, 3.5, 39.9, 40, 41, math.Inf(-1), math.Inf(1), math.NaN()} {
			// OpenCensus: the first bucket whose bound is above v, else the last.
			want := len(bounds)
			for i, b := range bounds {
				if v < b {
					want = i
					break
				}
			}
			if got := bucketIndex(bounds, v); got != want {
				t.Errorf("%d bounds, v=%v: got bucket %d; want %d", len(bounds), v, got, want)
			}
		}
	}
}

func TestStripesSumExactly(t *testing.T) {
	for _, kind := range []Kind{KindCount, KindSum, KindDistribution, testIntSum} {
		a := newTestAgg(kind, nil, []float64{10, 20}, 0)
		kind := a.kind
		a.RecordTags(nil, 5) // creates the series
		s := a.AppendSeries(nil)[0]
		s.inflate()
		if s.stripes.Load() == nil {
			t.Fatal("inflate did not stripe")
		}
		st := s.stripes.Load()
		for p := 0; p <= st.mask; p++ {
			if kind == KindDistribution {
				// The words of neighbouring cells never share a cache line,
				// whatever the allocator's alignment.
				if p > 0 {
					prev := st.dists[p-1]
					end := uintptr(unsafe.Pointer(&prev[len(prev)-1])) + 7
					if start := uintptr(unsafe.Pointer(&st.dists[p][0])); end/64 == start/64 {
						t.Errorf("distribution stripes %d and %d share a cache line (%#x, %#x)", p-1, p, end, start)
					}
				}
				continue
			}
			if addr := uintptrOf(&st.words[p*wordsPerLine]); addr%64 != 0 {
				t.Errorf("stripe %d starts mid cache line (%#x)", p, addr)
			}
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 1000 {
					a.RecordTags(nil, float64(g*1000+i)/100)
				}
			}()
		}
		wg.Wait()
		switch kind {
		case KindCount:
			if got := s.ReadCount(); got != 4001 {
				t.Errorf("count %d; want 4001", got)
			}
		case KindSum:
			// Σ_{0..3999} i/100 + 5 = 79980 + 5
			if got, want := s.ReadSum(), 79980.0+5; math.Abs(got-want) > 1e-6 {
				t.Errorf("sum %v; want %v", got, want)
			}
		case KindDistribution:
			b := make([]int64, 3)
			d := s.ReadDist(b)
			// Σ over 0..39.99 step 0.01, and 5: mean of all 4001 values.
			if want := (79980.0 + 5) / 4001; math.Abs(d.Mean-want) > 1e-9 {
				t.Errorf("merged mean %v; want %v", d.Mean, want)
			}
			if d.Count != 4001 || d.Min != 0 || d.Max != 39.99 || fmt.Sprint(b) != "[1001 1000 2000]" {
				t.Errorf("dist %+v buckets %v", d, b)
			}
		}
	}
}

func TestDetachDropsRecords(t *testing.T) {
	a := NewAggregator(KindCount, nil, nil, 0)
	a.RecordTags(nil, 1)
	a.Detach()
	a.RecordTags(nil, 1)
	if a.Len() != 0 || len(a.AppendSeries(nil)) != 0 {
		t.Error("a detached aggregator kept series")
	}
}

func TestTagMapCacheSlots(t *testing.T) {
	// More views than cache slots, all recorded with one map: each view must
	// still count exactly (colliding slots are overwritten, not confused).
	m := NewTagMap(tagsOf("k", "v"))
	var aggs []*Aggregator
	for range cacheSlots + 3 {
		aggs = append(aggs, NewAggregator(KindCount, []string{"k"}, nil, 0))
	}
	for range 10 {
		for _, a := range aggs {
			a.RecordMap(m, 1)
		}
	}
	for i, a := range aggs {
		if got := a.AppendSeries(nil)[0].ReadCount(); got != 10 {
			t.Errorf("view %d: count %d; want 10", i, got)
		}
	}
}

func TestApplyKeepsOrder(t *testing.T) {
	ts := tagsOf("c", "3", "a", "1", "b", "2", "a", "4")
	if len(ts) != 3 {
		t.Fatalf("got %d tags; want 3", len(ts))
	}
	for i := 1; i < len(ts); i++ {
		if !less(ts[i-1].KeyHash, ts[i-1].Key, ts[i].KeyHash, ts[i].Key) {
			t.Errorf("tags out of order: %v", ts)
		}
	}
	var keys []string
	for _, x := range NewTagMap(ts).SortedByName() {
		keys = append(keys, x.Key+"="+x.Value)
	}
	if !sort.StringsAreSorted(keys) || fmt.Sprint(keys) != "[a=4 b=2 c=3]" {
		t.Errorf("SortedByName %v", keys)
	}
}

func TestProjectMatchesHashValues(t *testing.T) {
	a := NewAggregator(KindCount, []string{"z", "a", "m"}, nil, 0)
	vals, h := a.project(nil, tagsOf("m", "1", "zz", "x", "a", "2"))
	if h != a.hashValues(vals) {
		t.Error("project and hashValues disagree")
	}
	byName := vals // view order: by name
	if fmt.Sprint(byName) != "[2 1 ]" {
		t.Errorf("project gave %q; want the values of a, m and z", byName)
	}
	a.mu.Lock()
	s := a.newSeries(h, vals, 1)
	a.mu.Unlock()
	for i, id := range s.ValueIDs() {
		if Interned()[id] != byName[i] {
			t.Errorf("ValueIDs()[%d] is %q; want %q", i, Interned()[id], byName[i])
		}
	}
	if fmt.Sprint(byName) != "[2 1 ]" {
		t.Errorf("values by name %q; want [2 1 \"\"]", byName)
	}
}

func TestStripeCount(t *testing.T) {
	n := stripeCount()
	if n < 2 || n&(n-1) != 0 || n < min(runtime.GOMAXPROCS(0), 64) {
		t.Errorf("stripeCount %d for GOMAXPROCS %d", n, runtime.GOMAXPROCS(0))
	}
	// Every P and every CPU a stripe of its own, up to 256 (pinnedAdd).
	w := wordStripeCount()
	if want := min(max(runtime.GOMAXPROCS(0), runtime.NumCPU()), 256); w < 2 || w&(w-1) != 0 || w < want || w >= 2*max(want, 2) {
		t.Errorf("wordStripeCount %d for GOMAXPROCS %d, %d CPUs", w, runtime.GOMAXPROCS(0), runtime.NumCPU())
	}
}

func TestMergeAndSubInvertEachOther(t *testing.T) {
	// Welford over a, over b, over a+b; Merge(a,b) must match a+b and
	// Sub(a+b, a) must match b.
	welford := func(xs []float64) DistStats {
		c := newDistCells(1, 1)[0]
		var keep atomic.Bool
		keep.Store(true)
		for _, x := range xs {
			c.add(nil, &keep, x)
		}
		b := make([]int64, 1)
		return c.read(b, false)
	}
	xs := []float64{1000, 0.5, 0.25, 3, 7, 7, 9.5}
	ys := []float64{2, 4, 8, 16}
	a, b, ab := welford(xs), welford(ys), welford(append(append([]float64{}, xs...), ys...))
	m := Merge(a, b)
	s := Sub(ab, a, true)
	rel := func(x, y float64) bool { return math.Abs(x-y) <= 1e-12*math.Max(1, math.Abs(y)) }
	if m.Count != ab.Count || !rel(m.Mean, ab.Mean) || !rel(m.M2, ab.M2) || m.Sum != ab.Sum || m.Min != 0.25 || m.Max != 1000 {
		t.Errorf("Merge %+v; want %+v", m, ab)
	}
	if s.Count != b.Count || !rel(s.Mean, b.Mean) || !rel(s.M2, b.M2) || !rel(s.Sum, b.Sum) {
		t.Errorf("Sub %+v; want %+v", s, b)
	}
	if z := Sub(ab, ab, true); z.Count != 0 {
		t.Errorf("Sub of equal reads: %+v", z)
	}
}

// TestHashSeparatesValues: the series hash the record path computes
// (project, from the tags' precomputed hashes) tells apart value lists
// that concatenate alike or swap a value between keys.
func TestHashSeparatesValues(t *testing.T) {
	a := NewAggregator(KindCount, []string{"k1", "k2"}, nil, 0)
	hash := func(kv ...string) uint64 {
		_, h := a.project(nil, tagsOf(kv...))
		return h
	}
	for _, tc := range [][2][]string{
		{{"k1", "a", "k2", "bc"}, {"k1", "ab", "k2", "c"}},
		{{"k2", "x"}, {"k1", "x"}},
		{{"k1", "", "k2", "x"}, {"k1", "x", "k2", ""}},
		{{"k1", "x", "k2", "y"}, {"k1", "y", "k2", "x"}},
	} {
		if hash(tc[0]...) == hash(tc[1]...) {
			t.Errorf("%q and %q hash alike", tc[0], tc[1])
		}
	}
	// Absent and empty are one row (OpenCensus): they must hash alike.
	if hash("k2", "x") != hash("k1", "", "k2", "x") {
		t.Error("an absent key and an empty value hash differently")
	}
}

func TestDistCellPadding(t *testing.T) {
	cells := newDistCells(3, 5)
	if len(cells[0]) != dBuckets+5 {
		t.Fatalf("cell of %d words", len(cells[0]))
	}
	for i := 1; i < len(cells); i++ {
		gap := uintptr(unsafe.Pointer(&cells[i][0])) - uintptr(unsafe.Pointer(&cells[i-1][len(cells[i-1])-1])) - 8
		if gap < 56 {
			t.Errorf("cells %d and %d are %d bytes apart; want at least 56", i-1, i, gap)
		}
	}
}

func TestCardinalityLimitOverflows(t *testing.T) {
	a := NewAggregator(KindCount, []string{"k"}, nil, 10)
	m := NewTagMap(tagsOf("k", "cached"))
	for i := range 1000 {
		a.RecordTags(tagsOf("k", fmt.Sprint(i)), 1) // "0".."9" fill the table
	}
	for range 1000 {
		a.RecordMap(m, 1) // a new combination: overflows, then hits m's cache
	}
	if a.Len() != 10 {
		t.Fatalf("%d live series; want the limit, 10", a.Len())
	}
	var total int64
	for _, s := range a.AppendSeries(nil) {
		total += s.ReadCount()
	}
	o := a.Overflow()
	if o == nil {
		t.Fatal("no overflow series")
	}
	total += o.ReadCount()
	if total != 2000 {
		t.Errorf("total %d over series and overflow; want every record, 2000", total)
	}
	if got, want := a.Overflowed(), uint64(2000-10); got != want {
		t.Errorf("overflowed %d; want %d", got, want)
	}
	for _, id := range o.ValueIDs() {
		if id != 0 {
			t.Errorf("overflow series has a tag value %q", Interned()[id])
		}
	}
}

func TestCardinalityLimitConcurrentSafe(t *testing.T) {
	a := NewAggregator(KindSum, []string{"k"}, nil, 50)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				a.RecordTags(tagsOf("k", fmt.Sprint(g*500+i)), 1)
			}
		}()
	}
	wg.Wait()
	sum := a.Overflow().ReadSum()
	for _, s := range a.AppendSeries(nil) {
		sum += s.ReadSum()
	}
	if a.Len() != 50 || sum != 2000 || a.Overflowed() != 2000-50 {
		t.Errorf("len %d, sum %v, overflowed %d; want 50, 2000, 1950", a.Len(), sum, a.Overflowed())
	}
}

// TestOverflowRaceKeepsExistingRow: two goroutines record the same new tag
// combination into a view limited to one row. A review found that the one
// that lost the race to create the series could see the view full, miss
// the series (inserted meanwhile) and record into the overflow row, and
// its tag map then cached the overflow series for good.
func TestOverflowRaceKeepsExistingRow(t *testing.T) {
	trials := 20000
	if testing.Short() {
		trials = 2000
	}
	tg := tagsOf("k", "v")
	for i := range trials {
		a := NewAggregator(KindCount, []string{"k"}, nil, 1)
		m1, m2 := NewTagMap(tg), NewTagMap(tg)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, m := range []*TagMap{m1, m2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				a.RecordMap(m, 1)
			}()
		}
		close(start)
		wg.Wait()
		if a.Overflow() != nil {
			t.Fatalf("trial %d: a record of the view's only tag combination went to the overflow row", i)
		}
	}
}

// TestReaderDoesNotStripe: an exporter reading a distribution while one
// goroutine records it must not make the series stripe (which would also
// lose the bit-for-bit equality with OpenCensus's sequential Welford).
func TestReaderDoesNotStripe(t *testing.T) {
	a := NewAggregator(KindDistribution, nil, []float64{10}, 0)
	a.RecordTags(nil, 1)
	s := a.AppendSeries(nil)[0]
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]int64, 2)
		for {
			select {
			case <-stop:
				return
			default:
				s.ReadDist(b)
			}
		}
	}()
	for i := range 300000 {
		a.RecordTags(nil, float64(i%20))
	}
	close(stop)
	<-done
	if s.stripes.Load() != nil {
		t.Error("a single recorder's series striped because a reader held its cell")
	}
}

// TestRecordDistNKeepsRoundingErrors: RecordDistN (n copies at once)
// keeps the sum's rounding error and the sum of squares as single records
// under a delta reader do, so a delta read after a long history of large
// values is exact (issue 12, item 5).
func TestRecordDistNKeepsRoundingErrors(t *testing.T) {
	a := NewAggregator(KindDistribution, nil, []float64{1}, 0)
	a.RecordDistN(nil, 1e9+0.3, 1_000_000)
	s := a.AppendSeries(nil)[0]
	buf := make([]int64, 2)
	prefix := s.ReadDist(buf)
	a.RecordDistN(nil, 0.01, 10)
	a.RecordDistN(nil, 0.03, 10)
	d := Sub(s.ReadDist(buf), prefix, true)
	// 10 x 0.01 + 10 x 0.03 = 0.4, mean 0.02; the running sum, 1e15, has
	// an ulp of 0.125: without the rounding errors the delta sum would be
	// a multiple of it.
	if d.Count != 20 || math.Abs(d.Sum-0.4) > 1e-12 || math.Abs(d.Mean-0.02) > 1e-12 || math.Abs(d.M2-0.002) > 5e-8 {
		// sum_sq_dev to double-double's precision of the sum of squares,
		// 1e24 here: about 1e24 x 2^-104 = 5e-8 at worst (5.4e-9 measured).
		t.Errorf("delta %+v; want count 20, sum 0.4, mean 0.02, sum_sq_dev 0.002", d)
	}
}

// TestDistHeadLayout: distHead, add's typed view of a cell's first words,
// has its fields at the cell's word offsets.
func TestDistHeadLayout(t *testing.T) {
	var h distHead
	for _, f := range []struct {
		name      string
		off, want uintptr
	}{
		{"count", unsafe.Offsetof(h.count), dCount},
		{"mean", unsafe.Offsetof(h.mean), dMean},
		{"m2", unsafe.Offsetof(h.m2), dM2},
		{"sum", unsafe.Offsetof(h.sum), dSum},
		{"min", unsafe.Offsetof(h.min), dMin},
		{"max", unsafe.Offsetof(h.max), dMax},
		{"sumLo", unsafe.Offsetof(h.sumLo), dSumLo},
		{"q", unsafe.Offsetof(h.q), dQ},
		{"qLo", unsafe.Offsetof(h.qLo), dQLo},
		{"posInf", unsafe.Offsetof(h.posInf), dPosInf},
		{"negInf", unsafe.Offsetof(h.negInf), dNegInf},
		{"nan", unsafe.Offsetof(h.nan), dNaN},
	} {
		if f.off != 8*f.want {
			t.Errorf("distHead.%s at byte %d; want word %d (byte %d)", f.name, f.off, f.want, 8*f.want)
		}
	}
	if unsafe.Sizeof(h) != 8*dBuckets {
		t.Errorf("distHead is %d bytes; want the %d words before the buckets", unsafe.Sizeof(h), dBuckets)
	}
}

// TestOwnContextCarriesItsMap pins the layout a record of a cold context
// relies on: a context built with a new map (NewTagContext's miss) holds
// the map inside its own allocation, FromContext returns it without
// loading a pointer, and the context's Value agrees, for every size form.
// ownRuns numbers the runs of TestOwnContextCarriesItsMap.
var ownRuns atomic.Int64

func TestOwnContextCarriesItsMap(t *testing.T) {
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "parent")
	run := ownRuns.Add(1) // a tag set new to the map cache on every run (-count)
	for _, n := range []int{1, 2, 3, 4, 5, 8, 9, 16} {
		tags := make([]Tag, n)
		for i := range tags {
			k, v := fmt.Sprintf("own-%d-%d-k%d", run, n, i), fmt.Sprintf("v%d", i)
			tags[i] = Tag{Key: k, Value: v, KeyHash: HashString(k), ValueHash: HashString(v), TTL: -1}
		}
		tags = Canonical(tags)
		ctx := NewTagContext(parent, tags)
		own, ok := ownMap(ctx)
		if !ok {
			t.Fatalf("%d tags: NewTagContext's first context is %T; want *ownCtx or *rootCtx (its map inside it)", n, ctx)
		}
		m := FromContext(ctx)
		if m != own {
			t.Fatalf("%d tags: FromContext = %p; want the context's own map %p", n, m, own)
		}
		if got := ctx.Value(ctxKey{}); got != m {
			t.Fatalf("%d tags: Value(ctxKey) = %v; want the map FromContext returns", n, got)
		}
		if !sameTags(m.Tags(), tags) || m.hash != SetHash(tags) {
			t.Fatalf("%d tags: the map holds %v (hash %x); want %v (hash %x)", n, m.Tags(), m.hash, tags, SetHash(tags))
		}
		if got := ctx.Value(key{}); got != "parent" {
			t.Fatalf("%d tags: the parent's value is %v; want \"parent\"", n, got)
		}
	}
}

// TestAtomicFieldLayout pins what tryAdd relies on when it applies the
// sync/atomic functions to a series' fields: atomic.Uint64's word and
// atomic.Pointer's pointer are at the start of their structs, so the
// field's address is the word's.
func TestAtomicFieldLayout(t *testing.T) {
	var s Series
	s.word.Store(0x1234_5678_9abc_def0)
	if got := atomic.LoadUint64((*uint64)(unsafe.Pointer(&s.word))); got != 0x1234_5678_9abc_def0 {
		t.Fatalf("the word at the atomic.Uint64 field's address is %#x; want %#x", got, uint64(0x1234_5678_9abc_def0))
	}
	st := &stripes{mask: 1}
	s.stripes.Store(st)
	if got := atomic.LoadPointer((*unsafe.Pointer)(unsafe.Pointer(&s.stripes))); got != unsafe.Pointer(st) {
		t.Fatalf("the pointer at the atomic.Pointer field's address is %p; want %p", got, st)
	}
	if ptr := unsafe.Sizeof(unsafe.Pointer(nil)); unsafe.Sizeof(s.word) != 8 || unsafe.Sizeof(s.stripes) != ptr {
		t.Fatalf("atomic.Uint64 is %d bytes and atomic.Pointer %d; want 8 and a pointer's %d", unsafe.Sizeof(s.word), unsafe.Sizeof(s.stripes), ptr)
	}
	if uintptr(unsafe.Pointer(&s.word))%8 != 0 {
		t.Fatal("the atomic.Uint64 word is not 8-byte aligned: 64-bit atomics on it would fault on 32-bit platforms")
	}
}

// TestIntegerAddSeesSeal checks the atomic add's side of a seal, for the
// integer cells (a Count's, an integer Sum's own): an add to a sealed word
// counts nothing (tryAdd reports false, and the word stays sealed, however
// many such adds came, of either sign up to tryAdd's 2^31), and the slow
// paths (addInt, addIntSum) report it sealed.
func TestIntegerAddSeesSeal(t *testing.T) {
	for _, kind := range []Kind{KindCount, testIntSum} {
		a := newTestAgg(kind, []string{"k"}, nil, 0)
		a.RecordTags(tagsOf("k", "v"), 1)
		s := a.AppendSeries(nil)[0]
		s.word.Store(intSealedWord) // as seal leaves it, marker aside
		for i := range 100 {
			v := 1.0
			if kind == testIntSum {
				v = 1<<31 - 1
				if i%2 == 0 {
					v = -v
				}
			}
			if ok, _ := s.tryAdd(v); ok {
				t.Fatalf("kind %d: tryAdd counted into a sealed word", kind)
			}
		}
		if w := s.word.Load(); !intSealed(w) {
			t.Fatalf("kind %d: after adds to a sealed word it reads %#x: not sealed any more", kind, w)
		}
		r := addInt(&s.word, 1)
		if kind == testIntSum {
			r = addIntSum(&s.word, 1)
		}
		if r != addSealed {
			t.Fatalf("kind %d: the slow add on a sealed word returned %d; want addSealed", kind, r)
		}
	}
}

// TestCountProbeStripes checks the contention probe of a Count's atomic
// add: a word that changed since the add (another recorder's add) stripes
// the series; an unchanged one leaves it as it is. Records then still sum
// exactly.
func TestCountProbeStripes(t *testing.T) {
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	a.RecordTags(tagsOf("k", "v"), 1)
	s := a.AppendSeries(nil)[0]
	s.probe(s.word.Load())
	if s.Striped() {
		t.Fatal("a probe of an unchanged word striped the series")
	}
	s.probe(s.word.Load() - 1) // as if another add came after ours
	if !s.Striped() {
		t.Fatal("a probe of a changed word left the series unstriped")
	}
	for range 999 {
		a.RecordTags(tagsOf("k", "v"), 1)
	}
	if got := s.ReadCount(); got != 1000 {
		t.Fatalf("count after striping = %d; want 1000", got)
	}
}
