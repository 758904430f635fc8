package core

import (
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Found in review: both failed before their fixes.

func readValue(s *Series, buf []int64) int64 {
	switch s.agg.kind {
	case KindCount:
		return s.ReadCount()
	case KindSum:
		return int64(s.ReadSum())
	case KindExponential:
		return int64(expCount(s))
	}
	return s.ReadDist(buf).Count
}

// testIntSum stands for an integer Sum (KindSum with IntegerSums) in the
// tests' lists of kinds; newTestAgg makes it.
const testIntSum Kind = 0x80

// newTestAgg is NewAggregator, with testIntSum for an integer Sum.
func newTestAgg(kind Kind, keys []string, bounds []float64, limit int) *Aggregator {
	if kind == testIntSum {
		a := NewAggregator(KindSum, keys, bounds, limit)
		a.IntegerSums()
		return a
	}
	return NewAggregator(kind, keys, bounds, limit)
}

// TestSealSeqPublishedAfterSeal: in the middle of a seal, SealSeq does not
// yet count it. (It did: a reader loading it then, reading the series live
// and acknowledging it, let the series be frozen with records it never
// read, and freed.)
func TestSealSeqPublishedAfterSeal(t *testing.T) {
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	a.RecordTags(tagsOf("k", "x"), 1)
	s := a.AppendSeries(nil)[0]
	var during uint64
	sealHook = func(uint64) { during = a.SealSeq() }
	defer func() { sealHook = nil }()
	before := a.SealSeq()
	s.Evict()
	if during != before || a.SealSeq() != before+1 {
		t.Errorf("SealSeq %d before, %d during, %d after the seal; want %d, %d, %d", before, during, a.SealSeq(), before, before, before+1)
	}
}

// TestSeparateEvictorLosesNothing: reader R reads and acknowledges while
// reader Q, in another goroutine, reads and evicts every series. Every
// record must be in R's last reads, and R's reads never decrease. Before
// the seal's number was published after the seal (it was taken first), R
// could load it, read a series live, acknowledge, and have the series
// frozen with records R never read, then freed.
func TestSeparateEvictorLosesNothing(t *testing.T) {
	for _, kind := range []Kind{KindCount, KindDistribution, testIntSum, KindExponential} {
		t.Run(fmt.Sprint(kind), func(t *testing.T) {
			a := newTestAgg(kind, []string{"k"}, []float64{1}, 0)
			r, q := a.AddReader(), a.AddReader()
			maps := make([]*TagMap, 4)
			for i := range maps {
				maps[i] = NewTagMap(tagsOf("k", fmt.Sprint(i)))
			}
			var stop, qstop atomic.Bool
			var recorded atomic.Int64
			var wg, qwg sync.WaitGroup
			for g := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n := int64(0)
					for i := 0; !stop.Load(); i++ {
						a.RecordMap(maps[(g+i)%len(maps)], 1)
						n++
					}
					recorded.Add(n)
				}()
			}
			qwg.Add(1)
			go func() {
				defer qwg.Done()
				buf := make([]int64, 2)
				for !qstop.Load() {
					seq := a.SealSeq()
					for _, s := range a.AppendSeries(nil) {
						readValue(s, buf)
						s.Evict()
					}
					q.Ack(seq)
					a.Sweep()
				}
			}()
			last := map[*Series]int64{}
			buf := make([]int64, 2)
			read := func() {
				seq := a.SealSeq()
				for _, s := range a.AppendSeries(nil) {
					v := readValue(s, buf)
					if v < last[s] {
						t.Errorf("a read of %d after one of %d", v, last[s])
					}
					last[s] = v
				}
				r.Ack(seq)
				a.Sweep()
			}
			// At least 1.5 s of racing, and until series were freed (an
			// event, however slow the machine; 120 s is a safety net).
			began := time.Now()
			for time.Since(began) < 1500*time.Millisecond || a.Evicted() < 100 && time.Since(began) < 120*time.Second {
				read()
			}
			stop.Store(true)
			wg.Wait()
			read()
			qstop.Store(true)
			qwg.Wait()
			read()
			var total int64
			for _, v := range last {
				total += v
			}
			if total != recorded.Load() {
				t.Errorf("R read %d in total; %d recorded (%d lost), %d series freed", total, recorded.Load(), recorded.Load()-total, a.Evicted())
			}
			if a.Evicted() == 0 {
				t.Error("nothing was freed")
			}
		})
	}
}

// TestSnapshotNeverHoldsTwoSeriesOfOneTagSet: a series freed while a pass
// of AppendSeries runs, and re-created in a slot the pass reaches later
// (probe chains wrap around the table's end), must not appear twice.
func TestSnapshotNeverHoldsTwoSeriesOfOneTagSet(t *testing.T) {
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	// Series whose home slot is in the last 128 of 1,024: their probe
	// chains wrap around to slot 0.
	var tags [][]Tag
	for i := 0; len(tags) < 600; i++ {
		v := fmt.Sprint("v", i)
		if a.hashValues([]string{v})&1023 >= 1024-128 {
			tags = append(tags, tagsOf("k", v))
		}
	}
	for i := range 700 { // grows the table to 1,024 slots
		a.RecordTags(tagsOf("k", fmt.Sprint("g", i)), 1)
	}
	for _, s := range a.AppendSeries(nil) {
		s.Evict()
	}
	a.Sweep() // no reader registered: frees them
	for _, tg := range tags {
		a.RecordTags(tg, 1)
	}
	var stop atomic.Bool
	var churn sync.WaitGroup
	churn.Add(1)
	go func() {
		defer churn.Done()
		rnd := rand.New(rand.NewSource(1))
		for !stop.Load() {
			// As an export's Sweep does: free several idle series at once,
			// then they are recorded again in another order.
			var batch [][]Tag
			for range 8 {
				tg := tags[rnd.Intn(len(tags))]
				var vals [1]string
				_, h := a.project(vals[:0], tg)
				if s := a.table.Load().find(a, h, []string{tg[0].Value}); s != nil {
					s.Evict()
					batch = append(batch, tg)
				}
			}
			a.Sweep()
			for _, tg := range batch {
				a.RecordTags(tg, 1)
			}
		}
	}()
	defer func() { stop.Store(true); churn.Wait() }()
	var buf []*Series
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		buf = a.AppendSeries(buf[:0])
		seen := map[string]bool{}
		strs := Interned()
		for _, s := range buf {
			v := strs[s.ValueIDs()[0]]
			if seen[v] {
				t.Fatalf("two series of k=%q in one pass", v)
			}
			seen[v] = true
		}
	}
}

// TestOverflowedTagsGetARowOnceRoomIsFreed: a tag map whose records went
// to the overflow series gets a row of its own once eviction frees room
// (the overflow series used to stay in its cache).
func TestOverflowedTagsGetARowOnceRoomIsFreed(t *testing.T) {
	a := NewAggregator(KindCount, []string{"k"}, nil, 1)
	a.RecordTags(tagsOf("k", "a"), 1)
	b := NewTagMap(tagsOf("k", "b"))
	a.RecordMap(b, 1)
	if o := a.Overflow(); o == nil || o.ReadCount() != 1 {
		t.Fatal("b did not overflow a view limited to one row")
	}
	a.AppendSeries(nil)[0].Evict()
	a.Sweep() // no reader registered: a is freed
	a.RecordMap(b, 1)
	rows := a.AppendSeries(nil)
	if len(rows) != 1 || Interned()[rows[0].ValueIDs()[0]] != "b" || rows[0].ReadCount() != 1 || a.Overflow().ReadCount() != 1 {
		t.Errorf("after a was freed: %d rows, overflow %d; want b's own row with 1 and the overflow's 1 kept", len(rows), a.Overflow().ReadCount())
	}
}
