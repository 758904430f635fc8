package exphist_test

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/race"
)

// concurrentValues returns per-goroutine values whose contrast keeps
// growing (each goroutine widens the range at its own pace, so downscales
// happen while others record), with zeros, negatives and NaNs mixed in.
func concurrentValues(goroutines, n int) [][]float64 {
	vs := make([][]float64, goroutines)
	for g := range vs {
		r := rand.New(rand.NewPCG(45, uint64(g)))
		vs[g] = make([]float64, n)
		hi, lo := 1.0, 1.0
		for i := range vs[g] {
			var v float64
			switch r.IntN(8) {
			case 0:
				hi *= 1.01 + r.Float64()*0.05
				v = hi
			case 1:
				lo /= 1.01 + r.Float64()*0.05
				v = -lo
			case 2:
				v = 0
			case 3:
				v = math.NaN()
			default:
				v = math.Exp(r.NormFloat64())
			}
			vs[g][i] = v
		}
	}
	return vs
}

func sumCounts(b exphist.Buckets) uint64 {
	var n uint64
	for _, c := range b.Counts {
		n += c
	}
	return n
}

// checkConsistent checks what every snapshot must satisfy, whenever it is
// taken.
func checkConsistent(t *testing.T, s *exphist.Snapshot, maxSize int32) {
	t.Helper()
	if n := s.ZeroCount + sumCounts(s.Positive) + sumCounts(s.Negative); n != s.Count {
		t.Fatalf("count %d; buckets and zero count hold %d", s.Count, n)
	}
	if len(s.Positive.Counts) > int(maxSize) || len(s.Negative.Counts) > int(maxSize) {
		t.Fatalf("%d, %d buckets; at most %d", len(s.Positive.Counts), len(s.Negative.Counts), maxSize)
	}
}

// TestHistogramConcurrentSafe records from several goroutines, released
// together by a start gate, while downscales happen and a reader takes
// snapshots (each consistent: the count is the buckets' sum, the scale
// never rises, the count never falls). The final snapshot must equal that
// of one goroutine recording the same values: a histogram's scale and
// buckets depend only on the set of values, not their order (the sum
// within the rounding of the orders).
func TestHistogramConcurrentSafe(t *testing.T) {
	const goroutines = 8
	n := 20000
	if race.Enabled || testing.Short() {
		n = 2000
	}
	vs := concurrentValues(goroutines, n)
	h := exphist.MustNew(exphist.DefaultMaxSize, exphist.DefaultMaxScale)
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			<-gate
			for _, v := range vs[g] {
				h.Record(v)
			}
		})
	}
	done := make(chan struct{})
	var readerWG sync.WaitGroup
	readers := 0
	readerWG.Go(func() {
		var s exphist.Snapshot
		last := exphist.Snapshot{Scale: exphist.MaxScale}
		for {
			select {
			case <-done:
				return
			default:
			}
			h.Snapshot(&s)
			checkConsistent(t, &s, h.MaxSize())
			if s.Scale > last.Scale || s.Count < last.Count {
				t.Errorf("scale %d, count %d after scale %d, count %d", s.Scale, s.Count, last.Scale, last.Count)
				return
			}
			last.Scale, last.Count = s.Scale, s.Count
			readers++
		}
	})
	close(gate)
	wg.Wait()
	close(done)
	readerWG.Wait()

	seq := exphist.MustNew(exphist.DefaultMaxSize, exphist.DefaultMaxScale)
	var all []float64
	for _, g := range vs {
		for _, v := range g {
			seq.Record(v)
		}
		all = append(all, g...)
	}
	var got, want exphist.Snapshot
	h.Snapshot(&got)
	seq.Snapshot(&want)
	if d := diff(&got, &want, false); d != "" {
		t.Fatal(d)
	}
	checkSum(t, "concurrent", got.Sum, all)
	t.Logf("%d snapshots during the records; final scale %d", readers, got.Scale)
}

// TestSnapshotResetConcurrentSafe: a reader taking delta reads
// (SnapshotReset) while goroutines record loses and duplicates nothing:
// the intervals merged give what one goroutine recording every value
// gives.
func TestSnapshotResetConcurrentSafe(t *testing.T) {
	const goroutines = 4
	n := 20000
	if race.Enabled || testing.Short() {
		n = 2000
	}
	vs := concurrentValues(goroutines, n)
	h := exphist.MustNew(exphist.DefaultMaxSize, exphist.DefaultMaxScale)
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			<-gate
			for _, v := range vs[g] {
				h.Record(v)
			}
		})
	}
	var merged, iv exphist.Snapshot
	intervals := 0
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	close(gate)
	for stop := false; !stop; {
		select {
		case <-done:
			stop = true
		default:
		}
		h.SnapshotReset(&iv)
		checkConsistent(t, &iv, h.MaxSize())
		merged.Merge(&iv, h.MaxSize())
		intervals++
	}
	seq := exphist.MustNew(exphist.DefaultMaxSize, exphist.DefaultMaxScale)
	for _, g := range vs {
		for _, v := range g {
			seq.Record(v)
		}
	}
	var want exphist.Snapshot
	seq.Snapshot(&want)
	if d := diff(&merged, &want, false); d != "" {
		t.Fatalf("%d intervals merged: %s", intervals, d)
	}
	t.Logf("%d intervals", intervals)
}
