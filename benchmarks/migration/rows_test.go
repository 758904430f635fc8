package migration_test

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	ocview "go.opencensus.io/stats/view"

	"github.com/zerostat/zerostat/view"
)

// This file holds the SDK-neutral row model and the comparator.

// ocMaxInit is what OpenCensus initialises DistributionData.Max to
// (stats/view/aggregation_data.go): a row whose values are all <= 0 reports
// it as its Max. The doc lists it as a deliberate difference.
const ocMaxInit = math.SmallestNonzeroFloat64

// tolerance is the relative (and, near zero, absolute) tolerance for float
// statistics.
const tolerance = 1e-9

type kv struct{ k, v string }

// row is a row of either SDK in one shape.
type row struct {
	key  string // canonical tags, see rowKey
	tags []kv   // as the SDK gave them
	agg  string // "Count", "Sum", "Distribution", "LastValue"

	count   int64   // Count, Distribution
	value   float64 // Sum, LastValue
	min     float64 // Distribution
	max     float64
	mean    float64
	ssd     float64
	sum     float64 // DistributionData.Sum()
	buckets []int64
}

func (r row) String() string {
	switch r.agg {
	case "Count":
		return fmt.Sprintf("%s Count=%d", r.key, r.count)
	case "Sum", "LastValue":
		return fmt.Sprintf("%s %s=%v", r.key, r.agg, r.value)
	}
	return fmt.Sprintf("%s Distribution count=%d min=%v max=%v mean=%v ssd=%v sum=%v buckets=%v",
		r.key, r.count, r.min, r.max, r.mean, r.ssd, r.sum, r.buckets)
}

// rowKey is the canonical form of a tag set: sorted by key, empty values
// left out (neither SDK reports them).
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
		b.WriteString(t.k)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(t.v))
	}
	b.WriteByte('}')
	return b.String()
}

func normZS(rows []*view.Row) []row {
	out := make([]row, len(rows))
	for i, r := range rows {
		var n row
		for _, t := range r.Tags {
			n.tags = append(n.tags, kv{t.Key.Name(), t.Value})
		}
		n.key = rowKey(n.tags)
		switch d := r.Data.(type) {
		case *view.CountData:
			n.agg, n.count = "Count", d.Value
		case *view.SumData:
			n.agg, n.value = "Sum", d.Value
		case *view.LastValueData:
			n.agg, n.value = "LastValue", d.Value
		case *view.DistributionData:
			n.agg, n.count, n.min, n.max, n.mean, n.ssd = "Distribution", d.Count, d.Min, d.Max, d.Mean, d.SumOfSquaredDev
			n.sum, n.buckets = d.Sum(), slices.Clone(d.CountPerBucket)
		default:
			panic(fmt.Sprintf("zerostat: unknown aggregation data %T", r.Data))
		}
		out[i] = n
	}
	return out
}

func normOC(rows []*ocview.Row) []row {
	out := make([]row, len(rows))
	for i, r := range rows {
		var n row
		for _, t := range r.Tags {
			n.tags = append(n.tags, kv{t.Key.Name(), t.Value})
		}
		n.key = rowKey(n.tags)
		switch d := r.Data.(type) {
		case *ocview.CountData:
			n.agg, n.count = "Count", d.Value
		case *ocview.SumData:
			n.agg, n.value = "Sum", d.Value
		case *ocview.LastValueData:
			n.agg, n.value = "LastValue", d.Value
		case *ocview.DistributionData:
			n.agg, n.count, n.min, n.max, n.mean, n.ssd = "Distribution", d.Count, d.Min, d.Max, d.Mean, d.SumOfSquaredDev
			n.sum, n.buckets = d.Sum(), slices.Clone(d.CountPerBucket)
		default:
			panic(fmt.Sprintf("opencensus: unknown aggregation data %T", r.Data))
		}
		out[i] = n
	}
	return out
}

// near reports whether a and b agree to tolerance (relative, or absolute
// near zero).
func near(a, b float64) bool {
	if a == b {
		return true
	}
	d := math.Abs(a - b)
	return d <= tolerance || d <= tolerance*math.Max(math.Abs(a), math.Abs(b))
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
		if _, dup := byKey[r.key]; dup {
			out = append(out, fmt.Sprintf("view %s: OpenCensus has two rows %s", name, r.key))
		}
		byKey[r.key] = r
	}
	seen := make(map[string]bool, len(zs))
	for _, z := range zs {
		if seen[z.key] {
			out = append(out, fmt.Sprintf("view %s: zerostat has two rows %s", name, z.key))
		}
		seen[z.key] = true
		o, ok := byKey[z.key]
		if !ok {
			out = append(out, fmt.Sprintf("view %s: row only in zerostat: %v", name, z))
			continue
		}
		if msg := compareRow(o, z, countsOnly, diffs); msg != "" {
			out = append(out, fmt.Sprintf("view %s, row %s: %s\n  opencensus: %v\n  zerostat:   %v", name, z.key, msg, o, z))
		}
	}
	for _, o := range oc {
		if !seen[o.key] {
			out = append(out, fmt.Sprintf("view %s: row only in OpenCensus: %v", name, o))
		}
	}
	return out
}

func compareRow(o, z row, countsOnly bool, diffs *differences) string {
	if o.agg != z.agg {
		return fmt.Sprintf("aggregation %s vs %s", o.agg, z.agg)
	}
	if o.count != z.count {
		return fmt.Sprintf("count %d vs %d", o.count, z.count)
	}
	if countsOnly {
		return ""
	}
	switch o.agg {
	case "Sum":
		if !near(o.value, z.value) {
			return fmt.Sprintf("sum %v vs %v", o.value, z.value)
		}
	case "LastValue":
		if o.value != z.value {
			return fmt.Sprintf("last value %v vs %v", o.value, z.value)
		}
	case "Distribution":
		if !slices.Equal(o.buckets, z.buckets) {
			return fmt.Sprintf("buckets %v vs %v", o.buckets, z.buckets)
		}
		if o.min != z.min {
			return fmt.Sprintf("min %v vs %v", o.min, z.min)
		}
		switch {
		case o.max == z.max:
		case o.max == ocMaxInit && z.max <= 0:
			// Deliberate difference: zerostat reports the true maximum.
			// It must be consistent with the other statistics.
			if z.max < z.min || z.max < z.mean-tolerance || (z.ssd == 0 && z.max != z.min) {
				return fmt.Sprintf("zerostat max %v inconsistent with min %v, mean %v, ssd %v", z.max, z.min, z.mean, z.ssd)
			}
			diffs.maxInit++
		default:
			return fmt.Sprintf("max %v vs %v", o.max, z.max)
		}
		if !near(o.mean, z.mean) {
			return fmt.Sprintf("mean %v vs %v", o.mean, z.mean)
		}
		if !near(o.ssd, z.ssd) {
			return fmt.Sprintf("sum of squared deviations %v vs %v", o.ssd, z.ssd)
		}
		// Deliberate difference: OpenCensus's Sum() is Mean × Count,
		// zerostat's the running sum.
		if !near(o.sum, z.sum) {
			return fmt.Sprintf("Sum() %v vs %v", o.sum, z.sum)
		}
		if o.sum != z.sum {
			diffs.sumInexact++
		}
	}
	return ""
}

// checkSorted checks zerostat's rows come sorted by their values of the
// view's keys (sorted by name), key by key, a missing key first.
func checkSorted(t *testing.T, name string, keys []string, zs []row) {
	t.Helper()
	vals := func(r row) []string {
		out := make([]string, len(keys))
		for i, k := range keys {
			for _, tg := range r.tags {
				if tg.k == k {
					out[i] = tg.v
				}
			}
		}
		return out
	}
	for i := 1; i < len(zs); i++ {
		if slices.Compare(vals(zs[i-1]), vals(zs[i])) >= 0 {
			t.Errorf("view %s: zerostat rows %d and %d out of order: %s, %s", name, i-1, i, zs[i-1].key, zs[i].key)
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
		return row{key: key, agg: "Distribution", count: count, min: min, max: max, mean: mean, ssd: ssd, sum: sum, buckets: buckets}
	}
	base := []row{
		{key: `{route="a"}`, agg: "Count", count: 3},
		{key: `{route="b"}`, agg: "Sum", value: 55.25},
		{key: `{queue="q"}`, agg: "LastValue", value: 4},
		dist(`{route="c"}`, 0.25, 50, 55.25/3, 1564.0416666666667, 55.25, 3, 1, 1, 1),
	}
	zeros := dist(`{queue="inline"}`, 0, 0, 0, 0, 0, 2, 2, 0)
	ocZeros := zeros
	ocZeros.max = ocMaxInit

	var d differences
	if p := rowProblems("v", base, base, false, &d); len(p) != 0 {
		t.Errorf("equal rows: %v", p)
	}
	if p := rowProblems("v", []row{ocZeros}, []row{zeros}, false, &d); len(p) != 0 || d.maxInit != 1 {
		t.Errorf("OpenCensus's initial Max on a row of zeros: problems %v, counted %d; want none, 1", p, d.maxInit)
	}
	inexact := slices.Clone(base)
	inexact[3].sum = 55.24999999999999
	if p := rowProblems("v", inexact, base, false, &d); len(p) != 0 || d.sumInexact != 1 {
		t.Errorf("Sum() off in the last bits: problems %v, counted %d; want none, 1", p, d.sumInexact)
	}

	mutations := map[string]func(rs []row) []row{
		"count":            func(rs []row) []row { rs[0].count++; return rs },
		"sum":              func(rs []row) []row { rs[1].value *= 1 + 1e-6; return rs },
		"last value":       func(rs []row) []row { rs[2].value = 4.000000000001; return rs },
		"bucket":           func(rs []row) []row { rs[3].buckets = []int64{2, 0, 1}; return rs },
		"min":              func(rs []row) []row { rs[3].min = 0.2500000000001; return rs },
		"max":              func(rs []row) []row { rs[3].max = 49; return rs },
		"mean":             func(rs []row) []row { rs[3].mean *= 1 + 1e-6; return rs },
		"ssd":              func(rs []row) []row { rs[3].ssd *= 1 + 1e-6; return rs },
		"Sum()":            func(rs []row) []row { rs[3].sum = 56; return rs },
		"missing row":      func(rs []row) []row { return rs[1:] },
		"extra row":        func(rs []row) []row { return append(rs, row{key: `{route="z"}`, agg: "Count", count: 1}) },
		"other tags":       func(rs []row) []row { rs[0].key = `{route="x"}`; return rs },
		"aggregation":      func(rs []row) []row { rs[1].agg = "LastValue"; return rs },
		"max of positives": func(rs []row) []row { rs[3].max = ocMaxInit; return rs },
	}
	for name, mutate := range mutations {
		zs := mutate(slices.Clone(base))
		for i := range zs {
			zs[i].buckets = slices.Clone(zs[i].buckets)
		}
		if p := rowProblems("v", base, zs, false, &differences{}); len(p) == 0 {
			t.Errorf("%s: comparator reported nothing", name)
		}
	}
	// OpenCensus's initial Max is allowed only where zerostat's Max is <= 0.
	ocInit := slices.Clone(base)
	ocInit[3].max = ocMaxInit
	if p := rowProblems("v", ocInit, base, false, &differences{}); len(p) == 0 {
		t.Errorf("OpenCensus Max 5e-324 on a row with positive values: comparator reported nothing")
	}
	// zerostat's Max of a row of values <= 0 must still fit the row.
	bad := zeros
	bad.max = -1
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
