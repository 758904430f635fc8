package core

import (
	"fmt"
	"github.com/zerostat/zerostat/internal/exphist"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// readAll returns a series' value as text, whatever its kind.
func readAll(s *Series) string {
	switch s.agg.kind {
	case KindCount:
		return fmt.Sprint(s.ReadCount())
	case KindSum:
		return fmt.Sprint(s.ReadSum())
	case KindLastValue:
		return fmt.Sprint(s.ReadLast())
	case KindExponential:
		var e exphist.Snapshot
		s.ReadExp(&e)
		return fmt.Sprintf("n=%d sum=%v min=%v max=%v scale=%d zero=%d +%d%v -%d%v", e.Count, e.Sum, e.Min, e.Max,
			e.Scale, e.ZeroCount, e.Positive.Offset, e.Positive.Counts, e.Negative.Offset, e.Negative.Counts)
	}
	b := make([]int64, len(s.agg.bounds)+1)
	d := s.ReadDist(b)
	return fmt.Sprintf("n=%d sum=%v min=%v max=%v %v", d.Count, d.Sum, d.Min, d.Max, b)
}

func TestSealFreezesAndRecordRevives(t *testing.T) {
	for _, kind := range []Kind{KindCount, KindSum, KindLastValue, KindDistribution, testIntSum, KindExponential} {
		for _, striped := range []bool{false, true} {
			if kind == KindLastValue && striped {
				continue // a last value never stripes
			}
			t.Run(fmt.Sprintf("kind%d/striped=%v", kind, striped), func(t *testing.T) {
				a := newTestAgg(kind, []string{"k"}, []float64{10}, 0)
				kind := a.kind
				m := NewTagMap(tagsOf("k", "x"))
				a.RecordMap(m, 1)
				s := a.AppendSeries(nil)[0]
				if striped {
					s.inflate()
				}
				for _, v := range []float64{2, 30, 4} {
					a.RecordMap(m, v)
				}
				before := readAll(s)
				s.Evict()
				if !s.Sealed() {
					t.Fatal("not sealed after Evict")
				}
				if got := readAll(s); got != before {
					t.Errorf("sealed read %q; want the values at the seal %q", got, before)
				}
				if r := s.addTo(&s.word, nil, s.distCell(), 5); r != addSealed {
					t.Errorf("a sealed cell took a record (%d)", r)
				}
				a.RecordMap(m, 5) // revives it through the cached series
				if s.Sealed() || a.Len() != 1 || a.AppendSeries(nil)[0] != s {
					t.Fatalf("not revived in place: sealed=%v len=%d", s.Sealed(), a.Len())
				}
				want := map[Kind]string{
					KindCount:        "5",
					KindSum:          "42",
					KindLastValue:    "5",
					KindDistribution: "n=5 sum=42 min=1 max=30 [4 1]",
					KindExponential:  expWant(1, 2, 30, 4, 5),
				}[kind]
				if got := readAll(s); got != want {
					t.Errorf("after revival %q; want %q", got, want)
				}
			})
		}
	}
}

func TestSealedWordNeverRecorded(t *testing.T) {
	a := NewAggregator(KindLastValue, nil, nil, 0)
	a.RecordTags(nil, math.Float64frombits(sealedWord))
	s := a.AppendSeries(nil)[0]
	if s.Sealed() || s.word.Load() == sealedWord || !math.IsNaN(s.ReadLast()) {
		t.Errorf("recording the seal's bit pattern sealed the series (word %#x)", s.word.Load())
	}
	a.RecordTags(nil, 3)
	if s.ReadLast() != 3 {
		t.Errorf("last %v; want 3", s.ReadLast())
	}
}

func TestFreedOnlyWhenEveryReaderAcked(t *testing.T) {
	a := NewAggregator(KindCount, []string{"k"}, nil, 2)
	r1, r2 := a.AddReader(), a.AddReader()
	m := NewTagMap(tagsOf("k", "x"))
	a.RecordMap(m, 1)
	s := a.AppendSeries(nil)[0]
	s.Evict()
	seq := a.SealSeq()
	r1.Ack(seq)
	a.Sweep()
	if a.Len() != 1 || len(a.AppendSeries(nil)) != 1 || a.Evicted() != 0 {
		t.Fatalf("freed before the second reader read it: len %d evicted %d", a.Len(), a.Evicted())
	}
	r2.Ack(seq)
	a.Sweep()
	if a.Len() != 0 || len(a.AppendSeries(nil)) != 0 || a.Evicted() != 1 {
		t.Fatalf("not freed once both acked: len %d evicted %d", a.Len(), a.Evicted())
	}
	// The map still caches s; recording goes to a new series at s's ID,
	// one generation later, starting from zero.
	a.RecordMap(m, 1)
	n := a.AppendSeries(nil)
	if len(n) != 1 || n[0] == s || n[0].ID() != s.ID() || n[0].Gen() != s.Gen()+1 || n[0].ReadCount() != 1 {
		t.Fatalf("successor %+v (of %+v)", n, s)
	}
	// Freeing gave back room under the cardinality limit.
	a.RecordTags(tagsOf("k", "y"), 1)
	if a.Len() != 2 || a.Overflow() != nil {
		t.Errorf("len %d, overflow %v; want 2 rows, no overflow", a.Len(), a.Overflow())
	}
}

func TestDroppedReaderDoesNotHoldSeries(t *testing.T) {
	a := NewAggregator(KindCount, nil, nil, 0)
	func() { _ = a.AddReader() }() // dropped without RemoveReader
	kept := a.AddReader()
	a.RecordTags(nil, 1)
	a.AppendSeries(nil)[0].Evict()
	kept.Ack(a.SealSeq())
	for i := 0; i < 10 && a.Len() != 0; i++ {
		runtime.GC()
		a.Sweep()
	}
	if a.Len() != 0 {
		t.Error("a collected reader still holds the sealed series")
	}
	a.RecordTags(nil, 1)
	a.AppendSeries(nil)[0].Evict()
	a.RemoveReader(kept) // the last reader leaves: nothing waits
	if a.Len() != 0 {
		t.Error("RemoveReader did not free what only it held")
	}
	runtime.KeepAlive(kept)
}

// TestChurnKeepsTableAndInternerBounded creates and frees 100,000 series of
// distinct values, at most 10 alive at once: the table, the IDs and the
// interned strings stay bounded by what is alive, not by what was seen.
func TestChurnKeepsTableAndInternerBounded(t *testing.T) {
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	r := a.AddReader()
	interned0 := InternedLive()
	for i := range 100_000 {
		a.RecordTags(tagsOf("k", fmt.Sprintf("churn-%d", i)), 1)
		if i%10 == 9 {
			for _, s := range a.AppendSeries(nil) {
				if s.ReadCount() != 1 {
					t.Fatalf("series of %d: count %d", i, s.ReadCount())
				}
				s.Evict()
			}
			r.Ack(a.SealSeq())
			a.Sweep()
		}
		if i%10_000 == 0 {
			runtime.GC() // lets the freed series' cleanups run
		}
	}
	if got := len(a.table.Load().slots); got > 64 {
		t.Errorf("table has %d slots for at most 10 series", got)
	}
	if a.nextID > 20 {
		t.Errorf("%d IDs used for at most 10 series at once", a.nextID)
	}
	deadline := time.Now().Add(10 * time.Second)
	for InternedLive()-interned0 > 1000 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := InternedLive() - interned0; n > 1000 {
		t.Errorf("%d strings still interned after 100,000 freed series", n)
	}
	if a.Evicted() != 100_000 {
		t.Errorf("evicted %d; want 100000", a.Evicted())
	}
}

func TestTombstonesKeepProbing(t *testing.T) {
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	r := a.AddReader()
	for i := range 200 {
		a.RecordTags(tagsOf("k", fmt.Sprint(i)), 1)
	}
	for _, s := range a.AppendSeries(nil) {
		if valueInt(s)%2 == 0 {
			s.Evict()
		}
	}
	r.Ack(a.SealSeq())
	a.Sweep()
	if a.Len() != 100 {
		t.Fatalf("len %d; want 100", a.Len())
	}
	// Every odd series is still found behind the tombstones: recording
	// again adds to it rather than creating a row.
	for i := 1; i < 200; i += 2 {
		a.RecordTags(tagsOf("k", fmt.Sprint(i)), 1)
	}
	if a.Len() != 100 {
		t.Fatalf("len %d after re-recording the kept series; want 100", a.Len())
	}
	for _, s := range a.AppendSeries(nil) {
		if s.ReadCount() != 2 {
			t.Fatalf("series %q count %d; want 2", Interned()[s.ValueIDs()[0]], s.ReadCount())
		}
	}
}

// valueInt returns the series' single tag value as a number.
func valueInt(s *Series) int {
	var n int
	fmt.Sscan(Interned()[s.ValueIDs()[0]], &n)
	return n
}

// TestEvictRacesRecorders seals, revives and frees series while recorders
// write to them through cached tag maps and without: every record is in
// exactly one read, as a delta reader would see it. Run with -race.
func TestEvictRacesRecorders(t *testing.T) {
	for _, kind := range []Kind{KindCount, KindSum, KindDistribution, testIntSum, KindExponential} {
		t.Run(fmt.Sprint(kind), func(t *testing.T) {
			a := newTestAgg(kind, []string{"k"}, []float64{1}, 0)
			kind := a.kind
			r := a.AddReader()
			maps := make([]*TagMap, 8)
			for i := range maps {
				maps[i] = NewTagMap(tagsOf("k", fmt.Sprint(i)))
			}
			// Recorders run until the reader has sealed 500 times (an
			// event, however slow the machine; 120 s is only a safety
			// net), counting what they record.
			const G = 4
			var stop atomic.Bool
			recorded := make([]int, G)
			var wg sync.WaitGroup
			for g := range G {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; !stop.Load(); i++ {
						m := maps[(g+i)%len(maps)]
						if i%3 == 0 {
							a.RecordTags(m.Tags(), 1)
						} else {
							a.RecordMap(m, 1)
						}
						recorded[g]++
					}
				}()
			}
			// The reader: per series (by pointer) the last value read; a
			// series read sealed and then freed contributes its final value.
			last := map[*Series]float64{}
			read := func() {
				seq := a.SealSeq()
				buf := make([]int64, 2)
				for _, s := range a.AppendSeries(nil) {
					switch kind {
					case KindCount:
						last[s] = float64(s.ReadCount())
					case KindSum:
						last[s] = s.ReadSum()
					case KindExponential:
						last[s] = float64(expCount(s))
					default:
						last[s] = float64(s.ReadDist(buf).Count)
					}
				}
				r.Ack(seq)
				a.Sweep()
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			deadline := time.Now().Add(120 * time.Second)
			for i := 0; ; i++ {
				if a.SealSeq() >= 500 {
					stop.Store(true)
				}
				if time.Now().After(deadline) && !stop.Load() {
					stop.Store(true)
					t.Errorf("only %d seals in 120 s", a.SealSeq())
				}
				select {
				case <-done:
					read()
					read() // sealed series are read once more, then freed
					var total, want float64
					for _, v := range last {
						total += v
					}
					for _, n := range recorded {
						want += float64(n)
					}
					if total != want {
						t.Fatalf("read %v in total; want %v (evicted %d)", total, want, a.Evicted())
					}
					t.Logf("%d seals, %d series freed, %d cycles", a.SealSeq(), a.Evicted(), i)
					return
				default:
				}
				read()
				for _, s := range a.AppendSeries(nil) {
					if i%2 == 0 {
						s.Evict()
					}
				}
			}
		})
	}
}

// TestStaleCacheTakesNoLock: a TagMap whose cached series was freed, in a
// view at its limit, records into the overflow row without the
// aggregator's mutex (issue 12, item 10: it took it on every record). The
// test holds the mutex while recording: a record that takes it blocks.
func TestStaleCacheTakesNoLock(t *testing.T) {
	a := NewAggregator(KindCount, []string{"k"}, nil, 1)
	r := a.AddReader()
	m := NewTagMap(tagsOf("k", "x"))
	a.RecordMap(m, 1) // m caches x's series
	a.AppendSeries(nil)[0].Evict()
	r.Ack(a.SealSeq())
	a.Sweep()                         // x's series freed; m still points at it
	a.RecordTags(tagsOf("k", "y"), 1) // y takes the only row
	a.RecordTags(tagsOf("k", "z"), 1) // the overflow series exists
	if a.Len() != 1 || a.Overflowed() != 1 {
		t.Fatalf("len %d overflowed %d; want 1 and 1", a.Len(), a.Overflowed())
	}
	a.mu.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			a.RecordMap(m, 1)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		a.mu.Unlock()
		<-done
		t.Fatal("a record through a stale cache waited for the aggregator's mutex")
	}
	a.mu.Unlock()
	if a.Overflowed() != 101 {
		t.Errorf("overflowed %d; want 101", a.Overflowed())
	}
	if m.cache[a.slot%cacheSlots].Load() != nil {
		t.Error("the map still caches the freed series (and keeps its values interned)")
	}
	runtime.KeepAlive(r)
}

// Records without tags through a subscriber list's own series cache
// (RecordOne) reach the same series as the aggregator's, survive
// eviction (revival in place, then a successor once freed), reach every
// view of the list, and keep a Sum's rounding errors while a delta reader
// is registered.
func TestUntaggedListCacheFollowsEviction(t *testing.T) {
	count := NewAggregator(KindCount, nil, nil, 0)
	sum := NewAggregator(KindSum, nil, nil, 0)
	dist := NewAggregator(KindDistribution, nil, []float64{10}, 0)
	for _, l := range []*Subs{newSubs([]*Aggregator{count}), newSubs([]*Aggregator{count, sum, dist})} {
		if l.Tagged {
			t.Fatal("a list of views without keys is Tagged")
		}
		before := count.AppendSeries(nil)
		base := int64(0)
		if len(before) == 1 {
			base = before[0].ReadCount()
		}
		recordVia(l, 1)
		recordVia(l, 1)
		s := count.AppendSeries(nil)[0]
		if got := s.ReadCount(); got != base+2 {
			t.Fatalf("count %d; want %d", got, base+2)
		}
		count.RecordMap(nil, 1) // the aggregator's own no-tags slot: the same series
		if n := count.AppendSeries(nil); len(n) != 1 || n[0].ReadCount() != base+3 {
			t.Fatalf("aggregator path found another series: %v", n)
		}
		s.Evict()
		recordVia(l, 1) // revives it in place
		if s.Sealed() || s.ReadCount() != base+4 {
			t.Fatalf("not revived: sealed %v count %d", s.Sealed(), s.ReadCount())
		}
	}
	// Freed: the cached series is replaced by a successor from zero.
	r := count.AddReader()
	l := newSubs([]*Aggregator{count})
	recordVia(l, 1)
	s := count.AppendSeries(nil)[0]
	s.Evict()
	r.Ack(count.SealSeq())
	count.Sweep()
	if count.Len() != 0 {
		t.Fatalf("not freed: len %d", count.Len())
	}
	recordVia(l, 1)
	n := count.AppendSeries(nil)
	if len(n) != 1 || n[0] == s || n[0].ReadCount() != 1 {
		t.Fatalf("successor %v of %v", n, s)
	}
	count.RemoveReader(r)
	// The other views of the second list got each of its 3 records.
	if got := readAll(sum.AppendSeries(nil)[0]); got != "3" {
		t.Errorf("sum %s; want 3", got)
	}
	if got := readAll(dist.AppendSeries(nil)[0]); got != "n=3 sum=3 min=1 max=1 [3 0]" {
		t.Errorf("distribution %s", got)
	}
	// A delta reader makes a Sum keep its rounding errors on this path too.
	f := NewAggregator(KindSum, nil, nil, 0)
	fr := f.AddReader()
	fl := newSubs([]*Aggregator{f})
	recordVia(fl, 1e16)
	recordVia(fl, 1)
	hi, lo := f.AppendSeries(nil)[0].ReadSumParts()
	if hi+lo != 1e16+1 || lo != 1 {
		t.Errorf("sum parts %v %v; want 1e16 and the lost 1", hi, lo)
	}
	f.RemoveReader(fr)
}
