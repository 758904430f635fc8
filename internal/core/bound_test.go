package core

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

func countOf(t *testing.T, a *Aggregator) int64 {
	t.Helper()
	ss := a.AppendSeries(nil)
	if len(ss) != 1 {
		t.Fatalf("got %d series; want 1", len(ss))
	}
	return ss[0].ReadCount()
}

// A handle's series is sealed, revived by the handle's record, then freed:
// the next record goes to the successor, which the handle then keeps.
func TestBoundFollowsEviction(t *testing.T) {
	forRecorders(t, testBoundFollowsEviction)
}

// boundRecorders are the two ways to record through a Bound: Record, and
// RecordInt, which adds to a Count's or an integer Sum's own cell.
var boundRecorders = []struct {
	name string
	rec  func(b *Bound, v int64)
}{
	{"Record", func(b *Bound, v int64) { b.Record(float64(v)) }},
	{"RecordInt", (*Bound).RecordInt},
}

func forRecorders(t *testing.T, test func(t *testing.T, rec func(*Bound, int64))) {
	for _, r := range boundRecorders {
		t.Run(r.name, func(t *testing.T) { test(t, r.rec) })
	}
}

func testBoundFollowsEviction(t *testing.T, rec func(*Bound, int64)) {
	m := &Measure{Name: "bound/evict"}
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	m.Subscribe(a)
	r := a.AddReader()
	b := m.Bind(tagsOf("k", "x"))
	rec(b, 1)
	s := a.AppendSeries(nil)[0]
	s.Evict()
	rec(b, 1) // revives s
	if s.Sealed() || countOf(t, a) != 2 {
		t.Fatalf("after revival: sealed %v, count %d; want live, 2", s.Sealed(), countOf(t, a))
	}
	s.Evict()
	r.Ack(a.SealSeq())
	a.Sweep()
	if a.Len() != 0 {
		t.Fatalf("not freed: %d series", a.Len())
	}
	rec(b, 1)
	rec(b, 1)
	n := a.AppendSeries(nil)
	if len(n) != 1 || n[0] == s || n[0].ReadCount() != 2 {
		t.Fatalf("successor %v (of %p): want one new series counting 2", n, s)
	}
	if got := b.st.Load().slots()[0].Load(); got != n[0] {
		t.Errorf("the handle keeps %p; want the successor %p", got, n[0])
	}
}

// A handle bound before any view records into views subscribed later, and
// into the new aggregator of a view unregistered and registered again, not
// into the detached one.
func TestBoundFollowsSubscriptions(t *testing.T) {
	forRecorders(t, testBoundFollowsSubscriptions)
}

func testBoundFollowsSubscriptions(t *testing.T, rec func(*Bound, int64)) {
	m := &Measure{Name: "bound/subs"}
	b := m.Bind(tagsOf("k", "x"))
	rec(b, 1) // no view: dropped
	a1 := NewAggregator(KindCount, []string{"k"}, nil, 0)
	m.Subscribe(a1)
	rec(b, 1)
	if got := countOf(t, a1); got != 1 {
		t.Fatalf("first view: got count %d; want 1", got)
	}
	m.Unsubscribe(a1)
	a1.Detach()
	rec(b, 1) // no view again
	a2 := NewAggregator(KindCount, []string{"k"}, nil, 0)
	m.Subscribe(a2)
	rec(b, 1)
	rec(b, 1)
	if got := countOf(t, a2); got != 2 {
		t.Errorf("view registered again: got count %d; want 2", got)
	}
	if a1.Len() != 0 {
		t.Errorf("detached view holds %d series; want 0", a1.Len())
	}
	// Two views: each gets every record.
	a3 := NewAggregator(KindSum, nil, nil, 0)
	m.Subscribe(a3)
	rec(b, 5)
	if got := countOf(t, a2); got != 3 {
		t.Errorf("count view: got %d; want 3", got)
	}
	if got := a3.AppendSeries(nil)[0].ReadSum(); got != 5 {
		t.Errorf("sum view (no tag keys): got %v; want 5", got)
	}
}

// A handle's first state takes RecordInt's fast path while its ctl word
// is the current epoch's: a view registered over another measure moves the
// epoch on, the next record checks the handle's own list, finds it
// current and stamps the state again; a view registered over the handle's
// measure sends its records to both views. Every record counts once.
func TestBoundEpoch(t *testing.T) {
	m := &Measure{Name: "bound/epoch"}
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	m.Subscribe(a)
	b := m.Bind(tagsOf("k", "x"))
	b.RecordInt(1) // resolves the series, attaches the cell
	fast := func() bool { return b.first.ctl.Load() == epochs.count.Load() }
	if !fast() {
		t.Fatalf("after the first record: ctl %#x; want %#x (attached, current)", b.first.ctl.Load(), epochs.count.Load())
	}
	b.RecordInt(1)
	other := &Measure{Name: "bound/epoch/other"}
	other.Subscribe(NewAggregator(KindCount, nil, nil, 0))
	if fast() {
		t.Fatal("the epoch did not move on at a view registration")
	}
	b.RecordInt(1) // checks the list, stamps the state
	if !fast() || b.st.Load() != &b.first {
		t.Errorf("after a record: ctl %#x, first state %v; want %#x, true", b.first.ctl.Load(), b.st.Load() == &b.first, epochs.count.Load())
	}
	b.RecordInt(1)
	if got := countOf(t, a); got != 4 || b.first.own.Load() != 3 {
		t.Errorf("count %d, own cell %d; want 4 and 3", got, b.first.own.Load())
	}
	a2 := NewAggregator(KindSum, nil, nil, 0)
	m.Subscribe(a2)
	b.RecordInt(7)
	b.RecordInt(7)
	var sum float64
	if ss := a2.AppendSeries(nil); len(ss) == 1 {
		sum = ss[0].ReadSum()
	}
	if got := countOf(t, a); got != 6 || sum != 14 {
		t.Errorf("two views: count %d, sum %v; want 6 and 14", got, sum)
	}
}

// Handles record while views over another measure and over their own
// come and go, so that their states go stale, are stamped again and are
// replaced under them: the view registered throughout counts every record
// exactly once.
func TestBoundEpochChurnConcurrentSafe(t *testing.T) {
	m := &Measure{Name: "bound/epoch/churn"}
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	m.Subscribe(a)
	const G, N = 4, 20000
	var bs [G]*Bound
	for g := range bs {
		bs[g] = m.Bind(tagsOf("k", []string{"x", "y"}[g%2]))
	}
	other := &Measure{Name: "bound/epoch/churn/other"}
	var done atomic.Bool
	churned := make(chan int)
	go func() {
		i := 0
		for ; !done.Load(); i++ {
			o := NewAggregator(KindCount, nil, nil, 0)
			other.Subscribe(o)
			if i%8 == 0 {
				s := NewAggregator(KindSum, nil, nil, 0)
				m.Subscribe(s)
				m.Unsubscribe(s)
				s.Detach()
			}
			other.Unsubscribe(o)
			o.Detach()
		}
		churned <- i
	}()
	onGoroutines(G, func(g int) {
		for range N {
			bs[g].RecordInt(1)
		}
	})
	done.Store(true)
	t.Logf("%d view changes", 2*<-churned)
	var got int64
	for _, s := range a.AppendSeries(nil) {
		got += s.ReadCount()
	}
	if got != G*N {
		t.Errorf("count %d; want %d", got, G*N)
	}
}

// Goroutines record through one handle while a reader seals and frees its
// series and a second view is subscribed and unsubscribed: the reader's
// totals of the first view equal the records exactly.
func TestBoundEvictRacesRecordersConcurrentSafe(t *testing.T) {
	forRecorders(t, testBoundEvictRacesRecorders)
}

func testBoundEvictRacesRecorders(t *testing.T, rec func(*Bound, int64)) {
	for _, kind := range []Kind{KindCount, testIntSum} {
		t.Run(map[Kind]string{KindCount: "count", testIntSum: "intsum"}[kind], func(t *testing.T) { boundEvictRace(t, rec, kind) })
	}
}

func boundEvictRace(t *testing.T, rec func(*Bound, int64), kind Kind) {
	m := &Measure{Name: "bound/race"}
	a := newTestAgg(kind, []string{"k"}, nil, 0)
	m.Subscribe(a)
	b := m.Bind(tagsOf("k", "x"))
	evictRace(t, m, a, kind, 4, 1, func() { rec(b, 1) })
}

// evictRace runs G goroutines calling record (one record of 1 into a, a
// Count or an integer Sum of m, each; or of any value into a histogram of
// one bound, read as its count) against a reader that evicts every
// series of a each round and frees the sealed ones (acknowledges and
// sweeps) one round in sweepEvery, while another view is subscribed to m
// and unsubscribed beside: the reads must add up to every record. It ends
// on the reader's 300th seal, an event however slow the machine (120 s is
// only a safety net).
func evictRace(t *testing.T, m *Measure, a *Aggregator, kind Kind, G, sweepEvery int, record func()) {
	t.Helper()
	r := a.AddReader()
	var stop atomic.Bool
	recorded := make([]int64, G)
	var wg, started sync.WaitGroup
	start := make(chan struct{})
	for g := range G {
		wg.Add(1)
		started.Add(1)
		go func() {
			defer wg.Done()
			started.Done()
			<-start
			for !stop.Load() {
				record()
				recorded[g]++
			}
		}()
	}
	started.Wait()
	close(start)
	last := map[*Series]int64{}
	buf := make([]int64, 2)
	read := func(sweep bool) {
		seq := a.SealSeq()
		for _, s := range a.AppendSeries(nil) {
			last[s] = readValue(s, buf)
		}
		if sweep {
			r.Ack(seq)
			a.Sweep()
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	other := NewAggregator(KindCount, nil, nil, 0)
	deadline := time.Now().Add(120 * time.Second)
	for i := 0; ; i++ {
		if a.SealSeq() >= 300 {
			stop.Store(true)
		}
		if time.Now().After(deadline) && !stop.Load() {
			stop.Store(true)
			t.Errorf("only %d seals in 120 s", a.SealSeq())
		}
		select {
		case <-done:
			read(true)
			read(true) // sealed series are read once more, then freed
			var total, want int64
			for _, v := range last {
				total += v
			}
			for _, n := range recorded {
				want += n
			}
			if total != want {
				t.Fatalf("read %d in total; want %d (evicted %d)", total, want, a.Evicted())
			}
			return
		default:
		}
		read(i%sweepEvery == sweepEvery-1)
		for _, s := range a.AppendSeries(nil) {
			s.Evict()
		}
		if i%4 == 0 {
			m.Subscribe(other)
		} else if i%4 == 2 {
			m.Unsubscribe(other)
		}
	}
}

// TestBoundLayout: a Bound, its first state included, is one 64-byte
// size class on 64-bit platforms, so that a record of one view reads and
// writes one cache line of it (see Bound). On 32-bit platforms (4-byte
// pointers) it is 48 bytes and no cache-line claim is made.
func TestBoundLayout(t *testing.T) {
	var b Bound
	want := uintptr(64)
	if unsafe.Sizeof(uintptr(0)) == 4 {
		want = 48
	}
	if size := unsafe.Sizeof(b); size != want {
		t.Errorf("Bound is %d bytes; want %d (one line on 64-bit platforms, with its first state)", size, want)
	}
	// The epoch's words have their cache line to themselves.
	start, end := uintptr(unsafe.Pointer(&epochs)), uintptr(unsafe.Pointer(&epochs))+unsafe.Sizeof(epochs)
	line := uintptr(unsafe.Pointer(&epochs.sum)) &^ 63
	if line < start || line+64 > end || uintptr(unsafe.Pointer(&epochs.count))+8 > line+64 {
		t.Errorf("the epoch's line [%#x, %#x) is not inside its padding [%#x, %#x)", line, line+64, start, end)
	}
	m := MeasureFor("bound/layout", "", "")
	b.Init(m, nil)
	if b.st.Load() != &b.first {
		t.Error("Init did not install the inline state")
	}
}

// A hash collision in the map cache is caught by comparing the tags: the
// cached map of other tags is never returned.
func TestCachedMapComparesTags(t *testing.T) {
	a, b := tagsOf("k", "a"), tagsOf("k", "b")
	const h = 12345 // the same (forced) hash for both
	cachedMap(a, h)
	ma := cachedMap(a, h) // second sight: cached
	if ma == nil || !sameTags(ma.Tags(), a) {
		t.Fatalf("second sight of a: got %v; want a cached map of a", ma)
	}
	// (The seen mark holds the shared hash, so b is cached at once.)
	for range 2 {
		if m := cachedMap(b, h); m == nil || !sameTags(m.Tags(), b) {
			t.Fatalf("b, colliding with a: got %v; want b's own map", m)
		}
	}
	if m := cachedMap(a, h); m != nil && !sameTags(m.Tags(), a) {
		t.Fatalf("a again: got the map of %v", m.Tags())
	}
}

// A handle's own cell through its series' seal, revival and freeing: the
// sealed series counts the cell; a record revives the series and the cell
// with it; once the series is freed, the handle takes a new state and
// attaches its cell to the successor. Every record counts once.
func TestBoundCellFollowsEviction(t *testing.T) {
	for _, kind := range []Kind{KindCount, testIntSum} {
		b, a, s := cellBound(t, kind) // one record, into the series' word
		r := a.AddReader()
		value := (*Series).ReadCount
		if kind == testIntSum {
			value = func(s *Series) int64 { return int64(s.ReadSum()) }
		}
		st := b.st.Load()
		if st != &b.first || st.kind() == 0 {
			t.Fatalf("kind %d: after the first record, state %p cell %d; want the inline state, attached", kind, st, st.kind())
		}
		b.RecordInt(1)
		b.RecordInt(1)
		if st.own.Load() != 2 || value(s) != 3 {
			t.Fatalf("kind %d: own cell %d, series %d; want 2 and 3", kind, st.own.Load(), value(s))
		}
		s.Evict()
		if !intSealed(st.own.Load()) || value(s) != 3 {
			t.Fatalf("kind %d: sealed: own cell %#x, series %d; want sealed, 3", kind, st.own.Load(), value(s))
		}
		b.RecordInt(1) // revives s
		if s.Sealed() || st.kind() == 0 || b.st.Load() != st || value(s) != 4 {
			t.Fatalf("kind %d: revived: sealed %v, cell %d, series %d; want live, attached, 4", kind, s.Sealed(), st.kind(), value(s))
		}
		b.RecordInt(1)
		s.Evict()
		r.Ack(a.SealSeq())
		a.Sweep()
		if a.Len() != 0 {
			t.Fatalf("kind %d: not freed", kind)
		}
		b.RecordInt(1) // to the successor; a new state
		b.RecordInt(1) // attaches its cell
		b.RecordInt(1) // into the new cell
		ns := a.AppendSeries(nil)
		if len(ns) != 1 || ns[0] == s || value(ns[0]) != 3 {
			t.Fatalf("kind %d: successor %v: want one new series of 3", kind, ns)
		}
		if st2 := b.st.Load(); st2 == st || st2.kind() == 0 || st2.own.Load() != 1 {
			t.Errorf("kind %d: after the successor: state %p (was %p), cell %d, own %d; want a new state, attached, 1", kind, st2, st, st2.kind(), st2.own.Load())
		}
	}
}

// A series takes maxBoundCells handles' cells; handles bound to its tags
// beyond that record through the series, and every record counts.
func TestBoundCellsPerSeriesCapped(t *testing.T) {
	m := &Measure{Name: "bound/cap"}
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	m.Subscribe(a)
	const H = maxBoundCells + 2
	var bs [H]*Bound
	for i := range bs {
		bs[i] = m.Bind(tagsOf("k", "x"))
		bs[i].RecordInt(1)
		bs[i].RecordInt(1)
	}
	for i, b := range bs {
		attached := b.st.Load().kind() != 0
		if attached != (i < maxBoundCells) {
			t.Errorf("handle %d: attached %v; want %v", i, attached, i < maxBoundCells)
		}
	}
	if got := countOf(t, a); got != 2*H {
		t.Errorf("count %d; want %d", got, 2*H)
	}
}

// TestStripedCountFollowsEviction: a Count handle given up for its
// series' stripes (as recorders on two cores leave it) records into the
// current P's stripe with one add (RecordInt's and Series.add's inline
// path); an add that meets a sealed stripe counts nothing there and goes
// where the seal sends it (the revived series, or the successor), so
// every record counts once: through the handle and through the series'
// own add (a kept context's path).
func TestStripedCountFollowsEviction(t *testing.T) {
	for _, via := range []string{"handle", "series"} {
		m := &Measure{Name: "bound/striped/" + via}
		a := NewAggregator(KindCount, []string{"k"}, nil, 0)
		m.Subscribe(a)
		r := a.AddReader()
		b := m.Bind(tagsOf("k", "x"))
		b.RecordInt(1)
		s := a.AppendSeries(nil)[0]
		b.st.Load().ctl.Store(ownDone) // given up, as twoStrikes leaves it
		s.inflate()
		rec := func() {
			if via == "handle" {
				b.RecordInt(1)
			} else {
				s.add(1, nil)
			}
		}
		for range 10 {
			rec()
		}
		if !s.Striped() || s.ReadCount() != 11 {
			t.Fatalf("%s: striped %v, count %d; want striped, 11", via, s.Striped(), s.ReadCount())
		}
		s.Evict()
		rec() // meets the seal: revives s
		if s.Sealed() || s.ReadCount() != 12 {
			t.Fatalf("%s: revived: sealed %v, count %d; want live, 12", via, s.Sealed(), s.ReadCount())
		}
		rec()
		s.Evict()
		r.Ack(a.SealSeq())
		a.Sweep()
		if a.Len() != 0 {
			t.Fatalf("%s: not freed", via)
		}
		if via == "series" {
			continue // a freed series' own add: recordSealed's, tested elsewhere
		}
		rec() // to the successor
		ns := a.AppendSeries(nil)
		if len(ns) != 1 || ns[0] == s || ns[0].ReadCount() != 1 {
			t.Fatalf("%s: successor %v; want one new series of 1", via, ns)
		}
	}
}
