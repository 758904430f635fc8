package core

import (
	"fmt"
	"sync"
	"testing"
)

// Concurrent records with exemplars into the same series and into new
// ones: exact counts, and every bucket recorded into holds one of the
// values it counted. Run under -race.
func TestRecordMapExemplarConcurrentSafe(t *testing.T) {
	a := NewAggregator(KindDistribution, []string{"k"}, []float64{10, 100}, 0)
	maps := make([]*TagMap, 4)
	for i := range maps {
		maps[i] = NewTagMap(Canonical(tagsOf("k", fmt.Sprint(i))))
	}
	const perG, gs = 2000, 4
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range perG {
				v := float64((g*perG + i) % 200)
				a.RecordMapExemplar(maps[i%len(maps)], v, &Exemplar{Value: v, Time: int64(i)})
			}
		}()
	}
	close(start)
	wg.Wait()
	var total int64
	buckets := make([]int64, 3)
	for _, s := range a.AppendSeries(nil) {
		total += s.ReadDist(buckets).Count
		exs := s.Exemplars(nil)
		if len(exs) != 3 {
			t.Fatalf("series has %d exemplar slots; want 3", len(exs))
		}
		for b, e := range exs {
			if e == nil {
				t.Errorf("bucket %d has no exemplar", b)
				continue
			}
			if got := bucketIndex(a.bounds, e.Value); got != b {
				t.Errorf("bucket %d holds exemplar %v of bucket %d", b, e.Value, got)
			}
		}
	}
	if total != perG*gs {
		t.Errorf("count %d; want %d", total, perG*gs)
	}
}

// Exemplars go to the overflow series past the limit, and a record
// without one leaves a series without exemplars.
func TestExemplarOverflowAndNone(t *testing.T) {
	a := NewAggregator(KindDistribution, []string{"k"}, []float64{10}, 1)
	a.RecordMap(NewTagMap(Canonical(tagsOf("k", "a"))), 1)
	a.RecordMapExemplar(NewTagMap(Canonical(tagsOf("k", "b"))), 20, &Exemplar{Value: 20})
	if s := a.AppendSeries(nil); len(s) != 1 || s[0].Exemplars(nil) != nil {
		t.Fatalf("the series without exemplars has %v", s[0].Exemplars(nil))
	}
	o := a.Overflow()
	if o == nil {
		t.Fatal("no overflow series")
	}
	if exs := o.Exemplars(nil); len(exs) != 2 || exs[1] == nil || exs[1].Value != 20 {
		t.Errorf("overflow exemplars %v; want 20 in bucket 1", exs)
	}
	// Other kinds keep none (and record normally).
	c := NewAggregator(KindCount, nil, nil, 0)
	c.RecordMapExemplar(nil, 1, &Exemplar{Value: 1})
	if s := c.AppendSeries(nil); len(s) != 0 && s[0].Exemplars(nil) != nil {
		t.Error("a count series kept an exemplar")
	}
	if c.noTags.Load().ReadCount() != 1 {
		t.Error("RecordMapExemplar did not record into a count")
	}
}
