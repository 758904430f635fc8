package core

import "testing"

// TestRecordDistN checks a weighted record against the same number of
// single records.
func TestRecordDistN(t *testing.T) {
	bounds := []float64{1, 2, 5}
	one := NewAggregator(KindDistribution, nil, bounds, 0)
	many := NewAggregator(KindDistribution, nil, bounds, 0)
	for _, r := range []struct {
		v float64
		n uint64
	}{{0.5, 3}, {1.5, 1}, {3, 1000}, {7, 2}, {4, 0}} {
		many.RecordDistN(nil, r.v, r.n)
		for i := uint64(0); i < r.n; i++ {
			one.RecordTags(nil, r.v)
		}
	}
	b1, b2 := make([]int64, 4), make([]int64, 4)
	s1 := one.AppendSeries(nil)[0].ReadDist(b1)
	s2 := many.AppendSeries(nil)[0].ReadDist(b2)
	if s1.Count != s2.Count || s1.Sum != s2.Sum || s1.Min != s2.Min || s1.Max != s2.Max {
		t.Errorf("weighted %+v; one by one %+v", s2, s1)
	}
	if d := s1.Mean - s2.Mean; d > 1e-9 || d < -1e-9 {
		t.Errorf("mean: weighted %v; one by one %v", s2.Mean, s1.Mean)
	}
	if d := (s1.M2 - s2.M2) / s1.M2; d > 1e-9 || d < -1e-9 {
		t.Errorf("M2: weighted %v; one by one %v", s2.M2, s1.M2)
	}
	for i := range b1 {
		if b1[i] != b2[i] {
			t.Errorf("buckets: weighted %v; one by one %v", b2, b1)
			break
		}
	}
}
