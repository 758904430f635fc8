package conformance

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	ocview "go.opencensus.io/stats/view"

	"github.com/zerostat/zerostat/view"
)

// This file holds the SDK-neutral row model and the comparator shared by the
// conformance tests.

// ocMaxInit is what OpenCensus initialises DistributionData.Max to
// (stats/view/aggregation_data.go): a row whose values are all <= 0 reports
// it as its Max.
const ocMaxInit = math.SmallestNonzeroFloat64

// tolerance is the relative (and, near zero, absolute) tolerance for float
// statistics.
const tolerance = 1e-9

// kv is one tag of a row.
type kv struct{ k, v string }

// normRow is a row of either SDK in a common shape.
type normRow struct {
	key  string   // canonical form of the tags, see rowKey
	vals []string // values in the view's sorted key order, "" when absent
	agg  string   // "Count", "Sum", "Distribution", "LastValue"

	count   int64   // Count, Distribution
	value   float64 // Sum, LastValue
	min     float64 // Distribution
	max     float64
	mean    float64
	ssd     float64
	buckets []int64
}

// rowKey is the canonical, unambiguous form of a tag set: sorted by key,
// empty values left out (neither SDK reports them).
func rowKey(tags []kv) string {
	tags = slices.Clone(tags)
	sort.Slice(tags, func(i, j int) bool { return tags[i].k < tags[j].k })
	var b strings.Builder
	b.WriteByte('{')
	for _, t := range tags {
		if t.v == "" {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Quote(t.k))
		b.WriteByte(':')
		b.WriteString(strconv.Quote(t.v))
	}
	b.WriteByte('}')
	return b.String()
}

// projectVals returns the values of the sorted keys in tags, "" if absent.
func projectVals(keys []string, tags []kv) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		for _, t := range tags {
			if t.k == k {
				out[i] = t.v
			}
		}
	}
	return out
}

func normZS(keys []string, rows []*view.Row) ([]normRow, error) {
	out := make([]normRow, 0, len(rows))
	for _, r := range rows {
		tags := make([]kv, len(r.Tags))
		for i, t := range r.Tags {
			tags[i] = kv{t.Key.Name(), t.Value}
		}
		n := normRow{key: rowKey(tags), vals: projectVals(keys, tags)}
		switch d := r.Data.(type) {
		case *view.CountData:
			n.agg, n.count = "Count", d.Value
		case *view.SumData:
			n.agg, n.value = "Sum", d.Value
		case *view.LastValueData:
			n.agg, n.value = "LastValue", d.Value
		case *view.DistributionData:
			n.agg, n.count = "Distribution", d.Count
			n.min, n.max, n.mean, n.ssd = d.Min, d.Max, d.Mean, d.SumOfSquaredDev
			n.buckets = slices.Clone(d.CountPerBucket)
		default:
			return nil, fmt.Errorf("zerostat row %v: unknown data type %T", r, r.Data)
		}
		out = append(out, n)
	}
	return out, nil
}

func normOC(keys []string, rows []*ocview.Row) ([]normRow, error) {
	out := make([]normRow, 0, len(rows))
	for _, r := range rows {
		tags := make([]kv, len(r.Tags))
		for i, t := range r.Tags {
			tags[i] = kv{t.Key.Name(), t.Value}
		}
		n := normRow{key: rowKey(tags), vals: projectVals(keys, tags)}
		switch d := r.Data.(type) {
		case *ocview.CountData:
			n.agg, n.count = "Count", d.Value
		case *ocview.SumData:
			n.agg, n.value = "Sum", d.Value
		case *ocview.LastValueData:
			n.agg, n.value = "LastValue", d.Value
		case *ocview.DistributionData:
			n.agg, n.count = "Distribution", d.Count
			n.min, n.max, n.mean, n.ssd = d.Min, d.Max, d.Mean, d.SumOfSquaredDev
			n.buckets = slices.Clone(d.CountPerBucket)
		default:
			return nil, fmt.Errorf("opencensus row %v: unknown data type %T", r, r.Data)
		}
		out = append(out, n)
	}
	// OpenCensus returns rows in map order; zerostat sorts them by values.
	sortRows(out)
	return out, nil
}

func sortRows(rs []normRow) {
	sort.SliceStable(rs, func(i, j int) bool { return slices.Compare(rs[i].vals, rs[j].vals) < 0 })
}

// closeTo reports whether got and want agree to the relative tolerance, or
// to the same absolute tolerance near zero.
func closeTo(got, want float64) bool {
	if got == want {
		return true
	}
	d := math.Abs(got - want)
	return d <= tolerance || d <= tolerance*math.Max(math.Abs(got), math.Abs(want))
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
			add(got[i].key, "row order (zerostat sorts rows by tag values)",
				fmt.Sprintf("%q after %q", got[i].vals, got[i-1].vals), "strictly increasing values")
		}
	}
	gm := map[string]normRow{}
	for _, g := range got {
		gm[g.key] = g
	}
	wm := map[string]bool{}
	for _, w := range want {
		wm[w.key] = true
		g, ok := gm[w.key]
		if !ok {
			add(w.key, "row", "missing", "present (OpenCensus has it)")
			continue
		}
		if g.agg != w.agg {
			add(w.key, "aggregation type", g.agg, w.agg)
			continue
		}
		switch w.agg {
		case "Count":
			if g.count != w.count {
				add(w.key, "Count", g.count, w.count)
			}
		case "Sum":
			if !closeTo(g.value, w.value) {
				add(w.key, "Sum", g.value, w.value)
			}
		case "LastValue":
			if !closeTo(g.value, w.value) {
				add(w.key, "LastValue", g.value, w.value)
			}
		case "Distribution":
			if g.count != w.count {
				add(w.key, "Distribution.Count", g.count, w.count)
			}
			if !slices.Equal(g.buckets, w.buckets) {
				add(w.key, "Distribution.CountPerBucket", g.buckets, w.buckets)
			}
			if g.min != w.min {
				add(w.key, "Distribution.Min", g.min, w.min)
			}
			tm, ok := trueMax[w.key]
			if w.max > ocMaxInit || (ok && tm == w.max) {
				// (5e-324 itself can be recorded: next to a 0 bound.)
				if g.max != w.max {
					add(w.key, "Distribution.Max", g.max, w.max)
				}
			} else {
				// OpenCensus reports its initial Max: every value was <= 0.
				switch {
				case !ok:
					add(w.key, "Distribution.Max (OpenCensus reports its initial 5e-324)", g.max, "a tracked true maximum (the test tracked none)")
				case tm > 0:
					add(w.key, "Distribution.Max (OpenCensus reports 5e-324 although a value > 0 was recorded)", w.max, tm)
				case g.max != tm:
					add(w.key, "Distribution.Max (all values <= 0; OpenCensus reports 5e-324, zerostat must report the true max)", g.max, tm)
				}
			}
			if !closeTo(g.mean, w.mean) {
				add(w.key, "Distribution.Mean", g.mean, w.mean)
			}
			if !closeTo(g.ssd, w.ssd) {
				add(w.key, "Distribution.SumOfSquaredDev", g.ssd, w.ssd)
			}
		}
	}
	for _, g := range got {
		if !wm[g.key] {
			add(g.key, "row", "present", "absent (OpenCensus has no such row)")
		}
	}
	return errs
}
