package stats_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func TestScratch(t *testing.T) {}

func BenchmarkScratchCounter2Tags(b *testing.B) {
	m := stats.Int64("bench/c2", "", stats.UnitDimensionless)
	k1, k2 := tag.MustNewKey("k1"), tag.MustNewKey("k2")
	v := &view.View{Name: "bench/c2", Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{k1, k2}}
	if err := view.Register(v); err != nil {
		b.Fatal(err)
	}
	defer view.Unregister(v)
	ctx, _ := tag.New(context.Background(), tag.Upsert(k1, "a"), tag.Upsert(k2, "b"))
	b.ReportAllocs()
	for b.Loop() {
		stats.Record(ctx, m.M(1))
	}
}

func BenchmarkScratchFloor(b *testing.B) {
	var x atomic.Int64
	b.ReportAllocs()
	for b.Loop() {
		x.Add(1)
	}
}

func BenchmarkScratchCounter2TagsParallel(b *testing.B) {
	m := stats.Int64("bench/c2p", "", stats.UnitDimensionless)
	k1, k2 := tag.MustNewKey("k1"), tag.MustNewKey("k2")
	v := &view.View{Name: "bench/c2p", Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{k1, k2}}
	if err := view.Register(v); err != nil {
		b.Fatal(err)
	}
	defer view.Unregister(v)
	ctx, _ := tag.New(context.Background(), tag.Upsert(k1, "a"), tag.Upsert(k2, "b"))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			stats.Record(ctx, m.M(1))
		}
	})
}

func BenchmarkScratchHist(b *testing.B) {
	m := stats.Float64("bench/h", "", stats.UnitDimensionless)
	k1, k2 := tag.MustNewKey("k1"), tag.MustNewKey("k2")
	v := &view.View{Name: "bench/h", Measure: m, Aggregation: view.Distribution(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384), TagKeys: []tag.Key{k1, k2}}
	if err := view.Register(v); err != nil {
		b.Fatal(err)
	}
	defer view.Unregister(v)
	ctx, _ := tag.New(context.Background(), tag.Upsert(k1, "a"), tag.Upsert(k2, "b"))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		stats.Record(ctx, m.M(float64(i&1023)))
	}
}
func BenchmarkScratchRecordWithTags(b *testing.B) {
	m := stats.Int64("bench/rwt", "", stats.UnitDimensionless)
	k1, k2, k3, k4 := tag.MustNewKey("k1"), tag.MustNewKey("k2"), tag.MustNewKey("k3"), tag.MustNewKey("k4")
	v := &view.View{Name: "bench/rwt", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{k1, k2, k3, k4}}
	if err := view.Register(v); err != nil {
		b.Fatal(err)
	}
	defer view.Unregister(v)
	ctx, _ := tag.New(context.Background(), tag.Upsert(k1, "a"), tag.Upsert(k2, "b"))
	muts := []tag.Mutator{tag.Upsert(k3, "c"), tag.Upsert(k4, "d")}
	b.ReportAllocs()
	for b.Loop() {
		stats.RecordWithTags(ctx, muts, m.M(1))
	}
}
