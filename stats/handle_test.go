package stats_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// A handle produces the rows Record produces with a context of the same
// tags: recording the same values both ways doubles every row exactly.
func TestHandleSameRowsAsRecord(t *testing.T) {
	bounds := []float64{1, 10, 100}
	mi := stats.Int64("handle/rows/int", "", stats.UnitDimensionless)
	mf := stats.Float64("handle/rows/float", "", stats.UnitMilliseconds)
	keys := []tag.Key{keyA, keyB}
	vs := []*view.View{
		{Name: "handle/rows/count", Measure: mi, Aggregation: view.Count(), TagKeys: keys},
		{Name: "handle/rows/sum", Measure: mi, Aggregation: view.Sum(), TagKeys: []tag.Key{keyA}},
		{Name: "handle/rows/dist", Measure: mf, Aggregation: view.Distribution(bounds...), TagKeys: keys},
		{Name: "handle/rows/last", Measure: mf, Aggregation: view.LastValue(), TagKeys: keys},
		{Name: "handle/rows/notags", Measure: mf, Aggregation: view.Sum()},
	}
	register(t, vs...)
	ctx := ctxWith(t, tag.Upsert(keyA, "a"), tag.Upsert(keyB, "b"), tag.Upsert(keyC, "ignored"))
	hi := mi.Bind(tag.FromContext(ctx))
	hf := mf.Bind(tag.FromContext(ctx))
	record := func(viaHandle bool) {
		for i := range 50 {
			if viaHandle {
				hi.Record(int64(i))
				hf.Record(float64(i) * 3)
			} else {
				stats.Record(ctx, mi.M(int64(i)), mf.M(float64(i)*3))
			}
		}
	}
	record(false)
	once := map[string][]*view.Row{}
	for _, v := range vs {
		once[v.Name] = rows(t, v.Name)
	}
	// A second view set of the same shape, recorded through handles only.
	for _, v := range vs {
		view.Unregister(v)
	}
	register(t, vs...)
	record(true)
	for _, v := range vs {
		got, want := rows(t, v.Name), once[v.Name]
		if len(got) != 1 || len(want) != 1 {
			t.Fatalf("%s: got %d rows via handles, %d via Record; want 1 each", v.Name, len(got), len(want))
		}
		if !reflect.DeepEqual(got[0].Tags, want[0].Tags) || !reflect.DeepEqual(noStart(got[0].Data), noStart(want[0].Data)) {
			t.Errorf("%s: via handles %v %v; via Record %v %v", v.Name, got[0].Tags, got[0].Data, want[0].Tags, want[0].Data)
		}
	}
}

// A handle keeps recording correctly across Unregister and Register of
// its view: records while unregistered are dropped (as Record drops
// them), later ones land in the new view's row.
func TestHandleAcrossReregister(t *testing.T) {
	m := stats.Int64("handle/rereg", "", stats.UnitDimensionless)
	h := m.Bind(tag.FromContext(ctxWith(t, tag.Upsert(keyA, "x"))))
	h.Record(1) // no view yet: dropped
	v := &view.View{Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyA}}
	register(t, v)
	h.Record(1)
	view.Unregister(v)
	h.Record(1) // dropped
	register(t, v)
	h.Record(1)
	h.Record(1)
	rs := rows(t, "handle/rereg")
	if len(rs) != 1 || rs[0].Data.(*view.CountData).Value != 2 {
		t.Fatalf("got %v; want one row counting the 2 records since Register", rs)
	}
	if got := rs[0].Tags; len(got) != 1 || got[0].Key != keyA || got[0].Value != "x" {
		t.Errorf("got tags %v; want a=x", got)
	}
}

// A nil map binds no tags: the row of records without tags.
func TestHandleNilMap(t *testing.T) {
	m := stats.Float64("handle/nil", "", stats.UnitDimensionless)
	register(t, &view.View{Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{keyA}})
	m.Bind(nil).Record(2)
	stats.Record(context.Background(), m.M(3))
	rs := rows(t, "handle/nil")
	if len(rs) != 1 || len(rs[0].Tags) != 0 || rs[0].Data.(*view.SumData).Value != 5 {
		t.Errorf("got %v; want one untagged row summing 5", rs)
	}
}

// Goroutines released together record through one handle (and one through
// Record with the same tags): the row counts every record exactly.
func TestHandleConcurrentSafe(t *testing.T) {
	m := stats.Int64("handle/concurrent", "", stats.UnitDimensionless)
	register(t, &view.View{Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{keyA, keyB}})
	ctx := ctxWith(t, tag.Upsert(keyA, "a"), tag.Upsert(keyB, "b"))
	h := m.Bind(tag.FromContext(ctx))
	const G, N = 4, 20000
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range N {
				if g == 0 {
					stats.Record(ctx, m.M(2))
				} else {
					h.Record(2)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	rs := rows(t, "handle/concurrent")
	if len(rs) != 1 || rs[0].Data.(*view.SumData).Value != 2*G*N {
		t.Fatalf("got %v; want one row summing %d", rs, 2*G*N)
	}
}

// Goroutines record through one distribution handle while another reads
// the view: the cell's lock (taken with a compare-and-swap, released with
// a plain store on amd64 outside -race, see internal/core/release_amd64.go)
// loses no update. Every count, bucket, the sum and the extremes are exact.
func TestHandleDistributionConcurrentSafe(t *testing.T) {
	m := stats.Float64("handle/dist/concurrent", "", stats.UnitMilliseconds)
	register(t, &view.View{Measure: m, Aggregation: view.Distribution(1, 2, 4, 8), TagKeys: []tag.Key{keyA}})
	ctx := ctxWith(t, tag.Upsert(keyA, "a"))
	h := m.Bind(tag.FromContext(ctx))
	const G, N = 4, 20000
	start := make(chan struct{})
	done := make(chan struct{})
	var wg, reader sync.WaitGroup
	reader.Add(1)
	go func() { // a reader takes the cells' locks between records
		defer reader.Done()
		<-start
		for {
			select {
			case <-done:
				return
			default:
				_, _ = view.RetrieveData("handle/dist/concurrent")
			}
		}
	}()
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range N {
				v := float64((i + g) % 10) // 0..9: every bucket
				if g == 0 {
					stats.Record(ctx, m.M(v))
				} else {
					h.Record(v)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(done)
	reader.Wait()
	rs := rows(t, "handle/dist/concurrent")
	if len(rs) != 1 {
		t.Fatalf("got %d rows; want 1", len(rs))
	}
	d := rs[0].Data.(*view.DistributionData)
	// Per goroutine, N/10 of each value 0..9.
	want := []int64{1, 1, 2, 4, 2} // values per bucket out of 0..9: [0,1) [1,2) [2,4) [4,8) [8,inf)
	for i := range want {
		want[i] *= G * N / 10
	}
	if d.Count != G*N || !reflect.DeepEqual(d.CountPerBucket, want) {
		t.Errorf("count %d, buckets %v; want %d, %v", d.Count, d.CountPerBucket, G*N, want)
	}
	if sum := d.Mean * float64(d.Count); math.Abs(sum-45*G*N/10) > 1e-6*sum || d.Min != 0 || d.Max != 9 {
		t.Errorf("mean %v (sum %v), min %v, max %v; want sum %v, 0, 9", d.Mean, sum, d.Min, d.Max, 45*G*N/10)
	}
}

// expNext steps v through 1e-6..1e12 and back, for records into an
// exponential distribution that downscale it.
func expNext(v *float64) float64 {
	if *v = *v*3 + 1e-6; *v > 1e12 {
		*v = 1e-6
	}
	return *v
}

// allocRuns numbers the runs of TestHandleAllocs.
var allocRuns atomic.Int64

// TestHandleAllocs: the handles' Record and tag.New (up to 8 mutators,
// a tag set seen before or not) stay within their allocation budgets.
func TestHandleAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	ctx2 := ctxWith(t, tag.Upsert(keyA, "a"), tag.Upsert(keyB, "b"))
	sum := stats.Int64("handle/allocs/sum", "", stats.UnitDimensionless)
	register(t, &view.View{Measure: sum, Aggregation: view.Sum(), TagKeys: []tag.Key{keyA, keyB}})
	dist := stats.Float64("handle/allocs/dist", "", stats.UnitMilliseconds)
	register(t, &view.View{Measure: dist, Aggregation: view.Distribution(1, 2, 5, 10), TagKeys: []tag.Key{keyA}})
	hs, hd := sum.Bind(tag.FromContext(ctx2)), dist.Bind(tag.FromContext(ctx2))
	exp := stats.Float64("handle/allocs/exp", "", stats.UnitMilliseconds)
	register(t, &view.View{Measure: exp, Aggregation: view.ExponentialDistribution(0, 0), TagKeys: []tag.Key{keyA, keyB}})
	he := exp.Bind(tag.FromContext(ctx2))
	muts2 := []tag.Mutator{tag.Upsert(keyA, "a"), tag.Upsert(keyB, "b")}
	noView := stats.Int64("handle/allocs/noview", "", stats.UnitDimensionless).Bind(tag.FromContext(ctx2))

	var keys8 []tag.Key
	for i := range 8 {
		keys8 = append(keys8, tag.MustNewKey(fmt.Sprintf("k%d", i)))
	}
	muts8 := func(val string) []tag.Mutator {
		ms := make([]tag.Mutator, 8)
		for i, k := range keys8 {
			ms[i] = tag.Upsert(k, val)
		}
		return ms
	}
	seen := muts8("seen")
	// Unseen tag sets: a fresh value per call and per run of the test
	// (-count), built before measuring.
	run := allocRuns.Add(1)
	fresh := make([][]tag.Mutator, 1100)
	for i := range fresh {
		fresh[i] = muts8(fmt.Sprintf("fresh%d-%d", run, i))
	}
	next := 0
	var v float64
	for _, tc := range []struct {
		name string
		max  float64
		fn   func()
	}{
		{"Int64Handle.Record", 0, func() { hs.Record(1) }},
		{"Float64Handle.Record distribution", 0, func() { v += 3; hd.Record(v) }},
		{"handle without views", 0, func() { noView.Record(1) }},
		// The exponential distribution on every path (a downscale
		// included: the values span 2^-20..2^40).
		{"Float64Handle.Record exponential", 0, func() { he.Record(expNext(&v)) }},
		{"Record exponential, kept context", 0, func() { stats.Record(ctx2, exp.M(expNext(&v))) }},
		{"RecordWithTags exponential", 0, func() {
			_ = stats.RecordWithTags(context.Background(), muts2, exp.M(expNext(&v)))
		}},
		{"tag.New 8 mutators, seen set", 1, func() { _, _ = tag.New(context.Background(), seen...) }},
		{"tag.New 8 mutators, new set", 1, func() { _, _ = tag.New(ctx2, fresh[next%len(fresh)]...); next++ }},
		{"tag.New 2 mutators + Record", 1, func() {
			ctx, _ := tag.New(context.Background(), tag.Upsert(keyA, "a"), tag.Upsert(keyB, "b"))
			stats.Record(ctx, sum.M(1))
		}},
	} {
		tc.fn()
		tc.fn() // warm up: a tag set is cached on its second sight
		if got := testing.AllocsPerRun(1000, tc.fn); got > tc.max {
			t.Errorf("%s: got %v allocs/op; want at most %v", tc.name, got, tc.max)
		}
	}
}

// noStart returns a copy of an aggregation's data with its start time (the
// view's registration) zeroed.
func noStart(d view.AggregationData) any {
	c := reflect.New(reflect.TypeOf(d).Elem())
	c.Elem().Set(reflect.ValueOf(d).Elem())
	if f := c.Elem().FieldByName("Start"); f.IsValid() {
		f.Set(reflect.Zero(f.Type()))
	}
	return c.Interface()
}
