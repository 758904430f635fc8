package delta

import (
	"fmt"
	"maps"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/core"
)

func tagsOf(kv ...string) []core.Tag {
	var ts []core.Tag
	for i := 0; i < len(kv); i += 2 {
		m := core.MutUpsert(kv[i], kv[i+1], core.TTLUnlimitedPropagation)
		ts = m.Apply(ts)
	}
	return ts
}

// cycle reads every series of a through t as an exporter does and adds
// each delta to got (by tag value); it returns how many series it read.
func cycle(t *Tracker, a *core.Aggregator, got map[string]int64) int {
	t.Begin()
	st := t.View(a)
	var v Values
	buf := make([]int64, len(a.Bounds())+1)
	series := a.AppendSeries(nil)
	strs := core.Interned()
	for _, s := range series {
		if Read(a.Kind(), s, st, buf, &v) {
			n := int64(v.Count)
			if a.Kind() == core.KindDistribution {
				n = v.Dist.Count
			}
			got[strs[s.ValueIDs()[0]]] += n
		}
	}
	st.Done()
	t.End()
	return len(series)
}

func TestIdleSeriesEvictedAfterN(t *testing.T) {
	a := core.NewAggregator(core.KindCount, []string{"k"}, nil, 0)
	tr := NewTracker(2)
	got := map[string]int64{}
	a.RecordTags(tagsOf("k", "x"), 1)
	for i, want := range []int{1, 1, 1, 0} {
		// reads: changed, idle 1, idle 2 (sealed), sealed and final (freed)
		if i == 0 && a.Len() != 1 {
			t.Fatal("no series")
		}
		cycle(tr, a, got)
		if a.Len() != want {
			t.Fatalf("after read %d: %d series; want %d", i+1, a.Len(), want)
		}
	}
	if got["x"] != 1 || a.Evicted() != 1 {
		t.Fatalf("got %v, evicted %d", got, a.Evicted())
	}
	// A record resets the idle count; recording the tags again after
	// eviction starts a new series, whose deltas continue the total.
	a.RecordTags(tagsOf("k", "x"), 1)
	cycle(tr, a, got)
	a.RecordTags(tagsOf("k", "x"), 1)
	cycle(tr, a, got)
	cycle(tr, a, got)
	if a.Len() != 1 || got["x"] != 3 {
		t.Fatalf("len %d got %v; want the series kept and x=3", a.Len(), got)
	}
}

// TestEvictionsOfAFailedCycleDropped: the series a read found idle are
// evicted by Done, together (core.Aggregator.EvictAll); a cycle that ends
// without Done (an export failed part way) evicts nothing, and its
// findings do not carry into the next cycle, whose Done evicts only what
// that cycle found.
func TestEvictionsOfAFailedCycleDropped(t *testing.T) {
	a := core.NewAggregator(core.KindCount, []string{"k"}, nil, 0)
	a.RecordTags(tagsOf("k", "x"), 1)
	tr := NewTracker(1)
	cycle(tr, a, map[string]int64{}) // changed
	s := a.AppendSeries(nil)[0]
	var v Values
	tr.Begin()
	st := tr.View(a)
	Read(a.Kind(), s, st, nil, &v) // idle once: to be evicted by Done
	if s.Sealed() {
		t.Fatal("sealed by Read; want by Done")
	}
	// No Done: the export failed. A record, then the next cycle.
	a.RecordTags(tagsOf("k", "x"), 1)
	tr.Begin()
	st = tr.View(a)
	if Read(a.Kind(), s, st, nil, &v); v.Count != 1 {
		t.Fatalf("delta %d; want 1", v.Count)
	}
	st.Done()
	tr.End()
	if s.Sealed() || a.Evicted() != 0 {
		t.Fatalf("sealed %v, evicted %d after a cycle that found the series changed; want neither", s.Sealed(), a.Evicted())
	}
	cycle(tr, a, map[string]int64{}) // idle: sealed by Done
	if !s.Sealed() {
		t.Fatal("an idle series not sealed by Done")
	}
}

func TestCheckEvictIdleAfter(t *testing.T) {
	for _, tc := range []struct {
		n     int
		delta bool
		err   string
	}{
		{0, false, ""},
		{3, true, ""},
		{-1, true, "EvictIdleAfter -1 is negative"},
		{2, false, "EvictIdleAfter 2 needs Delta temporality: a cumulative reader must keep every series' running total"},
	} {
		err := CheckEvictIdleAfter(tc.n, tc.delta)
		if got := fmt.Sprint(err); (err == nil) != (tc.err == "") || err != nil && got != tc.err {
			t.Errorf("CheckEvictIdleAfter(%d, %v) = %v; want %q", tc.n, tc.delta, err, tc.err)
		}
	}
}

// TestReadersExactUnderChurn runs recorders over tag values that come and
// go while two delta readers read concurrently: one evicts what was idle
// for one read, the other never evicts and reads less often. Every series
// is evicted, revived, freed and its ID reused many times; each reader's
// deltas still add up, per tag value, to exactly what was recorded. Run
// with -race.
func TestReadersExactUnderChurn(t *testing.T) {
	for _, kind := range []core.Kind{core.KindCount, core.KindDistribution} {
		t.Run(fmt.Sprint(kind), func(t *testing.T) {
			a := core.NewAggregator(kind, []string{"k"}, []float64{1}, 0)
			// Both readers read once before anything is recorded: a
			// reader that registers later does not get the final values
			// of series freed before it came.
			fast, slow := NewTracker(1), NewTracker(0)
			gotFast, gotSlow := map[string]int64{}, map[string]int64{}
			cycle(fast, a, gotFast)
			cycle(slow, a, gotSlow)
			const G = 2
			var stop atomic.Bool
			recorded := make([]map[string]int64, G)
			var wg sync.WaitGroup
			for g := range G {
				recorded[g] = map[string]int64{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; !stop.Load(); i++ {
						// A value lives for 200 records of this goroutine,
						// then is never seen again.
						val := fmt.Sprintf("g%d-%d", g, i/200)
						if i%2 == 0 {
							a.RecordTags(tagsOf("k", val), 0.5)
						} else {
							a.RecordMap(core.NewTagMap(tagsOf("k", val)), 0.5)
						}
						recorded[g][val]++
					}
				}()
			}
			var slowWG sync.WaitGroup
			slowWG.Add(1)
			slowDone := make(chan struct{})
			go func() {
				defer slowWG.Done()
				for {
					select {
					case <-slowDone:
						return
					case <-time.After(5 * time.Millisecond):
						cycle(slow, a, gotSlow)
					}
				}
			}()
			deadline := time.Now().Add(2 * time.Second)
			maxLen := 0
			for a.Evicted() < 2000 && time.Now().Before(deadline) {
				maxLen = max(maxLen, cycle(fast, a, gotFast))
			}
			stop.Store(true)
			wg.Wait()
			close(slowDone)
			slowWG.Wait()
			for range 3 { // the last records, then the seals they leave
				cycle(fast, a, gotFast)
				cycle(slow, a, gotSlow)
			}
			want := map[string]int64{}
			for _, r := range recorded {
				maps.Copy(want, r) // values are per goroutine: no overlap
			}
			for name, got := range map[string]map[string]int64{"evicting reader": gotFast, "slow reader": gotSlow} {
				for val, n := range want {
					if got[val] != n {
						t.Fatalf("%s: %q read %d; recorded %d", name, val, got[val], n)
					}
				}
				if len(got) != len(want) {
					t.Fatalf("%s read %d values; %d were recorded", name, len(got), len(want))
				}
			}
			if a.Evicted() < 100 {
				t.Fatalf("only %d series evicted", a.Evicted())
			}
			t.Logf("%d values, %d series evicted, at most %d in the table at a read", len(want), a.Evicted(), maxLen)
		})
	}
}

// TestConstantGaugeNeverEvicted: a last value recorded once (build_info 1)
// is sent by every delta read and never evicted (issue 12, item 3: it was
// judged idle and freed after a few exports, from every reader).
func TestConstantGaugeNeverEvicted(t *testing.T) {
	a := core.NewAggregator(core.KindLastValue, []string{"k"}, nil, 0)
	tr := NewTracker(1)
	a.RecordTags(tagsOf("k", "v1"), 1)
	for i := range 10 {
		tr.Begin()
		st := tr.View(a)
		series := a.AppendSeries(nil)
		var v Values
		if len(series) != 1 || !Read(core.KindLastValue, series[0], st, nil, &v) || v.Last != 1 {
			t.Fatalf("read %d: %d series, values %+v; want the gauge's 1", i+1, len(series), v)
		}
		st.Done()
		tr.End()
	}
	if a.Evicted() != 0 || a.Len() != 1 {
		t.Errorf("evicted %d, %d series left; want the gauge kept", a.Evicted(), a.Len())
	}
}

// TestNonFiniteSumDelta: once a sum's total is +Inf, a delta read sends
// it once (as +Inf), not Inf-Inf = NaN every cycle, and a series recorded
// every interval is not judged idle (issue 12, item 5: it was evicted and
// revived every few cycles).
func TestNonFiniteSumDelta(t *testing.T) {
	a := core.NewAggregator(core.KindSum, []string{"k"}, nil, 0)
	tr := NewTracker(1)
	a.RecordTags(tagsOf("k", "x"), 1)
	a.RecordTags(tagsOf("k", "x"), math.Inf(1))
	var sent []float64
	for range 6 {
		a.RecordTags(tagsOf("k", "x"), 2) // recorded every interval
		tr.Begin()
		st := tr.View(a)
		var v Values
		for _, s := range a.AppendSeries(nil) {
			if Read(core.KindSum, s, st, nil, &v) {
				sent = append(sent, v.Sum)
			}
		}
		st.Done()
		tr.End()
	}
	if len(sent) != 1 || !math.IsInf(sent[0], 1) {
		t.Errorf("sent %v; want [+Inf] once", sent)
	}
	if a.Evicted() != 0 || a.Len() != 1 {
		t.Errorf("evicted %d; want a series recorded every interval kept", a.Evicted())
	}
}

// TestCumulativeStart: a series starts with its aggregator until a series
// of the aggregator is freed; one created after that starts on its own (a
// reset), the overflow series never does.
func TestCumulativeStart(t *testing.T) {
	a := core.NewAggregator(core.KindCount, []string{"k"}, nil, 2)
	a.RecordTags(tagsOf("k", "x"), 1)
	a.RecordTags(tagsOf("k", "y"), 1)
	first := a.AppendSeries(nil)
	for _, s := range first {
		if st, own := CumulativeStart(a, s); own || !st.Equal(a.Start()) {
			t.Errorf("before any free: %v, own %v; want the aggregator's %v", st, own, a.Start())
		}
	}
	tr := NewTracker(1)
	got := map[string]int64{}
	for range 3 { // read, seal (unchanged), read sealed and free
		cycle(tr, a, got)
	}
	if a.Len() != 0 {
		t.Fatalf("%d series left; want both freed", a.Len())
	}
	a.RecordTags(tagsOf("k", "x"), 1) // re-created
	a.RecordTags(tagsOf("k", "y"), 1)
	a.RecordTags(tagsOf("k", "z"), 1) // past the limit: the overflow series
	for _, s := range a.AppendSeries(nil) {
		if st, own := CumulativeStart(a, s); !own || !st.Equal(s.Start()) {
			t.Errorf("re-created: %v, own %v; want its own %v", st, own, s.Start())
		}
	}
	o := a.Overflow()
	if o == nil {
		t.Fatal("no overflow series")
	}
	if st, own := CumulativeStart(a, o); own || !st.Equal(a.Start()) || !o.AfterFree() {
		t.Errorf("overflow: %v, own %v (after free %v); want the aggregator's %v", st, own, o.AfterFree(), a.Start())
	}
}

// TestLeftOutKeepsSeals: a reader whose read of a view left series out
// (a view whose keys grew since it loaded it) acknowledges no seal, so a
// series another reader sealed meanwhile is not freed before it reads
// its final values.
func TestLeftOutKeepsSeals(t *testing.T) {
	a := core.NewAggregator(core.KindCount, []string{"k"}, nil, 0)
	q, r := NewTracker(1), NewTracker(0)
	gotQ, gotR := map[string]int64{}, map[string]int64{}
	a.RecordTags(tagsOf("k", "x"), 1)
	cycle(r, a, gotR)
	a.RecordTags(tagsOf("k", "x"), 1)
	for range 3 { // Q reads, finds it idle, seals it
		cycle(q, a, gotQ)
	}
	// R's cycle leaves the series out.
	r.Begin()
	st := r.View(a)
	st.LeftOut()
	st.Done()
	r.End()
	if len(a.AppendSeries(nil)) != 1 {
		t.Fatal("a reader that left the sealed series out let it be freed")
	}
	cycle(r, a, gotR)
	if gotR["x"] != 2 || gotQ["x"] != 2 {
		t.Errorf("R read %v, Q %v; want x=2 each", gotR, gotQ)
	}
}
