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

// A handle's KeepExemplar stores the exemplar in the series the record
// went to, in each Distribution view over the measure (upper-inclusive
// buckets found as the record's), the latest per bucket winning, and
// offers it to the reservoir of a Sum view's series (reservoir_test.go);
// a measure with an exponential view only keeps none and allocates
// nothing.
func TestBoundKeepExemplar(t *testing.T) {
	forRecorders(t, func(t *testing.T, rec func(*Bound, int64)) {
		m := &Measure{Name: "bound/exemplar"}
		exp := NewAggregator(KindExponential, []string{"k"}, nil, 0)
		sum := NewAggregator(KindSum, []string{"k"}, nil, 0)
		d1 := NewAggregator(KindDistribution, []string{"k"}, []float64{10, 100}, 0)
		d1.CountUpperInclusive()
		d2 := NewAggregator(KindDistribution, nil, []float64{5}, 0)
		m.Subscribe(exp)
		b := m.Bind(tagsOf("k", "x"))
		rec(b, 3)
		if n := testing.AllocsPerRun(100, func() { b.KeepExemplar(3, [16]byte{1}, [8]byte{1}) }); n != 0 {
			t.Errorf("KeepExemplar with an exponential view only: %v allocs; want 0", n)
		}
		if exs := exp.AppendSeries(nil)[0].Exemplars(nil); exs != nil {
			t.Errorf("the exponential view kept %v", exs)
		}
		m.Subscribe(sum)
		b = m.Bind(tagsOf("k", "x"))
		m.Subscribe(d1)
		m.Subscribe(d2)
		for _, r := range []struct {
			v  int64
			id byte
		}{{7, 1}, {10, 2}, {50, 3}, {3, 4}} {
			rec(b, r.v)
			b.KeepExemplar(float64(r.v), [16]byte{15: r.id}, [8]byte{7: r.id})
		}
		exs := d1.AppendSeries(nil)[0].Exemplars(nil)
		if len(exs) != 3 || exs[0] == nil || exs[1] == nil || exs[2] != nil {
			t.Fatalf("d1 exemplars %v; want buckets le=10 and le=100", exs)
		}
		// 10 counts in le=10 (upper-inclusive), after 7; then 3.
		if exs[0].Value != 3 || exs[0].TraceID[15] != 4 || exs[0].SpanID[7] != 4 || exs[0].Attachments != nil || !exs[0].HasSpan() {
			t.Errorf("d1 le=10: %+v; want 3 with span 4", exs[0])
		}
		if exs[1].Value != 50 || exs[1].TraceID[15] != 3 || exs[1].Time == 0 {
			t.Errorf("d1 le=100: %+v; want 50 with span 3", exs[1])
		}
		exs = d2.AppendSeries(nil)[0].Exemplars(nil)
		if len(exs) != 2 || exs[0] == nil || exs[0].Value != 3 || exs[1] == nil || exs[1].Value != 50 {
			t.Errorf("d2 exemplars %v; want 3 (le=5) and 50 (+Inf)", exs)
		}
		// The Sum's reservoir: with at least 4 slots, its first slots hold
		// the 4 offers in order; with fewer, each holds one of them.
		exs = sum.AppendSeries(nil)[0].Exemplars(nil)
		k := reservoirSize()
		if len(exs) != k {
			t.Errorf("the Sum view's reservoir has %d slots; want %d (GOMAXPROCS)", len(exs), k)
		}
		offers := []float64{7, 10, 50, 3}
		for i, x := range exs[:min(len(exs), 4)] {
			switch {
			case x == nil || x.SpanID[7] == 0 || x.Value != offers[x.SpanID[7]-1]:
				t.Errorf("the Sum view's slot %d: %+v; want one of the offers %v", i, x, offers)
			case k >= 4 && x.Value != offers[i]:
				t.Errorf("the Sum view's slot %d: %+v; want %v", i, x, offers[i])
			}
		}
		if got := d1.AppendSeries(nil)[0].ReadDist(make([]int64, 3)).Count; got != 4 {
			t.Errorf("d1 count %d; want 4", got)
		}
	})
}
