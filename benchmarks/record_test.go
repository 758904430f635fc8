// Package benchmarks measures zerostat's record path side by side with
// other metrics SDKs on the same scenarios. Run with
//
//	go test -run XXX -bench BenchmarkRecord -benchmem -count 6 | tee out.txt
//	benchstat -col /impl out.txt
//
// to get one column per implementation.
package benchmarks

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"
	octag "go.opencensus.io/tag"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// A scenario is run by every implementation that supports it.
type scenario struct {
	name  string
	impls []impl
}

type impl struct {
	name string
	fn   func(b *testing.B)
}

// seq makes view names unique per benchmark invocation: each invocation
// starts from fresh views, so the after-loop check sees exactly its own
// recordings.
var seq atomic.Int64

func uniq(scenario string) string { return fmt.Sprintf("bench/%s/%d", scenario, seq.Add(1)) }

// histBounds are the 15 bounds of the histogram scenarios.
var histBounds = [15]float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}

// histValues are integral values spread log-uniformly over [1, 30000), so
// every bucket is hit (and some values fall exactly on bounds). Iteration i
// records histValues[i&1023].
var histValues = func() (vs [1024]float64) {
	r := rand.New(rand.NewPCG(42, 42))
	for i := range vs {
		vs[i] = math.Floor(math.Exp(r.Float64() * math.Log(30000)))
	}
	return vs
}()

func histIndex(v float64) int {
	i := 0
	for i < len(histBounds) && !(v < histBounds[i]) {
		i++
	}
	return i
}

// histExpect returns the bucket counts and sum of iterations 0..n-1 of one
// recorder.
func histExpect(buckets *[len(histBounds) + 1]int64, n int) (sum float64) {
	full, rest := n/len(histValues), n%len(histValues)
	for i, v := range histValues {
		c := full
		if i < rest {
			c++
		}
		buckets[histIndex(v)] += int64(c)
		sum += v * float64(c)
	}
	return sum
}

// floorCounter is the least work a counter can do: one atomic add. Every
// scenario whose floor that is shares this one function, so its rows run
// the same machine code. Three copies of this loop, one per scenario,
// read 6.4, 6.7 and 8.9 ns in one make bench run; the 8.9 ns copy
// (counter_2tags') read 6.2 to 6.4 ns run alone: the work is the same, so
// the 8.9 was the copy's placement (its code or its stack counter), and
// the ratios to it were wrong. The counter is on a cache line of its own,
// as a handle's cell is.
func floorCounter(b *testing.B) {
	c := new(struct {
		atomic.Int64
		_ [56]byte
	})
	b.ReportAllocs()
	for b.Loop() {
		c.Add(1)
	}
	checkCount(b, "floor", "counter", c.Load(), int64(b.N))
}

// floorHist is the least work a histogram can do: a linear bound search
// and two atomic adds.
type floorHist struct {
	buckets [len(histBounds) + 1]atomic.Int64
	sum     atomic.Int64
}

func (h *floorHist) record(v float64) {
	h.buckets[histIndex(v)].Add(1)
	h.sum.Add(int64(v))
}

func (h *floorHist) check(b *testing.B, counts []int) {
	b.Helper()
	var want [len(histBounds) + 1]int64
	var sum float64
	for _, n := range counts {
		sum += histExpect(&want, n)
	}
	for i := range want {
		if got := h.buckets[i].Load(); got != want[i] {
			b.Fatalf("floor bucket %d: got %d; want %d", i, got, want[i])
		}
	}
	if got := h.sum.Load(); float64(got) != sum {
		b.Fatalf("floor sum: got %d; want %v", got, sum)
	}
}

// ---------------------------------------------------------------------------
// Checks: after its loop every benchmark verifies the SDK aggregated what
// it was given.

func zsRow(b *testing.B, name string, wantTags int) view.AggregationData {
	b.Helper()
	rows, err := view.RetrieveData(name)
	if err != nil {
		b.Fatalf("zerostat RetrieveData(%q): got error %v; want nil", name, err)
	}
	if len(rows) != 1 {
		b.Fatalf("zerostat view %q: got %d rows; want 1", name, len(rows))
	}
	if len(rows[0].Tags) != wantTags {
		b.Fatalf("zerostat view %q: got %d tags in the row; want %d", name, len(rows[0].Tags), wantTags)
	}
	return rows[0].Data
}

func ocRow(b *testing.B, name string, wantTags int) ocview.AggregationData {
	b.Helper()
	rows, err := ocview.RetrieveData(name)
	if err != nil {
		b.Fatalf("opencensus RetrieveData(%q): got error %v; want nil", name, err)
	}
	if len(rows) != 1 {
		b.Fatalf("opencensus view %q: got %d rows; want 1", name, len(rows))
	}
	if len(rows[0].Tags) != wantTags {
		b.Fatalf("opencensus view %q: got %d tags in the row; want %d", name, len(rows[0].Tags), wantTags)
	}
	return rows[0].Data
}

func checkSum(b *testing.B, impl, name string, got, want float64) {
	b.Helper()
	if got != want {
		b.Fatalf("%s view %q: got sum %v; want %v", impl, name, got, want)
	}
}

func checkCount(b *testing.B, impl, name string, got, want int64) {
	b.Helper()
	if got != want {
		b.Fatalf("%s view %q: got count %d; want %d", impl, name, got, want)
	}
}

func checkDist(b *testing.B, impl, name string, count int64, buckets []int64, mean float64, counts []int) {
	b.Helper()
	var want [len(histBounds) + 1]int64
	var sum float64
	var n int64
	for _, c := range counts {
		sum += histExpect(&want, c)
		n += int64(c)
	}
	if count != n {
		b.Fatalf("%s view %q: got count %d; want %d", impl, name, count, n)
	}
	for i := range want {
		if buckets[i] != want[i] {
			b.Fatalf("%s view %q: bucket %d: got %d; want %d", impl, name, i, buckets[i], want[i])
		}
	}
	if w := sum / float64(n); math.Abs(mean-w) > 1e-9*w {
		b.Fatalf("%s view %q: got mean %v; want %v", impl, name, mean, w)
	}
}

// parallelLoops runs loop on each RunParallel goroutine and returns
// each goroutine's iteration count, which loop returns. The loop is
// written out at the call site, as a single-goroutine row's is and a
// user's would be: a body called per iteration (a func(i int), as this
// helper took before) added an indirect call to every parallel record
// and to no single one, about 0.6 ns an op to zerostat's 2-goroutine
// handle row (5.1 against 4.5 ns), biasing the parallel/single ratios
// that issue 41 (item 13) sets targets on.
func parallelLoops(b *testing.B, loop func(pb *testing.PB) int) []int {
	var mu sync.Mutex
	var counts []int
	b.RunParallel(func(pb *testing.PB) {
		n := loop(pb)
		mu.Lock()
		counts = append(counts, n)
		mu.Unlock()
	})
	return counts
}

func total(counts []int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// ---------------------------------------------------------------------------
// zerostat and OpenCensus set-up helpers.

func zsKeys(names ...string) []tag.Key {
	ks := make([]tag.Key, len(names))
	for i, n := range names {
		ks[i] = tag.MustNewKey(n)
	}
	return ks
}

func ocKeys(names ...string) []octag.Key {
	ks := make([]octag.Key, len(names))
	for i, n := range names {
		ks[i] = octag.MustNewKey(n)
	}
	return ks
}

// zsCtx returns a context holding keys[i] = "v<i>" for each key, built once
// with tag.New as OpenCensus users write it.
func zsCtx(b *testing.B, keys []tag.Key) context.Context {
	b.Helper()
	muts := make([]tag.Mutator, len(keys))
	for i, k := range keys {
		muts[i] = tag.Upsert(k, fmt.Sprintf("v%d", i))
	}
	ctx, err := tag.New(context.Background(), muts...)
	if err != nil {
		b.Fatalf("zerostat tag.New: got error %v; want nil", err)
	}
	return ctx
}

func ocCtx(b *testing.B, keys []octag.Key) context.Context {
	b.Helper()
	muts := make([]octag.Mutator, len(keys))
	for i, k := range keys {
		muts[i] = octag.Upsert(k, fmt.Sprintf("v%d", i))
	}
	ctx, err := octag.New(context.Background(), muts...)
	if err != nil {
		b.Fatalf("opencensus tag.New: got error %v; want nil", err)
	}
	return ctx
}

func zsRegister(b *testing.B, v *view.View) func() {
	b.Helper()
	if err := view.Register(v); err != nil {
		b.Fatalf("zerostat Register(%q): got error %v; want nil", v.Name, err)
	}
	return func() { view.Unregister(v) }
}

func ocRegister(b *testing.B, v *ocview.View) func() {
	b.Helper()
	if err := ocview.Register(v); err != nil {
		b.Fatalf("opencensus Register(%q): got error %v; want nil", v.Name, err)
	}
	return func() { ocview.Unregister(v) }
}

var (
	keys2 = []string{"method", "status"}
	keys4 = []string{"method", "status", "region", "tier"}
	keys8 = []string{"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"}
)

// ---------------------------------------------------------------------------
// Scenarios.

var scenarios = []scenario{
	{"counter_notags", []impl{
		{"floor", floorCounter},
		{"zerostat", func(b *testing.B) {
			m := stats.Int64("bench/counter_notags", "", stats.UnitDimensionless)
			name := uniq("counter_notags")
			defer zsRegister(b, &view.View{Name: name, Measure: m, Aggregation: view.Sum()})()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				stats.Record(ctx, m.M(1))
			}
			checkSum(b, "zerostat", name, zsRow(b, name, 0).(*view.SumData).Value, float64(b.N))
		}},
		{"opencensus", func(b *testing.B) {
			m := ocstats.Int64("bench/counter_notags", "", ocstats.UnitDimensionless)
			name := uniq("counter_notags")
			defer ocRegister(b, &ocview.View{Name: name, Measure: m, Aggregation: ocview.Sum()})()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				ocstats.Record(ctx, m.M(1))
			}
			checkSum(b, "opencensus", name, ocRow(b, name, 0).(*ocview.SumData).Value, float64(b.N))
		}},
	}},

	{"counter_2tags", []impl{
		{"floor", floorCounter},
		{"zerostat", func(b *testing.B) {
			m := stats.Int64("bench/counter_2tags", "", stats.UnitDimensionless)
			keys := zsKeys(keys2...)
			name := uniq("counter_2tags")
			defer zsRegister(b, &view.View{Name: name, Measure: m, Aggregation: view.Sum(), TagKeys: keys})()
			ctx := zsCtx(b, keys)
			b.ReportAllocs()
			for b.Loop() {
				stats.Record(ctx, m.M(1))
			}
			checkSum(b, "zerostat", name, zsRow(b, name, 2).(*view.SumData).Value, float64(b.N))
		}},
		{"opencensus", func(b *testing.B) {
			m := ocstats.Int64("bench/counter_2tags", "", ocstats.UnitDimensionless)
			keys := ocKeys(keys2...)
			name := uniq("counter_2tags")
			defer ocRegister(b, &ocview.View{Name: name, Measure: m, Aggregation: ocview.Sum(), TagKeys: keys})()
			ctx := ocCtx(b, keys)
			b.ReportAllocs()
			for b.Loop() {
				ocstats.Record(ctx, m.M(1))
			}
			checkSum(b, "opencensus", name, ocRow(b, name, 2).(*ocview.SumData).Value, float64(b.N))
		}},
	}},

	{"histogram_2tags", []impl{
		{"floor", func(b *testing.B) {
			var h floorHist
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				h.record(histValues[i&1023])
				i++
			}
			h.check(b, []int{i})
		}},
		{"zerostat", func(b *testing.B) {
			m := stats.Float64("bench/histogram_2tags", "", stats.UnitMilliseconds)
			keys := zsKeys(keys2...)
			name := uniq("histogram_2tags")
			defer zsRegister(b, &view.View{Name: name, Measure: m, Aggregation: view.Distribution(histBounds[:]...), TagKeys: keys})()
			ctx := zsCtx(b, keys)
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				stats.Record(ctx, m.M(histValues[i&1023]))
				i++
			}
			d := zsRow(b, name, 2).(*view.DistributionData)
			checkDist(b, "zerostat", name, d.Count, d.CountPerBucket, d.Mean, []int{i})
		}},
		{"opencensus", func(b *testing.B) {
			m := ocstats.Float64("bench/histogram_2tags", "", ocstats.UnitMilliseconds)
			keys := ocKeys(keys2...)
			name := uniq("histogram_2tags")
			defer ocRegister(b, &ocview.View{Name: name, Measure: m, Aggregation: ocview.Distribution(histBounds[:]...), TagKeys: keys})()
			ctx := ocCtx(b, keys)
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				ocstats.Record(ctx, m.M(histValues[i&1023]))
				i++
			}
			d := ocRow(b, name, 2).(*ocview.DistributionData)
			checkDist(b, "opencensus", name, d.Count, d.CountPerBucket, d.Mean, []int{i})
		}},
	}},

	{"8measures_8tags", []impl{
		{"floor", func(b *testing.B) {
			var c [8]atomic.Int64
			b.ReportAllocs()
			for b.Loop() {
				c[0].Add(1)
				c[1].Add(2)
				c[2].Add(3)
				c[3].Add(4)
				c[4].Add(5)
				c[5].Add(6)
				c[6].Add(7)
				c[7].Add(8)
			}
			for j := range c {
				checkCount(b, "floor", fmt.Sprint("counter ", j), c[j].Load(), int64(b.N)*int64(j+1))
			}
		}},
		{"zerostat", func(b *testing.B) {
			keys := zsKeys(keys8...)
			var ms [8]*stats.Int64Measure
			var names [8]string
			for j := range ms {
				ms[j] = stats.Int64(fmt.Sprintf("bench/8measures_8tags/m%d", j), "", stats.UnitDimensionless)
				names[j] = uniq(fmt.Sprintf("8measures_8tags/m%d", j))
				defer zsRegister(b, &view.View{Name: names[j], Measure: ms[j], Aggregation: view.Sum(), TagKeys: keys})()
			}
			ctx := zsCtx(b, keys)
			b.ReportAllocs()
			for b.Loop() {
				stats.Record(ctx, ms[0].M(1), ms[1].M(2), ms[2].M(3), ms[3].M(4), ms[4].M(5), ms[5].M(6), ms[6].M(7), ms[7].M(8))
			}
			for j, name := range names {
				checkSum(b, "zerostat", name, zsRow(b, name, 8).(*view.SumData).Value, float64(b.N)*float64(j+1))
			}
		}},
		{"opencensus", func(b *testing.B) {
			keys := ocKeys(keys8...)
			var ms [8]*ocstats.Int64Measure
			var names [8]string
			for j := range ms {
				ms[j] = ocstats.Int64(fmt.Sprintf("bench/8measures_8tags/m%d", j), "", ocstats.UnitDimensionless)
				names[j] = uniq(fmt.Sprintf("8measures_8tags/m%d", j))
				defer ocRegister(b, &ocview.View{Name: names[j], Measure: ms[j], Aggregation: ocview.Sum(), TagKeys: keys})()
			}
			ctx := ocCtx(b, keys)
			b.ReportAllocs()
			for b.Loop() {
				ocstats.Record(ctx, ms[0].M(1), ms[1].M(2), ms[2].M(3), ms[3].M(4), ms[4].M(5), ms[5].M(6), ms[6].M(7), ms[7].M(8))
			}
			for j, name := range names {
				checkSum(b, "opencensus", name, ocRow(b, name, 8).(*ocview.SumData).Value, float64(b.N)*float64(j+1))
			}
		}},
	}},

	{"recordwithtags_2mut", []impl{
		{"floor", floorCounter},
		{"zerostat", func(b *testing.B) {
			m := stats.Int64("bench/recordwithtags_2mut", "", stats.UnitDimensionless)
			keys := zsKeys(keys4...)
			name := uniq("recordwithtags_2mut")
			defer zsRegister(b, &view.View{Name: name, Measure: m, Aggregation: view.Count(), TagKeys: keys})()
			ctx := zsCtx(b, keys[:2])
			muts := []tag.Mutator{tag.Upsert(keys[2], "eu"), tag.Upsert(keys[3], "gold")}
			b.ReportAllocs()
			for b.Loop() {
				if err := stats.RecordWithTags(ctx, muts, m.M(1)); err != nil {
					b.Fatalf("zerostat RecordWithTags: got error %v; want nil", err)
				}
			}
			checkCount(b, "zerostat", name, zsRow(b, name, 4).(*view.CountData).Value, int64(b.N))
		}},
		{"opencensus", func(b *testing.B) {
			m := ocstats.Int64("bench/recordwithtags_2mut", "", ocstats.UnitDimensionless)
			keys := ocKeys(keys4...)
			name := uniq("recordwithtags_2mut")
			defer ocRegister(b, &ocview.View{Name: name, Measure: m, Aggregation: ocview.Count(), TagKeys: keys})()
			ctx := ocCtx(b, keys[:2])
			muts := []octag.Mutator{octag.Upsert(keys[2], "eu"), octag.Upsert(keys[3], "gold")}
			b.ReportAllocs()
			for b.Loop() {
				if err := ocstats.RecordWithTags(ctx, muts, m.M(1)); err != nil {
					b.Fatalf("opencensus RecordWithTags: got error %v; want nil", err)
				}
			}
			checkCount(b, "opencensus", name, ocRow(b, name, 4).(*ocview.CountData).Value, int64(b.N))
		}},
	}},

	{"counter_2tags_parallel", []impl{
		{"floor", func(b *testing.B) {
			var c atomic.Int64 // one shared counter, as one series is
			b.ReportAllocs()
			counts := parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					c.Add(1)
				}
				return i
			})
			b.StopTimer()
			checkCount(b, "floor", "counter", c.Load(), int64(total(counts)))
		}},
		{"zerostat", func(b *testing.B) {
			m := stats.Int64("bench/counter_2tags_parallel", "", stats.UnitDimensionless)
			keys := zsKeys(keys2...)
			name := uniq("counter_2tags_parallel")
			defer zsRegister(b, &view.View{Name: name, Measure: m, Aggregation: view.Sum(), TagKeys: keys})()
			ctx := zsCtx(b, keys)
			b.ReportAllocs()
			b.ResetTimer()
			counts := parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					stats.Record(ctx, m.M(1))
				}
				return i
			})
			b.StopTimer()
			checkSum(b, "zerostat", name, zsRow(b, name, 2).(*view.SumData).Value, float64(total(counts)))
		}},
		{"opencensus", func(b *testing.B) {
			m := ocstats.Int64("bench/counter_2tags_parallel", "", ocstats.UnitDimensionless)
			keys := ocKeys(keys2...)
			name := uniq("counter_2tags_parallel")
			defer ocRegister(b, &ocview.View{Name: name, Measure: m, Aggregation: ocview.Sum(), TagKeys: keys})()
			ctx := ocCtx(b, keys)
			b.ReportAllocs()
			b.ResetTimer()
			counts := parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					ocstats.Record(ctx, m.M(1))
				}
				return i
			})
			b.StopTimer()
			checkSum(b, "opencensus", name, ocRow(b, name, 2).(*ocview.SumData).Value, float64(total(counts)))
		}},
	}},

	{"histogram_2tags_parallel", []impl{
		{"floor", func(b *testing.B) {
			var h floorHist // shared by all goroutines, as one series is
			b.ReportAllocs()
			counts := parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					h.record(histValues[i&1023])
				}
				return i
			})
			b.StopTimer()
			h.check(b, counts)
		}},
		{"zerostat", func(b *testing.B) {
			m := stats.Float64("bench/histogram_2tags_parallel", "", stats.UnitMilliseconds)
			keys := zsKeys(keys2...)
			name := uniq("histogram_2tags_parallel")
			defer zsRegister(b, &view.View{Name: name, Measure: m, Aggregation: view.Distribution(histBounds[:]...), TagKeys: keys})()
			ctx := zsCtx(b, keys)
			b.ReportAllocs()
			b.ResetTimer()
			counts := parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					stats.Record(ctx, m.M(histValues[i&1023]))
				}
				return i
			})
			b.StopTimer()
			d := zsRow(b, name, 2).(*view.DistributionData)
			checkDist(b, "zerostat", name, d.Count, d.CountPerBucket, d.Mean, counts)
		}},
		{"opencensus", func(b *testing.B) {
			m := ocstats.Float64("bench/histogram_2tags_parallel", "", ocstats.UnitMilliseconds)
			keys := ocKeys(keys2...)
			name := uniq("histogram_2tags_parallel")
			defer ocRegister(b, &ocview.View{Name: name, Measure: m, Aggregation: ocview.Distribution(histBounds[:]...), TagKeys: keys})()
			ctx := ocCtx(b, keys)
			b.ReportAllocs()
			b.ResetTimer()
			counts := parallelLoops(b, func(pb *testing.PB) int {
				i := 0
				for ; pb.Next(); i++ {
					ocstats.Record(ctx, m.M(histValues[i&1023]))
				}
				return i
			})
			b.StopTimer()
			d := ocRow(b, name, 2).(*ocview.DistributionData)
			checkDist(b, "opencensus", name, d.Count, d.CountPerBucket, d.Mean, counts)
		}},
	}},
}

// BenchmarkRecord runs every scenario with every implementation, named
// BenchmarkRecord/scenario=<s>/impl=<i>.
func BenchmarkRecord(b *testing.B) {
	for _, s := range scenarios {
		b.Run("scenario="+s.name, func(b *testing.B) {
			for _, im := range s.impls {
				b.Run("impl="+im.name, im.fn)
			}
		})
	}
}
