package conformance

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"
	octag "go.opencensus.io/tag"

	"github.com/zerostat/zerostat/benchmarks/internal/sdkrows"
	"github.com/zerostat/zerostat/internal/ocmap"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestPastTheCardinalityLimit records 12,500 distinct tag combinations
// into a count and a distribution view with the default limit (10,000
// rows) through both SDKs. OpenCensus keeps every row; zerostat keeps the
// first 10,000 exactly as OpenCensus has them and folds the others into
// its overflow row, whose totals are exactly those of OpenCensus's rows it
// lacks. Every zerostat row, the overflow row included, goes through
// OpenCensus's Prometheus exporter's tag mapping without a panic (issue 12,
// item 8).
func TestPastTheCardinalityLimit(t *testing.T) {
	view.SetDefaultCardinalityLimit(view.DefaultCardinalityLimit)
	const distinct = 12_500
	kRoute, kCode := newKeyPair(t, "route"), newKeyPair(t, "code")
	m := newMeasurePair("conformance/limit", false)
	bounds := []float64{1, 10, 100}
	zsKeys := []tag.Key{kRoute.zs, kCode.zs}
	pairs := []struct {
		name string
		zs   *view.Aggregation
		oc   *ocview.Aggregation
	}{
		{"conformance/limit_count", view.Count(), ocview.Count()},
		{"conformance/limit_dist", view.Distribution(bounds...), ocview.Distribution(bounds...)},
	}
	for _, p := range pairs {
		zv := &view.View{Name: p.name, Measure: m.zsMeasure(), Aggregation: p.zs, TagKeys: zsKeys}
		ov := &ocview.View{Name: p.name, Measure: m.ocMeasure(), Aggregation: p.oc, TagKeys: []octag.Key{kRoute.oc, kCode.oc}}
		if err := view.Register(zv); err != nil {
			t.Fatal(err)
		}
		if err := ocview.Register(ov); err != nil {
			t.Fatal(err)
		}
		defer view.Unregister(zv)
		defer ocview.Unregister(ov)
	}
	for i := range distinct {
		route, code := fmt.Sprintf("/r%05d", i), []string{"200", "404", "500"}[i%3]
		zctx, err := tag.New(context.Background(), tag.Upsert(kRoute.zs, route), tag.Upsert(kCode.zs, code))
		if err != nil {
			t.Fatal(err)
		}
		octx, err := octag.New(context.Background(), octag.Upsert(kRoute.oc, route), octag.Upsert(kCode.oc, code))
		if err != nil {
			t.Fatal(err)
		}
		for j := range 1 + i%3 {
			zm, om := m.measurement(float64((i*7+j)%150) + 0.5)
			stats.Record(zctx, zm)
			ocstats.Record(octx, om)
		}
	}

	for _, p := range pairs {
		zrows, err := view.RetrieveData(p.name)
		if err != nil {
			t.Fatal(err)
		}
		orows, err := ocview.RetrieveData(p.name)
		if err != nil {
			t.Fatal(err)
		}
		if len(orows) != distinct || len(zrows) != view.DefaultCardinalityLimit+1 {
			t.Fatalf("%s: OpenCensus %d rows, zerostat %d; want %d and %d (the limit and the overflow row)",
				p.name, len(orows), len(zrows), distinct, view.DefaultCardinalityLimit+1)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%s: OpenCensus's Prometheus tag mapping panicked on a zerostat row: %v", p.name, r)
				}
			}()
			for _, r := range zrows {
				vals := ocmap.TagValues(r.Tags, zsKeys)
				if r.IsOverflow() != slices.Equal(vals, []string{view.OverflowValue, view.OverflowValue}) {
					t.Fatalf("%s: row %v maps to %q", p.name, r, vals)
				}
			}
		}()
		zs, err := sdkrows.FromZerostat(zrows)
		if err != nil {
			t.Fatal(err)
		}
		oc, err := sdkrows.FromOpenCensus(orows)
		if err != nil {
			t.Fatal(err)
		}
		ocByKey := map[string]sdkrows.Row{}
		for _, r := range oc {
			ocByKey[r.Key] = r
		}
		overflow := zs[len(zs)-1]
		for _, z := range zs[:len(zs)-1] {
			o, ok := ocByKey[z.Key]
			if !ok {
				t.Fatalf("%s: zerostat row %s is not an OpenCensus row", p.name, z.Key)
			}
			if z.Count != o.Count || !slices.Equal(z.Buckets, o.Buckets) || z.Min != o.Min || z.Max != o.Max ||
				!sdkrows.Near(z.Mean, o.Mean) || !sdkrows.Near(z.SSD, o.SSD) {
				t.Fatalf("%s: row %s: zerostat %v; OpenCensus %v", p.name, z.Key, z, o)
			}
			delete(ocByKey, z.Key)
		}
		// The overflow row holds exactly what OpenCensus has in the rows
		// zerostat lacks.
		var count int64
		var sum float64
		buckets := make([]int64, len(bounds)+1)
		for _, o := range ocByKey {
			count += o.Count
			sum += o.Sum
			for i, c := range o.Buckets {
				buckets[i] += c
			}
		}
		if len(ocByKey) != distinct-view.DefaultCardinalityLimit || overflow.Count != count {
			t.Errorf("%s: overflow row count %d over %d folded rows; want %d over %d", p.name, overflow.Count,
				distinct-view.DefaultCardinalityLimit, count, len(ocByKey))
		}
		if overflow.Agg == "Distribution" && (!slices.Equal(overflow.Buckets, buckets) || math.Abs(overflow.Sum-sum) > 1e-9*sum) {
			t.Errorf("%s: overflow row buckets %v sum %v; want %v and %v", p.name, overflow.Buckets, overflow.Sum, buckets, sum)
		}
	}
}
