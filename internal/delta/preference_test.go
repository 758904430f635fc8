package delta

import (
	"strings"
	"testing"

	"github.com/zerostat/zerostat/internal/core"
)

func TestNewKinds(t *testing.T) {
	kinds := []core.Kind{core.KindCount, core.KindSum, core.KindDistribution, core.KindLastValue}
	for _, tc := range []struct {
		all  bool
		p    Preference
		want [4]bool // Count, Sum, Distribution, LastValue
		any  bool
	}{
		{false, PreferCumulative, [4]bool{}, false},
		{true, PreferCumulative, [4]bool{true, true, true, true}, true},
		{false, PreferDelta, [4]bool{true, true, true, false}, true},
		{false, PreferLowMemory, [4]bool{true, true, true, false}, true},
	} {
		d, err := NewKinds(tc.all, tc.p, "x: ")
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range kinds {
			if d.Has(k) != tc.want[i] {
				t.Errorf("all=%v %v: Has(%d) = %v; want %v", tc.all, tc.p, k, d.Has(k), tc.want[i])
			}
		}
		if d.Any() != tc.any || d.Has(0) || d.Has(99) {
			t.Errorf("all=%v %v: Any %v; want %v (and no kind 0 or 99)", tc.all, tc.p, d.Any(), tc.any)
		}
	}
	for _, tc := range []struct {
		all bool
		p   Preference
	}{{true, PreferDelta}, {false, 7}} {
		if _, err := NewKinds(tc.all, tc.p, "x: "); err == nil || !strings.HasPrefix(err.Error(), "x: ") {
			t.Errorf("NewKinds(%v, %d): got %v; want an error", tc.all, tc.p, err)
		}
	}
	for _, s := range []string{"", "Delta2", "cumulative "} {
		if _, err := ParsePreference(s); err == nil {
			t.Errorf("ParsePreference(%q): no error", s)
		}
	}
}

// TestReadsObservedSums: an observed sum (an asynchronous counter, as
// metric.NewCounter and the otel module's observable counters make) is
// read as deltas under delta, cumulatively under lowmemory (the
// specification's table), and as deltas under lowmemory by an encoder
// with one temporality per payload (OneTemporality: msgpack).
func TestReadsObservedSums(t *testing.T) {
	sum := &core.View{Agg: core.NewAggregator(core.KindSum, nil, nil, 0)}
	observed := &core.View{Agg: sum.Agg, Observed: true}
	for _, tc := range []struct {
		p                 Preference
		one               bool
		wantSum, wantObsd bool
	}{
		{PreferCumulative, false, false, false},
		{PreferDelta, false, true, true},
		{PreferLowMemory, false, true, false},
		{PreferLowMemory, true, true, true},
	} {
		k, err := NewKinds(false, tc.p, "")
		if err != nil {
			t.Fatal(err)
		}
		if tc.one {
			k = k.OneTemporality()
		}
		if k.Reads(sum) != tc.wantSum || k.Reads(observed) != tc.wantObsd {
			t.Errorf("%v (one temporality %v): a sum read as deltas %v, an observed sum %v; want %v, %v",
				tc.p, tc.one, k.Reads(sum), k.Reads(observed), tc.wantSum, tc.wantObsd)
		}
	}
}
