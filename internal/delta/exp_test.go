package delta

import (
	"slices"
	"testing"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/race"
)

// TestDeltaExponential: a tracker reads each interval at its own scale,
// says nothing of an empty one, evicts an idle series, and reads into
// the same Values without allocating; a cumulative read is the whole.
func TestDeltaExponential(t *testing.T) {
	a, s := series(t, core.KindExponential, nil, 1000, 1e6) // a wide first interval
	tr := NewTracker(2)
	var v Values
	read := func() bool {
		tr.Begin()
		st := tr.View(a)
		ok := Read(core.KindExponential, s, st, nil, &v)
		st.Done()
		tr.End()
		return ok
	}
	if !read() || v.Exp.Count != 2 || !v.FirstRead || v.Exp.Scale >= 5 {
		t.Errorf("first interval %+v", v.Exp)
	}
	a.RecordTags(nil, 1.5)
	a.RecordTags(nil, 1.5000001)
	// The second interval's own values: two close values, scale 20.
	if !read() || v.Exp.Count != 2 || v.FirstRead || v.Exp.Scale != 20 || v.Exp.Min != 1.5 || v.Exp.Max != 1.5000001 {
		t.Errorf("second interval %+v", v.Exp)
	}
	var c Values
	if !Read(core.KindExponential, s, nil, nil, &c) || c.Exp.Count != 4 || c.Exp.Min != 1.5 || c.Exp.Max != 1e6 {
		t.Errorf("cumulative %+v", c.Exp)
	}
	if !race.Enabled {
		a.RecordTags(nil, 3)
		read() // grows Counts for the next reads
		if n := testing.AllocsPerRun(100, func() { a.RecordTags(nil, 3); read() }); n != 0 {
			t.Errorf("%v allocations per delta read", n)
		}
	}
	if read() || v.Exp.Count != 0 {
		t.Errorf("an empty interval said %+v", v.Exp)
	}
	read() // second unchanged read: evicted
	read()
	if a.Len() != 0 || !slices.Equal(a.AppendSeries(nil), nil) {
		t.Errorf("idle series not freed: %d", a.Len())
	}
}
