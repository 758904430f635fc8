package core

import (
	"math"
	"runtime"
	"sync"
	"testing"
)

// offerAll offers n values, first..first+n-1, to s's series through its
// handle b, and returns the slots a collection then reads.
func offerAll(b *Bound, s func() *Series, first, n int) []*Exemplar {
	for v := first; v < first+n; v++ {
		b.RecordInt(int64(v))
		b.KeepExemplar(float64(v), [16]byte{15: byte(v)}, [8]byte{7: byte(v)})
	}
	return s().Exemplars(nil)
}

func exemplarValues(exs []*Exemplar) []float64 {
	var out []float64
	for _, x := range exs {
		if x == nil {
			out = append(out, math.NaN())
			continue
		}
		out = append(out, x.Value)
	}
	return out
}

// A Count's, a Sum's and a LastValue's series keep a reservoir of
// GOMAXPROCS slots, as the OTel SDK's FixedSizeReservoir: a cycle's first
// offers fill them in order (a slot not reached yet is nil), a collection
// (Series.Exemplars) ends the cycle, and the next cycle's offers fill the
// slots again from the first while the others keep theirs. Each exemplar
// carries its value, span ids and time.
func TestReservoirFillsInOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	for _, kind := range []Kind{KindCount, KindSum, KindLastValue} {
		m := &Measure{Name: "reservoir/order"}
		a := NewAggregator(kind, []string{"k"}, nil, 0)
		m.Subscribe(a)
		b := m.Bind(tagsOf("k", "x"))
		b.RecordInt(1)
		s := func() *Series { return a.AppendSeries(nil)[0] }
		if exs := s().Exemplars(nil); exs != nil {
			t.Fatalf("%v: a series recorded without exemplars has %v", kind, exs)
		}
		check := func(step string, got []*Exemplar, want ...float64) {
			t.Helper()
			g := exemplarValues(got)
			if len(g) != len(want) {
				t.Fatalf("%v, %s: slots %v; want %v", kind, step, g, want)
			}
			for i := range want {
				if math.IsNaN(want[i]) != math.IsNaN(g[i]) || !math.IsNaN(want[i]) && g[i] != want[i] {
					t.Fatalf("%v, %s: slots %v; want %v", kind, step, g, want)
				}
				if x := got[i]; x != nil && (x.TraceID[15] != byte(x.Value) || x.SpanID[7] != byte(x.Value) || x.Time == 0 || !x.HasSpan()) {
					t.Errorf("%v, %s: slot %d: %+v", kind, step, i, x)
				}
			}
		}
		nan := math.NaN()
		check("two offers", offerAll(b, s, 10, 2), 10, 11, nan)
		check("one more cycle of one", offerAll(b, s, 20, 1), 20, 11, nan)
		check("a cycle of three", offerAll(b, s, 30, 3), 30, 31, 32)
		check("a cycle without offers", s().Exemplars(nil), 30, 31, 32)
		// More offers than slots: the first three fill them, later ones
		// replace at random; all of this cycle.
		got := offerAll(b, s, 40, 50)
		for i, x := range got {
			if x == nil || x.Value < 40 || x.Value >= 90 {
				t.Errorf("%v: slot %d after 50 offers: %+v; want one of them", kind, i, x)
			}
		}
	}
}

// Each of a cycle's n offers is kept with probability k/n, whatever its
// place (reservoir sampling): k=3 slots, n=12 offers, many cycles; each
// offer's frequency is within 5 standard deviations of k/n, and the
// first and the last are kept alike (a "latest wins" store would keep
// the last every time, the first never).
func TestReservoirUniform(t *testing.T) {
	const k, n, cycles = 3, 12, 20000
	r := newSampler(k)
	var kept [n]int
	for range cycles {
		var slots [k]int
		for i := range n {
			if j, ok := r.offer(); ok {
				slots[j] = i
			}
		}
		for _, i := range slots {
			kept[i]++
		}
		r.ended.Store(true)
	}
	p := float64(k) / n
	sd := math.Sqrt(cycles * p * (1 - p))
	for i, c := range kept {
		if math.Abs(float64(c)-cycles*p) > 5*sd {
			t.Errorf("offer %d kept %d times in %d cycles; want %.0f ± %.0f", i, c, cycles, cycles*p, 5*sd)
		}
	}
	t.Logf("kept per offer: %v (expected %.0f each)", kept, cycles*p)
}

// Concurrent records with exemplars into one Sum series: the count is
// exact and every slot holds one of the values offered, with its span.
// Run under -race.
func TestReservoirConcurrentSafe(t *testing.T) {
	m := &Measure{Name: "reservoir/concurrent"}
	a := NewAggregator(KindSum, nil, nil, 0)
	m.Subscribe(a)
	const gs, each = 4, 3000
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := m.Bind(nil)
			<-start
			for i := range each {
				v := i%100*10 + g // its last digit is the goroutine's
				b.RecordInt(int64(v))
				b.KeepExemplar(float64(v), [16]byte{15: byte(g + 1)}, [8]byte{7: byte(g + 1)})
				if i%500 == 0 {
					a.AppendSeries(nil)[0].Exemplars(nil) // a collection meanwhile
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	s := a.AppendSeries(nil)[0]
	var want float64
	for g := range gs {
		for i := range each {
			want += float64(i%100*10 + g)
		}
	}
	if got := s.ReadSum(); got != want {
		t.Errorf("sum %v; want %v", got, want)
	}
	for i, x := range s.Exemplars(nil) {
		if x == nil || x.TraceID[15] != byte(int(x.Value)%10+1) {
			t.Errorf("slot %d: %+v; want a value offered, with its goroutine's span", i, x)
		}
	}
}
