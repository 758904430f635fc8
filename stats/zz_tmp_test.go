package stats_test

import (
	"testing"

	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func BenchmarkTmpSum2Tags_HandleParallel(b *testing.B) {
	ks := keys(2)
	bv := newBenchView(b, view.Sum(), ks...)
	h := bv.m.Bind(tag.FromContext(benchCtx(b, ks)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.Record(1)
		}
	})
	bv.expect(b, float64(b.N))
}
