package conformance

import (
	"fmt"
	"slices"
	"sort"

	ocview "go.opencensus.io/stats/view"

	"github.com/zerostat/zerostat/benchmarks/internal/sdkrows"
	"github.com/zerostat/zerostat/view"
)

// This file holds the comparator of the conformance tests. The row model
// is shared with the migration tests (internal/sdkrows); the conformance
// tests add each row's values in the view's key order.

const ocMaxInit = sdkrows.OCMaxInit

type kv = sdkrows.KV

// normRow is a row of either SDK, with its values in the view's sorted key
// order ("" when absent).
type normRow struct {
	sdkrows.Row
	vals []string
}

func withVals(keys []string, rs []sdkrows.Row) []normRow {
	out := make([]normRow, len(rs))
	for i, r := range rs {
		out[i] = normRow{Row: r, vals: r.Values(keys)}
	}
	return out
}

func normZS(keys []string, rows []*view.Row) ([]normRow, error) {
	rs, err := sdkrows.FromZerostat(rows)
	return withVals(keys, rs), err
}

func normOC(keys []string, rows []*ocview.Row) ([]normRow, error) {
	rs, err := sdkrows.FromOpenCensus(rows)
	out := withVals(keys, rs)
	// OpenCensus returns rows in map order; zerostat sorts them by values.
	sortRows(out)
	return out, err
}

func sortRows(rs []normRow) {
	sort.SliceStable(rs, func(i, j int) bool { return slices.Compare(rs[i].vals, rs[j].vals) < 0 })
}

// diffRows compares zerostat's rows (got, in the order zerostat returned
// them) with OpenCensus's (want, sorted by sortRows). trueMax holds, per row
// key, the largest value recorded into the row, tracked by the test itself:
// it is what zerostat must report as Max when OpenCensus reports its initial
// 5e-324 (all values <= 0). It returns one message per mismatch.
func diffRows(viewName string, got, want []normRow, trueMax map[string]float64) []string {
	var errs []string
	add := func(key, field string, g, w any) {
		errs = append(errs, fmt.Sprintf("view %q row %s: %s: got %v; want %v", viewName, key, field, g, w))
	}
	for i := 1; i < len(got); i++ {
		if slices.Compare(got[i-1].vals, got[i].vals) >= 0 {
			add(got[i].Key, "row order (zerostat sorts rows by tag values)",
				fmt.Sprintf("%q after %q", got[i].vals, got[i-1].vals), "strictly increasing values")
		}
	}
	gm := map[string]normRow{}
	for _, g := range got {
		gm[g.Key] = g
	}
	wm := map[string]bool{}
	for _, w := range want {
		wm[w.Key] = true
		g, ok := gm[w.Key]
		if !ok {
			add(w.Key, "row", "missing", "present (OpenCensus has it)")
			continue
		}
		if g.Agg != w.Agg {
			add(w.Key, "aggregation type", g.Agg, w.Agg)
			continue
		}
		switch w.Agg {
		case "Count":
			if g.Count != w.Count {
				add(w.Key, "Count", g.Count, w.Count)
			}
		case "Sum":
			if !sdkrows.Near(g.Value, w.Value) {
				add(w.Key, "Sum", g.Value, w.Value)
			}
		case "LastValue":
			if !sdkrows.Near(g.Value, w.Value) {
				add(w.Key, "LastValue", g.Value, w.Value)
			}
		case "Distribution":
			if g.Count != w.Count {
				add(w.Key, "Distribution.Count", g.Count, w.Count)
			}
			if !slices.Equal(g.Buckets, w.Buckets) {
				add(w.Key, "Distribution.CountPerBucket", g.Buckets, w.Buckets)
			}
			if g.Min != w.Min {
				add(w.Key, "Distribution.Min", g.Min, w.Min)
			}
			tm, ok := trueMax[w.Key]
			if w.Max > ocMaxInit || (ok && tm == w.Max) {
				// (5e-324 itself can be recorded: next to a 0 bound.)
				if g.Max != w.Max {
					add(w.Key, "Distribution.Max", g.Max, w.Max)
				}
			} else {
				// OpenCensus reports its initial Max: every value was <= 0.
				switch {
				case !ok:
					add(w.Key, "Distribution.Max (OpenCensus reports its initial 5e-324)", g.Max, "a tracked true maximum (the test tracked none)")
				case tm > 0:
					add(w.Key, "Distribution.Max (OpenCensus reports 5e-324 although a value > 0 was recorded)", w.Max, tm)
				case g.Max != tm:
					add(w.Key, "Distribution.Max (all values <= 0; OpenCensus reports 5e-324, zerostat must report the true max)", g.Max, tm)
				}
			}
			if !sdkrows.Near(g.Mean, w.Mean) {
				add(w.Key, "Distribution.Mean", g.Mean, w.Mean)
			}
			if !sdkrows.Near(g.SSD, w.SSD) {
				add(w.Key, "Distribution.SumOfSquaredDev", g.SSD, w.SSD)
			}
		}
	}
	for _, g := range got {
		if !wm[g.Key] {
			add(g.Key, "row", "present", "absent (OpenCensus has no such row)")
		}
	}
	return errs
}
