package opencensus_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	ocprom "contrib.go.opencensus.io/exporter/prometheus"
	"go.opencensus.io/metric/metricdata"
	ocview "go.opencensus.io/stats/view"

	"github.com/zerostat/zerostat/bridge/opencensus"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// recordExp registers an exponential view of maxSize and maxScale named
// name, records values into it on route /a and bValues on route /b, and
// returns it.
func recordExp(t *testing.T, name string, maxSize, maxScale int32, aValues, bValues []float64) *view.View {
	m := stats.Float64(name+"_m", "", stats.UnitMilliseconds)
	v := &view.View{Name: name, Measure: m, Aggregation: view.ExponentialDistribution(maxSize, maxScale), TagKeys: []tag.Key{keyRoute}}
	register(t, v)
	a := ctxWith(t, tag.Insert(keyRoute, "/a"))
	b := ctxWith(t, tag.Insert(keyRoute, "/b"))
	for _, x := range aValues {
		stats.Record(a, m.M(x))
	}
	for _, x := range bValues {
		stats.Record(b, m.M(x))
	}
	return v
}

func bucketCounts(d *metricdata.Distribution) []int64 {
	out := make([]int64, len(d.Buckets))
	for i, b := range d.Buckets {
		out[i] = b.Count
	}
	return out
}

// The producer publishes an exponential view as a cumulative distribution
// whose point carries the row's own buckets: bounds -b^(N+1) .. -b^n, 0,
// b^p .. b^(P+1) at the row's scale, the negative buckets' counts, the
// zero count in [0, b^p), the positive buckets' counts; Sum exact.
func TestProducerExponential(t *testing.T) {
	// Scale 0 (base 2): /a -3 in [-4,-2), 0, 1.5 in (1,2], 3 3 in (2,4], 5 in
	// (4,8]; /b 0.75 0.75 and 100 need 9 buckets at scale 0, so 4 buckets
	// lower it to scale -2 (base 16): (1/16,1] and (16,256].
	recordExp(t, "exp_prod", 4, 0, []float64{-3, 0, 1.5, 3, 3, 5}, []float64{0.75, 0.75, 100})
	var m *metricdata.Metric
	for _, x := range opencensus.NewProducer(opencensus.Options{}).Read() {
		if x.Descriptor.Name == "exp_prod" {
			m = x
		}
	}
	if m == nil || m.Descriptor.Type != metricdata.TypeCumulativeDistribution || len(m.TimeSeries) != 2 {
		t.Fatalf("exp_prod: %+v", m)
	}
	for i, want := range []struct {
		bounds []float64
		counts []int64
		count  int64
		sum    float64
	}{
		{[]float64{-4, -2, 0, 1, 2, 4, 8}, []int64{0, 1, 0, 1, 1, 2, 1, 0}, 6, 9.5},
		{[]float64{0, 0.0625, 1, 16, 256}, []int64{0, 0, 2, 0, 1, 0}, 3, 101.5},
	} {
		d := m.TimeSeries[i].Points[0].Value.(*metricdata.Distribution)
		if !slices.Equal(d.BucketOptions.Bounds, want.bounds) || !slices.Equal(bucketCounts(d), want.counts) ||
			d.Count != want.count || d.Sum != want.sum || d.SumOfSquaredDeviation != 0 {
			t.Errorf("row %d: bounds %v counts %v count %d sum %v ssd %v; want %v %v %d %v 0", i,
				d.BucketOptions.Bounds, bucketCounts(d), d.Count, d.Sum, d.SumOfSquaredDeviation, want.bounds, want.counts, want.count, want.sum)
		}
	}
}

// The Exporter reports an exponential view as an OpenCensus Distribution
// whose bounds are the edges of the rows' common scale (a report has one
// view, one list of bounds): the scale of a histogram of maxSize buckets
// per sign holding every row's values; each row's counts, lowered to it.
func TestExporterExponential(t *testing.T) {
	v := recordExp(t, "exp_rep", 4, 0, []float64{-3, 0, 1.5, 3, 3, 5, 100}, []float64{0.75, 0.75})
	rows, err := view.RetrieveData(v.Name)
	if err != nil {
		t.Fatal(err)
	}
	c := &capture{}
	opencensus.NewExporter(c).ExportView(&view.Data{View: v, Start: time.Now(), End: time.Now(), Rows: rows})
	got := c.take()
	if len(got) != 1 {
		t.Fatalf("%d reports", len(got))
	}
	d := got[0]
	// /a alone is at scale -1; with /b's (1/4,1] the union spans 5 buckets:
	// scale -2 (base 16), negative bucket 0, positive -1..1.
	if d.View.Aggregation.Type != ocview.AggTypeDistribution || !slices.Equal(d.View.Aggregation.Buckets, []float64{-16, -1, 0, 0.0625, 1, 16, 256}) {
		t.Fatalf("aggregation %v %v", d.View.Aggregation.Type, d.View.Aggregation.Buckets)
	}
	want := map[string]struct {
		counts        []int64
		count         int64
		min, max, avg float64
	}{
		`route="/a"`: {[]int64{0, 1, 0, 1, 0, 4, 1, 0}, 7, -3, 100, 109.5 / 7},
		`route="/b"`: {[]int64{0, 0, 0, 0, 2, 0, 0, 0}, 2, 0.75, 0.75, 0.75},
	}
	for _, r := range d.Rows {
		dd := r.Data.(*ocview.DistributionData)
		w := want[tagString(r.Tags)]
		if !slices.Equal(dd.CountPerBucket, w.counts) || dd.Count != w.count || dd.Min != w.min || dd.Max != w.max ||
			dd.Mean != w.avg || dd.SumOfSquaredDev != 0 || len(dd.ExemplarsPerBucket) != len(dd.CountPerBucket) {
			t.Errorf("row %s: %+v; want %+v", tagString(r.Tags), dd, w)
		}
	}
	if len(d.Rows) != 2 {
		t.Errorf("%d rows", len(d.Rows))
	}
}

// For random workloads of both signs and zeros, at every scale the
// histogram settles at, the counts on OpenCensus's buckets are the
// counts OpenCensus's own rule (bucket k holds bounds[k-1] <= v <
// bounds[k]) gives the recorded values, but for values on a positive
// bucket's upper edge, which the data model counts in the bucket below
// (base^i < v <= base^(i+1)) and OpenCensus's bounds label as the bucket
// above: the labels differ there, as the package doc says; the counts are
// the histogram's. Negative buckets, [-base^(i+1), -base^i), are the same
// under both rules.
func TestExpBoundsCarryTheBuckets(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 7))
	for n := range 40 {
		maxSize := []int32{2, 8, 160}[n%3]
		maxScale := []int32{-3, 0, 4, 20}[n%4]
		var values []float64
		for range 1 + r.IntN(200) {
			switch r.IntN(5) {
			case 0:
				values = append(values, 0)
			case 1:
				values = append(values, -math.Exp(r.NormFloat64()*2))
			default:
				values = append(values, math.Exp(r.NormFloat64()*float64(1+n%5)))
			}
		}
		name := "exp_carry_" + string(rune('a'+n%26)) + string(rune('a'+n/26))
		recordExp(t, name, maxSize, maxScale, values, nil)
		d := readDistribution(t, name)
		ocRule := make([]int64, len(d.BucketOptions.Bounds)+1)
		for _, v := range values {
			ocRule[sort.Search(len(d.BucketOptions.Bounds), func(k int) bool { return v < d.BucketOptions.Bounds[k] })]++
		}
		if got := bucketCounts(d); !slices.Equal(got, ocRule) {
			t.Fatalf("size %d scale %d, %d values: counts %v; OpenCensus's rule over the values %v (bounds %v)",
				maxSize, maxScale, len(values), got, ocRule, d.BucketOptions.Bounds)
		}
		for i := 1; i < len(d.BucketOptions.Bounds); i++ {
			if !(d.BucketOptions.Bounds[i] > d.BucketOptions.Bounds[i-1]) {
				t.Fatalf("bounds not increasing: %v", d.BucketOptions.Bounds)
			}
		}
	}

	// A value on an edge: 2 at scale 0 is in (1, 2] (bucket 0); OpenCensus's
	// bounds 0, 1, 2, 4 label the bucket holding it [1, 2).
	recordExp(t, "exp_edge", 160, 0, []float64{2, 3}, nil)
	d := readDistribution(t, "exp_edge")
	if !slices.Equal(d.BucketOptions.Bounds, []float64{0, 1, 2, 4}) || !slices.Equal(bucketCounts(d), []int64{0, 0, 1, 1, 0}) {
		t.Errorf("edge: bounds %v counts %v; want [0 1 2 4] [0 0 1 1 0]", d.BucketOptions.Bounds, bucketCounts(d))
	}
}

// readDistribution returns the producer's point of the view named name
// (one row).
func readDistribution(t *testing.T, name string) *metricdata.Distribution {
	t.Helper()
	for _, m := range opencensus.NewProducer(opencensus.Options{}).Read() {
		if m.Descriptor.Name == name {
			return m.TimeSeries[0].Points[0].Value.(*metricdata.Distribution)
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}

// The largest float's bucket at scale 0 ends at 2^1024, beyond float64:
// that bound is left out, the bucket above the last bound holds it.
func TestExpBoundsBeyondFloat64(t *testing.T) {
	recordExp(t, "exp_huge", 160, 0, []float64{math.MaxFloat64}, nil)
	d := readDistribution(t, "exp_huge")
	if b := d.BucketOptions.Bounds; !slices.Equal(b, []float64{0, 0x1p1023}) || !slices.Equal(bucketCounts(d), []int64{0, 0, 1}) {
		t.Errorf("bounds %v, counts %v; want [0 2^1023] [0 0 1]", b, bucketCounts(d))
	}
}

// OpenCensus's Prometheus exporter, unchanged, exports an exponential
// view through the bridge as a classic histogram whose le labels are the
// buckets' edges, with the exact cumulative counts.
func TestContribPrometheusExportsExponentialView(t *testing.T) {
	recordExp(t, "bridge_exp", 160, 0, []float64{-3, 0, 1.5, 3, 3, 5}, nil)
	p := opencensus.Register(opencensus.Options{})
	defer p.Unregister()
	exp, err := ocprom.NewExporter(ocprom.Options{Namespace: "oc", OnError: func(err error) { t.Errorf("exporter: %v", err) }})
	if err != nil {
		t.Fatal(err)
	}
	var mine []string
	for _, l := range scrape(t, exp) {
		if strings.Contains(l, "oc_bridge_exp") {
			mine = append(mine, l)
		}
	}
	want := []string{
		`# TYPE oc_bridge_exp histogram`,
		`oc_bridge_exp_bucket{route="/a",le="+Inf"} 6`,
		`oc_bridge_exp_bucket{route="/a",le="-2"} 1`,
		`oc_bridge_exp_bucket{route="/a",le="-4"} 0`,
		`oc_bridge_exp_bucket{route="/a",le="0"} 1`,
		`oc_bridge_exp_bucket{route="/a",le="1"} 2`,
		`oc_bridge_exp_bucket{route="/a",le="2"} 3`,
		`oc_bridge_exp_bucket{route="/a",le="4"} 5`,
		`oc_bridge_exp_bucket{route="/a",le="8"} 6`,
		`oc_bridge_exp_count{route="/a"} 6`,
		`oc_bridge_exp_sum{route="/a"} 9.5`,
	}
	if !slices.Equal(mine, want) {
		t.Errorf("scrape:\n%s\nwant:\n%s", strings.Join(mine, "\n"), strings.Join(want, "\n"))
	}
}
