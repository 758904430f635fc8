package exphist

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// benchValues are 1024 values of a workload, cycled through by the record
// benchmarks; every implementation reads the same ones. "house" are the
// benchmarks module's histValues (benchmarks/record_test.go): integers
// spread log-uniformly over [1, 30000), scale 3 at 160 buckets; "narrow"
// are in [100, 101): scale 13, above the tables (Index's logarithm).
func benchValues(kind string) []float64 {
	r := rand.New(rand.NewPCG(42, 42))
	vs := make([]float64, 1024)
	for i := range vs {
		switch kind {
		case "house":
			vs[i] = math.Floor(math.Exp(r.Float64() * math.Log(30000)))
		case "narrow":
			vs[i] = 100 + r.Float64()
		}
	}
	return vs
}

// classicBounds are the 15 bounds of the benchmarks module's histogram
// scenarios (benchmarks/record_test.go histBounds).
var classicBounds = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}

// classicCell is the baseline: internal/core's distCell record of a
// 15-bound histogram (distCell.add without its delta-read extras): the
// linear bound search, the lock word's compare-and-swap, min, max, count,
// Welford's mean and M2 (one division), the sum, the bucket, the
// releasing store.
type classicCell struct {
	lock          atomic.Uint32
	count         uint64
	mean, m2, sum float64
	min, max      float64
	buckets       [16]uint64
	_             [64]byte // keep cells of the striped benchmark apart
}

func (c *classicCell) add(v float64) {
	i := 0
	for i < len(classicBounds) && !(v < classicBounds[i]) {
		i++
	}
	if !c.lock.CompareAndSwap(lockFree, lockWriter) {
		for !c.lock.CompareAndSwap(lockFree, lockWriter) {
		}
	}
	if v < c.min {
		c.min = v
	}
	if v > c.max {
		c.max = v
	}
	n := c.count + 1
	c.count = n
	c.sum += v
	c.buckets[i&15]++
	if n == 1 {
		c.mean = v
	} else {
		old := c.mean
		mean := old + (v-old)/float64(int64(n))
		c.mean = mean
		c.m2 += (v - old) * (v - mean)
	}
	releaseLock(&c.lock)
}

var (
	sinkB bool
	sinkR Result
)

// BenchmarkRecord: one goroutine recording into one histogram
// (impl=exphist) or into the classic 15-bound cell (impl=classic), over
// the same values.
func BenchmarkRecord(b *testing.B) {
	for _, kind := range []string{"house", "narrow"} {
		vs := benchValues(kind)
		b.Run("values="+kind+"/impl=exphist", func(b *testing.B) {
			h := MustNew(DefaultMaxSize, DefaultMaxScale)
			for _, v := range vs {
				h.Record(v) // settle the scale
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				sinkR = h.Record(vs[i&1023])
				i++
			}
		})
		b.Run("values="+kind+"/impl=classic", func(b *testing.B) {
			c := &classicCell{min: math.Inf(1), max: math.Inf(-1)}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				c.add(vs[i&1023])
				i++
			}
		})
	}
}

// BenchmarkRecordParallel: b.RunParallel goroutines recording into one
// shared histogram (contended: what core's striping avoids) and each into
// its own (stripe=own, what core's per-P stripes give).
func BenchmarkRecordParallel(b *testing.B) {
	vs := benchValues("house")
	for _, stripe := range []string{"shared", "own"} {
		b.Run("stripe="+stripe+"/impl=exphist", func(b *testing.B) {
			shared := MustNew(DefaultMaxSize, DefaultMaxScale)
			for _, v := range vs {
				shared.Record(v)
			}
			b.ReportAllocs()
			var seed atomic.Uint32
			b.RunParallel(func(pb *testing.PB) {
				h := shared
				if stripe == "own" {
					h = MustNew(DefaultMaxSize, DefaultMaxScale)
					for _, v := range vs {
						h.Record(v)
					}
				}
				i := int(seed.Add(1)) * 512
				for pb.Next() {
					h.Record(vs[i&1023])
					i++
				}
			})
		})
		b.Run("stripe="+stripe+"/impl=classic", func(b *testing.B) {
			cells := make([]classicCell, 64)
			for i := range cells {
				cells[i].min, cells[i].max = math.Inf(1), math.Inf(-1)
			}
			b.ReportAllocs()
			var seed atomic.Uint32
			b.RunParallel(func(pb *testing.PB) {
				g := int(seed.Add(1))
				c := &cells[0]
				if stripe == "own" {
					c = &cells[g%64]
				}
				i := g * 512
				for pb.Next() {
					c.add(vs[i&1023])
					i++
				}
			})
		})
	}
}

// BenchmarkSnapshot: a read of a settled histogram into a reused
// Snapshot, and Merge and Sub of two reads.
func BenchmarkSnapshot(b *testing.B) {
	vs := benchValues("house")
	h := MustNew(DefaultMaxSize, DefaultMaxScale)
	for _, v := range vs {
		h.Record(v)
		h.Record(-v)
	}
	var s, o Snapshot
	h.Snapshot(&o)
	b.Run("op=snapshot", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.Snapshot(&s)
		}
	})
	b.Run("op=merge", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.Snapshot(&s)
			s.Merge(&o, h.maxSize)
		}
	})
	b.Run("op=sub", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.Snapshot(&s)
			sinkB = s.Sub(&o) == nil
		}
	})
}
