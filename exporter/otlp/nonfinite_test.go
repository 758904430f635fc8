package otlp

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// TestEncodeDeltaNonFinite: with Delta temporality, each histogram data
// point describes its interval's samples only: the sum is +Inf or NaN in
// the interval that recorded a +Inf or a NaN, and the exact finite sum in
// every later interval of finite samples (before: NaN in every interval
// after the first +Inf); counts and bucket counts exact. A cumulative
// encoder of the same view, and RetrieveData, keep the running sum (+Inf,
// then NaN). A -Inf makes the series' minimum negative, so from then on
// no sum is sent (OTLP's rule for negative values).
func TestEncodeDeltaNonFinite(t *testing.T) {
	m := stats.Float64("otlpnf/latency", "Latency", stats.UnitMilliseconds)
	v := &view.View{Name: "otlpnf/dist", Measure: m, Aggregation: view.Distribution(2.5, 10)}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	enc, _ := NewEncoder(Delta, exporter.Resource{})
	cum, _ := NewEncoder(Cumulative, exporter.Resource{})
	now := time.Now()
	inf, nan := math.Inf(1), math.NaN()
	for i, c := range []struct {
		vs          []float64
		sum, cumSum float64 // NaN: NaN; -1: no sum sent
		buckets     []uint64
	}{
		{[]float64{1, inf}, inf, inf, []uint64{1, 0, 1}},
		{[]float64{2, 3}, 5, inf, []uint64{1, 1, 0}},
		{[]float64{nan}, nan, nan, []uint64{0, 0, 1}},
		{[]float64{4}, 4, nan, []uint64{0, 1, 0}},
		{[]float64{inf}, inf, nan, []uint64{0, 0, 1}},
		{[]float64{5}, 5, nan, []uint64{0, 1, 0}},
		{[]float64{math.Inf(-1), inf}, -1, -1, []uint64{1, 0, 1}},
		{[]float64{6}, -1, -1, []uint64{0, 1, 0}},
	} {
		for _, x := range c.vs {
			stats.Record(context.Background(), m.M(x))
		}
		now = now.Add(time.Second)
		p := decodeRequest(t, enc.Encode(now)).metrics["otlpnf/dist"].points[""]
		if p == nil {
			t.Fatalf("interval %d: no point", i+1)
		}
		if p.count != uint64(len(c.vs)) || !slices.Equal(p.buckets, c.buckets) || !sumIs(p.sum, c.sum) {
			t.Errorf("interval %d %v: count %d, buckets %v, sum %v; want %d, %v, %v", i+1, c.vs, p.count, p.buckets, show(p.sum), len(c.vs), c.buckets, c.sum)
		}
		cp := decodeRequest(t, cum.Encode(now)).metrics["otlpnf/dist"].points[""]
		if !sumIs(cp.sum, c.cumSum) {
			t.Errorf("interval %d: cumulative sum %v; want %v", i+1, show(cp.sum), c.cumSum)
		}
		rs, err := view.RetrieveData("otlpnf/dist")
		if err != nil {
			t.Fatal(err)
		}
		want := c.cumSum
		if want == -1 {
			want = nan
		}
		if got := rs[0].Data.(*view.DistributionData).Sum(); !sumIs(&got, want) {
			t.Errorf("interval %d: RetrieveData sum %v; want %v", i+1, got, want)
		}
	}
}

// sumIs reports whether a point's sum is want (NaN matching NaN; -1: no
// sum).
func sumIs(sum *float64, want float64) bool {
	if want == -1 {
		return sum == nil
	}
	return sum != nil && (*sum == want || math.IsNaN(*sum) && math.IsNaN(want))
}

func show(p *float64) any {
	if p == nil {
		return "none"
	}
	return *p
}
