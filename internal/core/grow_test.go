package core

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// valuesOf returns the tag values of s by key (the aggregator's keys now),
// absent keys left out: "a=1,b=2".
func valuesOf(a *Aggregator, s *Series) string {
	strs := Interned()
	keys := a.Keys()
	out := ""
	for i, id := range s.ValueIDs() {
		if id == 0 {
			continue
		}
		if out != "" {
			out += ","
		}
		out += keys[i] + "=" + strs[id]
	}
	return out
}

func countsOf(a *Aggregator) map[string]int64 {
	m := map[string]int64{}
	for _, s := range a.AppendSeries(nil) {
		m[valuesOf(a, s)] += s.ReadCount()
	}
	return m
}

func TestMakeGrowableRules(t *testing.T) {
	if err := NewAggregator(KindCount, nil, nil, 0).MakeGrowable(); err == nil {
		t.Error("MakeGrowable of an aggregator without keys: no error")
	}
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	if _, _, err := a.addKeys([]string{"x"}); err == nil {
		t.Error("addKeys before MakeGrowable: no error")
	}
	a.RecordTags(tagsOf("k", "1"), 1)
	if err := a.MakeGrowable(); err == nil {
		t.Error("MakeGrowable after the first series: no error")
	}
	b := NewAggregator(KindCount, []string{"k"}, nil, 0)
	if err := b.MakeGrowable(); err != nil {
		t.Fatal(err)
	}
	if keys, grew, err := b.addKeys([]string{"k"}); err != nil || grew || !slices.Equal(keys, []string{"k"}) {
		t.Errorf("addKeys of a key it has: %v %v %v", keys, grew, err)
	}
}

// TestAddKeysKeepsSeries: a series created before keys were added is the
// one found for its tags after (its hash and values do not change), the
// new key's values make series of their own, and records through a tag
// map's cache and through an evicted, freed series' successor land where
// they belong.
func TestAddKeysKeepsSeries(t *testing.T) {
	for _, kind := range []Kind{KindCount, KindDistribution, KindExponential} {
		t.Run(fmt.Sprint(kind), func(t *testing.T) {
			var bounds []float64
			if kind == KindDistribution {
				bounds = []float64{1, 10}
			}
			a := NewAggregator(kind, []string{"m", "b"}, bounds, 0)
			if err := a.MakeGrowable(); err != nil {
				t.Fatal(err)
			}
			old := NewTagMap(tagsOf("b", "1", "z", "9"))
			a.RecordMap(old, 1)
			a.RecordTags(tagsOf("m", "x"), 1)
			// z is added to the keys, then a: view order is b, m, z, a.
			for _, k := range []string{"z", "a"} {
				if _, grew, err := a.addKeys([]string{k}); err != nil || !grew {
					t.Fatalf("addKeys(%s): %v %v", k, grew, err)
				}
			}
			if got := a.Keys(); !slices.Equal(got, []string{"b", "m", "z", "a"}) {
				t.Fatalf("Keys %v", got)
			}
			// The map resolved its series before z was added: its cache
			// keeps it (the documented rule).
			a.RecordMap(old, 1)
			a.RecordTags(tagsOf("m", "x"), 1)
			a.RecordTags(tagsOf("m", "x", "a", ""), 1) // empty: absent
			a.RecordTags(tagsOf("b", "1", "z", "9"), 1)
			a.RecordTags(tagsOf("m", "x", "a", "2"), 1)
			a.RecordTags(tagsOf("a", "2", "z", "3", "b", "1", "m", "x"), 1)
			read := func() map[string]int64 {
				m := map[string]int64{}
				for _, s := range a.AppendSeries(nil) {
					n := s.ReadCount()
					if kind == KindDistribution {
						n = s.ReadDist(make([]int64, 3)).Count
					} else if kind == KindExponential {
						n = int64(expCount(s))
					}
					m[valuesOf(a, s)] += n
				}
				return m
			}
			want := map[string]int64{"b=1": 2, "m=x": 3, "b=1,z=9": 1, "m=x,a=2": 1, "b=1,m=x,z=3,a=2": 1}
			if got := read(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("series %v; want %v", got, want)
			}
			for _, s := range a.AppendSeries(nil) {
				want := 4
				if vs := valuesOf(a, s); vs == "b=1" || vs == "m=x" {
					want = 2 // created before z and a were added
				}
				if n := len(s.ValueIDs()); n != want {
					t.Errorf("series %s has %d values; want %d", valuesOf(a, s), n, want)
				}
			}
			// Evict and free every series; the map's cache still holds
			// its old series, whose successor gets its values.
			for _, s := range a.AppendSeries(nil) {
				s.Evict()
			}
			a.Sweep()
			a.RecordMap(old, 1)
			a.RecordTags(tagsOf("m", "x", "a", "2"), 1)
			want = map[string]int64{"b=1": 1, "m=x,a=2": 1}
			if got := read(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("after eviction %v; want %v", got, want)
			}
		})
	}
}

// TestGrowViewPublishesSuccessor: GrowView replaces the published view,
// a reader holding the previous one sees only the series its keys
// describe, and RemoveView through a stale view removes the current one.
func TestGrowViewPublishesSuccessor(t *testing.T) {
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	if err := a.MakeGrowable(); err != nil {
		t.Fatal(err)
	}
	v := &View{Name: "grow/successor", Keys: []string{"k"}, Agg: a}
	AddView(v)
	a.RecordTags(tagsOf("k", "1"), 1)
	v2, err := GrowView(v, []string{"late"})
	if err != nil || v2 == v || !slices.Equal(v2.Keys, []string{"k", "late"}) || len(v2.KeyIDs) != 2 {
		t.Fatalf("GrowView: %v, %+v", err, v2)
	}
	if FindView("grow/successor") != v2 {
		t.Fatal("the successor is not published")
	}
	if v3, err := GrowView(v, []string{"late"}); err != nil || v3 != v2 {
		t.Errorf("GrowView of a key the view has, through the stale view: %p %v; want the current %p", v3, err, v2)
	}
	a.RecordTags(tagsOf("k", "1", "late", "x"), 1)
	if ss, complete := v.AppendSeries(nil); len(ss) != 1 || complete {
		t.Errorf("the previous view reads %d series, complete %v; want 1 (the one its keys describe), not complete", len(ss), complete)
	}
	if ss, complete := v2.AppendSeries(nil); len(ss) != 2 || !complete {
		t.Errorf("the successor reads %d series, complete %v; want 2, complete", len(ss), complete)
	}
	RemoveView(v)
	if FindView("grow/successor") != nil {
		t.Error("RemoveView through the previous view left the successor published")
	}
}

// TestGrowWhileRecordingAndReading: recorders of tag sets with and without
// keys being added, a goroutine adding them, and a reader that checks
// every snapshot against the keys it loads after it: no series ever has
// more values than those keys, no tag set has two series, and the counts
// are exact.
func TestGrowWhileRecordingAndReading(t *testing.T) {
	a := NewAggregator(KindCount, []string{"k0"}, nil, 0)
	if err := a.MakeGrowable(); err != nil {
		t.Fatal(err)
	}
	v := &View{Name: "grow/race", Keys: []string{"k0"}, Agg: a}
	AddView(v)
	defer RemoveView(v)
	const keys, perG, gs = 6, 3000, 4
	var added atomic.Int32 // keys k1..k(added) may be recorded
	var stop atomic.Bool
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { // grows
		defer readers.Done()
		for k := 1; k <= keys; k++ {
			if _, err := GrowView(v, []string{fmt.Sprint("k", k)}); err != nil {
				t.Error(err)
				return
			}
			added.Store(int32(k))
			for i := 0; i < 200 && !stop.Load(); i++ {
				countsOf(a) // some work between growths
			}
		}
	}()
	var snaps atomic.Int64
	go func() { // reads as exporters do
		defer readers.Done()
		for !stop.Load() || snaps.Load() == 0 {
			cv := FindView("grow/race")
			ss, _ := cv.AppendSeries(nil)
			seen := map[string]bool{}
			strs := Interned()
			for _, s := range ss {
				vids := s.ValueIDs()
				if len(vids) > len(cv.Keys) {
					t.Errorf("a series with %d values read with %d keys", len(vids), len(cv.Keys))
					return
				}
				key := ""
				for i := range cv.Keys {
					key += cv.Keys[i] + "=" + strs[ValueID(vids, i)] + ";"
				}
				if seen[key] {
					t.Errorf("two series of %s", key)
					return
				}
				seen[key] = true
			}
			snaps.Add(1)
		}
	}()
	onGoroutines(gs, func(g int) {
		for i := range perG {
			n := int(added.Load())
			ts := tagsOf("k0", fmt.Sprint(i%3))
			if n > 0 {
				k := i % (n + 1) // 0: no added key
				if k > 0 {
					ts = tagsOf("k0", fmt.Sprint(i%3), fmt.Sprint("k", k), fmt.Sprint(g%2))
				}
			}
			a.RecordTags(ts, 1)
		}
	})
	stop.Store(true)
	readers.Wait()
	var total int64
	for _, n := range countsOf(a) {
		total += n
	}
	if total != gs*perG {
		t.Errorf("total %d; want %d", total, gs*perG)
	}
	if len(countsOf(a)) != len(a.AppendSeries(nil)) {
		t.Error("two series of one tag set")
	}
}
