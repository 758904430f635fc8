package migration_test

import (
	"fmt"
	"slices"
	"testing"

	ocview "go.opencensus.io/stats/view"

	"github.com/zerostat/zerostat/benchmarks/internal/sdkrows"
	"github.com/zerostat/zerostat/view"
)

// This file holds the comparator.

// The row model is shared with the conformance tests (internal/sdkrows).

const (
	ocMaxInit = sdkrows.OCMaxInit // a deliberate difference, in the doc
	tolerance = sdkrows.Tolerance
)

type row = sdkrows.Row

func normZS(rows []*view.Row) []row {
	rs, err := sdkrows.FromZerostat(rows)
	if err != nil {
		panic(err)
	}
	return rs
}

func normOC(rows []*ocview.Row) []row {
	rs, err := sdkrows.FromOpenCensus(rows)
	if err != nil {
		panic(err)
	}
	return rs
}

// differences counts the documented deliberate differences met while
// comparing, so a test can check its workload exercises them.
type differences struct {
	maxInit    int // OpenCensus Max = 5e-324 for a row of values <= 0
	sumInexact int // DistributionData.Sum() not bit-equal across SDKs
}

// compareRows compares the rows of one view: OpenCensus's (any order) with
// zerostat's. Counts and bucket counts exactly, Min exactly, Max exactly but
// for OpenCensus's initial Max, the rest to tolerance. countsOnly compares
// only the tag sets and counts (for data measured with a real clock).
func compareRows(t *testing.T, name string, oc, zs []row, countsOnly bool, diffs *differences) {
	t.Helper()
	for _, p := range rowProblems(name, oc, zs, countsOnly, diffs) {
		t.Error(p)
	}
}

// rowProblems returns the disagreements compareRows reports.
func rowProblems(name string, oc, zs []row, countsOnly bool, diffs *differences) []string {
	var out []string
	byKey := make(map[string]row, len(oc))
	for _, r := range oc {
		if _, dup := byKey[r.Key]; dup {
			out = append(out, fmt.Sprintf("view %s: OpenCensus has two rows %s", name, r.Key))
		}
		byKey[r.Key] = r
	}
	seen := make(map[string]bool, len(zs))
	for _, z := range zs {
		if seen[z.Key] {
			out = append(out, fmt.Sprintf("view %s: zerostat has two rows %s", name, z.Key))
		}
		seen[z.Key] = true
		o, ok := byKey[z.Key]
		if !ok {
			out = append(out, fmt.Sprintf("view %s: row only in zerostat: %v", name, z))
			continue
		}
		if msg := compareRow(o, z, countsOnly, diffs); msg != "" {
			out = append(out, fmt.Sprintf("view %s, row %s: %s\n  opencensus: %v\n  zerostat:   %v", name, z.Key, msg, o, z))
		}
	}
	for _, o := range oc {
		if !seen[o.Key] {
			out = append(out, fmt.Sprintf("view %s: row only in OpenCensus: %v", name, o))
		}
	}
	return out
}

func compareRow(o, z row, countsOnly bool, diffs *differences) string {
	if o.Agg != z.Agg {
		return fmt.Sprintf("aggregation %s vs %s", o.Agg, z.Agg)
	}
	if o.Count != z.Count {
		return fmt.Sprintf("count %d vs %d", o.Count, z.Count)
	}
	if countsOnly {
		return ""
	}
	switch o.Agg {
	case "Sum":
		if !sdkrows.Near(o.Value, z.Value) {
			return fmt.Sprintf("sum %v vs %v", o.Value, z.Value)
		}
	case "LastValue":
		if o.Value != z.Value {
			return fmt.Sprintf("last value %v vs %v", o.Value, z.Value)
		}
	case "Distribution":
		if !slices.Equal(o.Buckets, z.Buckets) {
			return fmt.Sprintf("buckets %v vs %v", o.Buckets, z.Buckets)
		}
		if o.Min != z.Min {
			return fmt.Sprintf("min %v vs %v", o.Min, z.Min)
		}
		switch {
		case o.Max == z.Max:
		case o.Max == ocMaxInit && z.Max <= 0:
			// Deliberate difference: zerostat reports the true maximum.
			// It must be consistent with the other statistics.
			if z.Max < z.Min || z.Max < z.Mean-tolerance || (z.SSD == 0 && z.Max != z.Min) {
				return fmt.Sprintf("zerostat max %v inconsistent with min %v, mean %v, ssd %v", z.Max, z.Min, z.Mean, z.SSD)
			}
			diffs.maxInit++
		default:
			return fmt.Sprintf("max %v vs %v", o.Max, z.Max)
		}
		if !sdkrows.Near(o.Mean, z.Mean) {
			return fmt.Sprintf("mean %v vs %v", o.Mean, z.Mean)
		}
		if !sdkrows.Near(o.SSD, z.SSD) {
			return fmt.Sprintf("sum of squared deviations %v vs %v", o.SSD, z.SSD)
		}
		// Deliberate difference: OpenCensus's Sum() is Mean × Count,
		// zerostat's the running sum.
		if !sdkrows.Near(o.Sum, z.Sum) {
			return fmt.Sprintf("Sum() %v vs %v", o.Sum, z.Sum)
		}
		if o.Sum != z.Sum {
			diffs.sumInexact++
		}
	}
	return ""
}

// checkSorted checks zerostat's rows come sorted by their values of the
// view's keys (sorted by name), key by key, a missing key first.
func checkSorted(t *testing.T, name string, keys []string, zs []row) {
	t.Helper()
	vals := func(r row) []string { return r.Values(keys) }
	for i := 1; i < len(zs); i++ {
		if slices.Compare(vals(zs[i-1]), vals(zs[i])) >= 0 {
			t.Errorf("view %s: zerostat rows %d and %d out of order: %s, %s", name, i-1, i, zs[i-1].Key, zs[i].Key)
		}
	}
}

// sameRows reports whether two row sets of one SDK are identical, in any
// order.
func sameRows(a, b []row) bool {
	key := func(r row) string { return r.String() }
	as, bs := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		as[i] = key(a[i])
	}
	for i := range b {
		bs[i] = key(b[i])
	}
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(as, bs)
}

// TestComparator checks the comparator reports each kind of disagreement,
// and accepts the documented differences only where the doc allows them.
func TestComparator(t *testing.T) {
	dist := func(key string, min, max, mean, ssd, sum float64, count int64, buckets ...int64) row {
		return row{Key: key, Agg: "Distribution", Count: count, Min: min, Max: max, Mean: mean, SSD: ssd, Sum: sum, Buckets: buckets}
	}
	base := []row{
		{Key: `{route="a"}`, Agg: "Count", Count: 3},
		{Key: `{route="b"}`, Agg: "Sum", Value: 55.25},
		{Key: `{queue="q"}`, Agg: "LastValue", Value: 4},
		dist(`{route="c"}`, 0.25, 50, 55.25/3, 1564.0416666666667, 55.25, 3, 1, 1, 1),
	}
	zeros := dist(`{queue="inline"}`, 0, 0, 0, 0, 0, 2, 2, 0)
	ocZeros := zeros
	ocZeros.Max = ocMaxInit

	var d differences
	if p := rowProblems("v", base, base, false, &d); len(p) != 0 {
		t.Errorf("equal rows: %v", p)
	}
	if p := rowProblems("v", []row{ocZeros}, []row{zeros}, false, &d); len(p) != 0 || d.maxInit != 1 {
		t.Errorf("OpenCensus's initial Max on a row of zeros: problems %v, counted %d; want none, 1", p, d.maxInit)
	}
	inexact := slices.Clone(base)
	inexact[3].Sum = 55.24999999999999
	if p := rowProblems("v", inexact, base, false, &d); len(p) != 0 || d.sumInexact != 1 {
		t.Errorf("Sum() off in the last bits: problems %v, counted %d; want none, 1", p, d.sumInexact)
	}

	mutations := map[string]func(rs []row) []row{
		"count":            func(rs []row) []row { rs[0].Count++; return rs },
		"sum":              func(rs []row) []row { rs[1].Value *= 1 + 1e-6; return rs },
		"last value":       func(rs []row) []row { rs[2].Value = 4.000000000001; return rs },
		"bucket":           func(rs []row) []row { rs[3].Buckets = []int64{2, 0, 1}; return rs },
		"min":              func(rs []row) []row { rs[3].Min = 0.2500000000001; return rs },
		"max":              func(rs []row) []row { rs[3].Max = 49; return rs },
		"mean":             func(rs []row) []row { rs[3].Mean *= 1 + 1e-6; return rs },
		"ssd":              func(rs []row) []row { rs[3].SSD *= 1 + 1e-6; return rs },
		"Sum()":            func(rs []row) []row { rs[3].Sum = 56; return rs },
		"missing row":      func(rs []row) []row { return rs[1:] },
		"extra row":        func(rs []row) []row { return append(rs, row{Key: `{route="z"}`, Agg: "Count", Count: 1}) },
		"other tags":       func(rs []row) []row { rs[0].Key = `{route="x"}`; return rs },
		"aggregation":      func(rs []row) []row { rs[1].Agg = "LastValue"; return rs },
		"max of positives": func(rs []row) []row { rs[3].Max = ocMaxInit; return rs },
	}
	for name, mutate := range mutations {
		zs := mutate(slices.Clone(base))
		for i := range zs {
			zs[i].Buckets = slices.Clone(zs[i].Buckets)
		}
		if p := rowProblems("v", base, zs, false, &differences{}); len(p) == 0 {
			t.Errorf("%s: comparator reported nothing", name)
		}
	}
	// OpenCensus's initial Max is allowed only where zerostat's Max is <= 0.
	ocInit := slices.Clone(base)
	ocInit[3].Max = ocMaxInit
	if p := rowProblems("v", ocInit, base, false, &differences{}); len(p) == 0 {
		t.Errorf("OpenCensus Max 5e-324 on a row with positive values: comparator reported nothing")
	}
	// zerostat's Max of a row of values <= 0 must still fit the row.
	bad := zeros
	bad.Max = -1
	if p := rowProblems("v", []row{ocZeros}, []row{bad}, false, &differences{}); len(p) == 0 {
		t.Errorf("zerostat Max -1 above Min 0: comparator reported nothing")
	}
	// countsOnly ignores values but not counts or tag sets.
	if p := rowProblems("v", base, mutations["mean"](slices.Clone(base)), true, &differences{}); len(p) != 0 {
		t.Errorf("countsOnly with another mean: %v", p)
	}
	if p := rowProblems("v", base, mutations["count"](slices.Clone(base)), true, &differences{}); len(p) == 0 {
		t.Errorf("countsOnly with another count: comparator reported nothing")
	}
}
