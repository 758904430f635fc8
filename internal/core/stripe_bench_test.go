package core

import "testing"

// BenchmarkBoundStripedSingle: a handle's record from one goroutine,
// attached to its own cell, and given up for its series' stripes (as
// recorders on two cores leave it): the per-core cost of the striped
// path, which bounds the handle's 2-core scaling (ideal parallel ns/op:
// half of it).
func BenchmarkBoundStripedSingle(b *testing.B) {
	for _, striped := range []bool{false, true} {
		name := "attached"
		if striped {
			name = "striped"
		}
		b.Run(name, func(b *testing.B) {
			m := &Measure{Name: "bench/striped"}
			a := NewAggregator(KindCount, []string{"k"}, nil, 0)
			m.Subscribe(a)
			bd := m.Bind(tagsOf("k", "x"))
			bd.RecordInt(1)
			if striped {
				bd.st.Load().ctl.Store(ownDone)
				a.AppendSeries(nil)[0].inflate()
			}
			for b.Loop() {
				bd.RecordInt(1)
			}
		})
	}
}

func BenchmarkBoundParallelState(b *testing.B) {
	m := &Measure{Name: "bench/striped"}
	a := NewAggregator(KindCount, []string{"k"}, nil, 0)
	m.Subscribe(a)
	bd := m.Bind(tagsOf("k", "x"))
	bd.RecordInt(1)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bd.RecordInt(1)
		}
	})
	s := a.AppendSeries(nil)[0]
	b.Logf("N %d course %d striped %v", b.N, bd.st.Load().course(), s.Striped())
}
