// Package sdkrows puts the rows of OpenCensus's and zerostat's view
// packages in one shape, so that tests can compare the two SDKs row by
// row. It is the row model of the conformance and migration tests; each
// keeps its own comparator (what counts as a disagreement differs).
//
// Not for hot paths: every conversion allocates.
package sdkrows

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

// OCMaxInit is what OpenCensus initialises DistributionData.Max to
// (stats/view/aggregation_data.go): a row whose values are all <= 0
// reports it as its Max. docs/migrating-from-opencensus.md lists it as a
// deliberate difference.
const OCMaxInit = math.SmallestNonzeroFloat64

// Tolerance is the relative (and, near zero, absolute) tolerance for
// float statistics.
const Tolerance = 1e-9

// KV is one tag of a row.
type KV struct{ K, V string }

// Row is a row of either SDK.
type Row struct {
	Key  string // canonical form of the tags, see Key
	Tags []KV   // as the SDK gave them
	Agg  string // "Count", "Sum", "Distribution", "LastValue"

	Count   int64   // Count, Distribution
	Value   float64 // Sum, LastValue
	Min     float64 // Distribution
	Max     float64
	Mean    float64
	SSD     float64 // sum of squared deviations
	Sum     float64 // DistributionData.Sum()
	Buckets []int64
}

func (r Row) String() string {
	switch r.Agg {
	case "Count":
		return fmt.Sprintf("%s Count=%d", r.Key, r.Count)
	case "Sum", "LastValue":
		return fmt.Sprintf("%s %s=%v", r.Key, r.Agg, r.Value)
	}
	return fmt.Sprintf("%s Distribution count=%d min=%v max=%v mean=%v ssd=%v sum=%v buckets=%v",
		r.Key, r.Count, r.Min, r.Max, r.Mean, r.SSD, r.Sum, r.Buckets)
}

// Values returns the row's values of keys, "" where it has none.
func (r Row) Values(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		for _, t := range r.Tags {
			if t.K == k {
				out[i] = t.V
			}
		}
	}
	return out
}

// Key is the canonical, unambiguous form of a tag set: sorted by key,
// both quoted, empty values left out (neither SDK reports them).
func Key(tags []KV) string {
	tags = slices.Clone(tags)
	sort.Slice(tags, func(i, j int) bool { return tags[i].K < tags[j].K })
	var b strings.Builder
	b.WriteByte('{')
	for _, t := range tags {
		if t.V == "" {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Quote(t.K))
		b.WriteByte(':')
		b.WriteString(strconv.Quote(t.V))
	}
	b.WriteByte('}')
	return b.String()
}

// FromZerostat converts zerostat rows, in their order.
func FromZerostat(rows []*view.Row) ([]Row, error) {
	out := make([]Row, len(rows))
	for i, r := range rows {
		n := Row{Tags: make([]KV, len(r.Tags))}
		for j, t := range r.Tags {
			n.Tags[j] = KV{t.Key.Name(), t.Value}
		}
		n.Key = Key(n.Tags)
		switch d := r.Data.(type) {
		case *view.CountData:
			n.Agg, n.Count = "Count", d.Value
		case *view.SumData:
			n.Agg, n.Value = "Sum", d.Value
		case *view.LastValueData:
			n.Agg, n.Value = "LastValue", d.Value
		case *view.DistributionData:
			n.Agg, n.Count, n.Min, n.Max, n.Mean, n.SSD = "Distribution", d.Count, d.Min, d.Max, d.Mean, d.SumOfSquaredDev
			n.Sum, n.Buckets = d.Sum(), slices.Clone(d.CountPerBucket)
		default:
			return nil, fmt.Errorf("zerostat row %v: unknown aggregation data %T", r, r.Data)
		}
		out[i] = n
	}
	return out, nil
}

// FromOpenCensus converts OpenCensus rows, in their order (OpenCensus
// returns them in map order).
func FromOpenCensus(rows []*ocview.Row) ([]Row, error) {
	out := make([]Row, len(rows))
	for i, r := range rows {
		n := Row{Tags: make([]KV, len(r.Tags))}
		for j, t := range r.Tags {
			n.Tags[j] = KV{t.Key.Name(), t.Value}
		}
		n.Key = Key(n.Tags)
		switch d := r.Data.(type) {
		case *ocview.CountData:
			n.Agg, n.Count = "Count", d.Value
		case *ocview.SumData:
			n.Agg, n.Value = "Sum", d.Value
		case *ocview.LastValueData:
			n.Agg, n.Value = "LastValue", d.Value
		case *ocview.DistributionData:
			n.Agg, n.Count, n.Min, n.Max, n.Mean, n.SSD = "Distribution", d.Count, d.Min, d.Max, d.Mean, d.SumOfSquaredDev
			n.Sum, n.Buckets = d.Sum(), slices.Clone(d.CountPerBucket)
		default:
			return nil, fmt.Errorf("opencensus row %v: unknown aggregation data %T", r, r.Data)
		}
		out[i] = n
	}
	return out, nil
}

// Near reports whether a and b agree to Tolerance: relative, or absolute
// near zero.
func Near(a, b float64) bool {
	if a == b {
		return true
	}
	d := math.Abs(a - b)
	return d <= Tolerance || d <= Tolerance*math.Max(math.Abs(a), math.Abs(b))
}
