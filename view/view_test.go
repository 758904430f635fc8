package view_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/ocmap"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var (
	keyA = tag.MustNewKey("a")
	keyB = tag.MustNewKey("b")
)

func register(t testing.TB, vs ...*view.View) {
	t.Helper()
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
}

func rows(t testing.TB, name string) []*view.Row {
	t.Helper()
	rs, err := view.RetrieveData(name)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func ctxWith(t testing.TB, ms ...tag.Mutator) context.Context {
	t.Helper()
	ctx, err := tag.New(context.Background(), ms...)
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

func TestRegisterErrors(t *testing.T) {
	m := stats.Float64("reg/err", "desc", stats.UnitSeconds)
	anon := stats.Float64("", "", "")
	for _, tc := range []struct {
		name string
		v    *view.View
		want string
	}{
		{"nil view", nil, "view 1 of 1 is nil"},
		{"nil measure", &view.View{Name: "x", Aggregation: view.Count()}, "Measure is nil"},
		{"nil aggregation", &view.View{Name: "x", Measure: m}, "Aggregation is nil"},
		{"no name", &view.View{Measure: anon, Aggregation: view.Count()}, "empty name"},
		{"long name", &view.View{Name: strings.Repeat("n", 256), Measure: m, Aggregation: view.Count()}, "longer than 255"},
		{"non-ascii name", &view.View{Name: "caf\xc3\xa9", Measure: m, Aggregation: view.Count()}, "printable ASCII"},
		{"agg none", &view.View{Name: "x", Measure: m, Aggregation: &view.Aggregation{}}, "unknown aggregation type None"},
		{"agg unknown", &view.View{Name: "x", Measure: m, Aggregation: &view.Aggregation{Type: 9}}, "AggType(9)"},
		{"zero key", &view.View{Name: "x", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{{}}}, "invalid tag key"},
		{"repeated key", &view.View{Name: "x", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyA, keyB, keyA}}, `tag key "a" is listed twice`},
		{"negative bound", &view.View{Name: "x", Measure: m, Aggregation: view.Distribution(1, -2)}, "negative bucket bounds"},
		{"NaN bound", &view.View{Name: "x", Measure: m, Aggregation: view.Distribution(1, math.NaN())}, "not finite"},
		{"Inf bound", &view.View{Name: "x", Measure: m, Aggregation: view.Distribution(math.Inf(1))}, "not finite"},
		{"repeated bound", &view.View{Name: "x", Measure: m, Aggregation: view.Distribution(5, 1, 5)}, "bound 5 is repeated"},
	} {
		err := view.Register(tc.v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v; want an error containing %q", tc.name, err, tc.want)
		}
	}
	if view.Find("x") != nil {
		t.Error("a failed Register registered a view")
	}
	err := view.Register(&view.View{Name: "x", Measure: m, Aggregation: view.Distribution(-1)})
	if !errors.Is(err, view.ErrNegativeBucketBounds) {
		t.Errorf("got %v; want ErrNegativeBucketBounds", err)
	}
	// One bad view fails the whole call.
	good := &view.View{Name: "reg/good", Measure: m, Aggregation: view.Count()}
	if err := view.Register(good, nil); err == nil || view.Find("reg/good") != nil {
		t.Errorf("Register(good, nil) = %v and registered good", err)
	}
}

func TestRegisterDefaultsAndCanonical(t *testing.T) {
	m := stats.Int64("reg/defaults", "measure desc", stats.UnitBytes)
	v := &view.View{Measure: m, Aggregation: view.Distribution(10, 0, 5), TagKeys: []tag.Key{keyB, keyA}}
	register(t, v)
	if v.Name != "reg/defaults" || v.Description != "measure desc" {
		t.Errorf("defaults not filled: %q %q", v.Name, v.Description)
	}
	if fmt.Sprint(v.Aggregation.Buckets) != "[5 10]" || v.TagKeys[0] != keyA {
		t.Errorf("not canonical: bounds %v keys %v", v.Aggregation.Buckets, v.TagKeys)
	}
	if view.Find("reg/defaults") != v {
		t.Error("Find did not return the registered view")
	}
	// The same view again, and an equal one: no-ops.
	same := &view.View{Name: "reg/defaults", Measure: m, Aggregation: view.Distribution(5, 10), TagKeys: []tag.Key{keyA, keyB}}
	if err := view.Register(v, same); err != nil {
		t.Errorf("re-registering an equal view: %v", err)
	}
	// A different view under the same name: error naming it.
	for _, other := range []*view.View{
		{Name: "reg/defaults", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyA, keyB}},
		{Name: "reg/defaults", Measure: m, Aggregation: view.Distribution(5, 11), TagKeys: []tag.Key{keyA, keyB}},
		{Name: "reg/defaults", Measure: m, Aggregation: view.Distribution(5, 10), TagKeys: []tag.Key{keyA}},
		{Name: "reg/defaults", Measure: stats.Int64("reg/other", "", ""), Aggregation: view.Distribution(5, 10), TagKeys: []tag.Key{keyA, keyB}},
	} {
		err := view.Register(other)
		if err == nil || !strings.Contains(err.Error(), "different view with the same name") {
			t.Errorf("got %v; want a same-name error", err)
		}
	}
	if _, err := view.RetrieveData("reg/nope"); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Errorf("RetrieveData of an unknown view: %v", err)
	}
}

func TestAggregations(t *testing.T) {
	m := stats.Float64("agg/values", "", stats.UnitMilliseconds)
	count := &view.View{Name: "agg/count", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyA}}
	sum := &view.View{Name: "agg/sum", Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{keyA}}
	dist := &view.View{Name: "agg/dist", Measure: m, Aggregation: view.Distribution(2, 4, 8), TagKeys: []tag.Key{keyA}}
	last := &view.View{Name: "agg/last", Measure: m, Aggregation: view.LastValue(), TagKeys: []tag.Key{keyA}}
	register(t, count, sum, dist, last)

	x := ctxWith(t, tag.Upsert(keyA, "x"))
	values := []float64{1, 2, 3.5, 4, 8, 100, -3}
	for _, v := range values {
		stats.Record(x, m.M(v))
	}
	stats.Record(context.Background(), m.M(5)) // the row without a

	check := func(name string, want ...string) {
		t.Helper()
		rs := rows(t, name)
		var got []string
		for _, r := range rs {
			view.ClearStart(r.Data)
			got = append(got, fmt.Sprintf("%v %+v", r.Tags, r.Data))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\ngot  %s\nwant %s", name, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
		}
	}
	check("agg/count", "[] &{Start:0001-01-01 00:00:00 +0000 UTC Value:1}", "[{a x}] &{Start:0001-01-01 00:00:00 +0000 UTC Value:7}")
	check("agg/sum", "[] &{Start:0001-01-01 00:00:00 +0000 UTC Value:5}", "[{a x}] &{Start:0001-01-01 00:00:00 +0000 UTC Value:115.5}")
	check("agg/last", "[] &{Value:5}", "[{a x}] &{Value:-3}")

	rs := rows(t, "agg/dist")
	d := rs[1].Data.(*view.DistributionData)
	// Reference: the two-pass definitions.
	var mean, ssd float64
	for _, v := range values {
		mean += v
	}
	mean /= float64(len(values))
	for _, v := range values {
		ssd += (v - mean) * (v - mean)
	}
	if d.Count != 7 || d.Min != -3 || d.Max != 100 || fmt.Sprint(d.CountPerBucket) != "[2 2 1 2]" {
		t.Errorf("distribution %+v; want count 7, min -3, max 100, buckets [2 2 1 2]", d)
	}
	if !near(d.Mean, mean) || !near(d.SumOfSquaredDev, ssd) || !near(d.Sum(), 115.5) {
		t.Errorf("mean %v ssd %v sum %v; want %v %v 115.5", d.Mean, d.SumOfSquaredDev, d.Sum(), mean, ssd)
	}
	if fmt.Sprint(d.Bounds()) != "[2 4 8]" {
		t.Errorf("bounds %v", d.Bounds())
	}
	if d0 := rs[0].Data.(*view.DistributionData); d0.Count != 1 || d0.Mean != 5 || d0.SumOfSquaredDev != 0 || d0.Min != 5 || d0.Max != 5 {
		t.Errorf("single-value distribution %+v", d0)
	}
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestDistributionPrecision: a large mean with a small spread, and an
// outlier first value (the case a naive sum of squares gets wrong): the
// mean and sum of squared deviations must match the exact values, computed
// here in rational arithmetic, to 1e-9 relative. (That the bits are
// OpenCensus's Welford update is checked against OpenCensus itself by
// benchmarks/conformance.)
func TestDistributionPrecision(t *testing.T) {
	m := stats.Float64("agg/precise", "", "")
	register(t, &view.View{Measure: m, Aggregation: view.Distribution(1)})
	var vs []float64
	for i := range 1001 {
		v := 1e9 + float64(i%10)
		if i == 0 {
			v = 1e12
		}
		vs = append(vs, v)
		stats.Record(context.Background(), m.M(v))
	}
	sum := new(big.Rat)
	for _, v := range vs {
		sum.Add(sum, new(big.Rat).SetFloat64(v))
	}
	mean := new(big.Rat).Quo(sum, big.NewRat(int64(len(vs)), 1))
	m2 := new(big.Rat)
	for _, v := range vs {
		d := new(big.Rat).Sub(new(big.Rat).SetFloat64(v), mean)
		m2.Add(m2, d.Mul(d, d))
	}
	wantMean, _ := mean.Float64()
	wantM2, _ := m2.Float64()
	d := rows(t, "agg/precise")[0].Data.(*view.DistributionData)
	rel := func(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }
	if rel(d.Mean, wantMean) > 1e-9 || rel(d.SumOfSquaredDev, wantM2) > 1e-9 {
		t.Errorf("mean %v ssd %v; want %v %v (relative errors %.2g %.2g)", d.Mean, d.SumOfSquaredDev,
			wantMean, wantM2, rel(d.Mean, wantMean), rel(d.SumOfSquaredDev, wantM2))
	}
	if d.Count != 1001 || d.Sum() != 1e12+1000*1e9+4500 {
		t.Errorf("count %d sum %v; want 1001 and %v", d.Count, d.Sum(), 1e12+1000*1e9+4500)
	}
}

func TestNonFinite(t *testing.T) {
	m := stats.Float64("agg/nonfinite", "", "")
	count := &view.View{Name: "nf/count", Measure: m, Aggregation: view.Count()}
	sum := &view.View{Name: "nf/sum", Measure: m, Aggregation: view.Sum()}
	dist := &view.View{Name: "nf/dist", Measure: m, Aggregation: view.Distribution(1, 10)}
	last := &view.View{Name: "nf/last", Measure: m, Aggregation: view.LastValue()}
	register(t, count, sum, dist, last)
	for _, v := range []float64{5, math.NaN(), math.Inf(1), math.Inf(-1), 0.5} {
		stats.Record(context.Background(), m.M(v))
	}
	if c := rows(t, "nf/count")[0].Data.(*view.CountData).Value; c != 5 {
		t.Errorf("count %d; want 5 (non-finite values are counted)", c)
	}
	if s := rows(t, "nf/sum")[0].Data.(*view.SumData).Value; !math.IsNaN(s) {
		t.Errorf("sum %v; want NaN (IEEE arithmetic, as in OpenCensus)", s)
	}
	d := rows(t, "nf/dist")[0].Data.(*view.DistributionData)
	// -Inf and 0.5 below 1; 5 in [1,10); NaN and +Inf in the last bucket.
	if d.Count != 5 || fmt.Sprint(d.CountPerBucket) != "[2 1 2]" || !math.IsInf(d.Min, -1) || !math.IsInf(d.Max, 1) {
		t.Errorf("distribution %+v; want count 5, buckets [2 1 2], min -Inf, max +Inf", d)
	}
	if !math.IsNaN(d.Mean) {
		t.Errorf("mean %v; want NaN", d.Mean)
	}
	if l := rows(t, "nf/last")[0].Data.(*view.LastValueData).Value; l != 0.5 {
		t.Errorf("last %v; want 0.5", l)
	}
}

// TestNonFiniteDistributionCumulative: RetrieveData's distribution is the
// running total of every sample, non-finite ones included, after each
// record: the sum +Inf from the first +Inf on, NaN from a NaN on (as the
// running sum of OpenCensus), mean and sum_sq_dev non-finite; count,
// buckets, Min and Max exact. (exporter/otlp's TestEncodeDeltaNonFinite
// reads the same through a delta reader.)
func TestNonFiniteDistributionCumulative(t *testing.T) {
	m := stats.Float64("agg/nonfinite_cumulative", "", "")
	v := &view.View{Name: "nfc/dist", Measure: m, Aggregation: view.Distribution(2.5, 10)}
	register(t, v)
	for i, c := range []struct {
		v        float64
		sum      float64
		min, max float64
		buckets  string
	}{
		{1, 1, 1, 1, "[1 0 0]"},
		{math.Inf(1), math.Inf(1), 1, math.Inf(1), "[1 0 1]"},
		{3, math.Inf(1), 1, math.Inf(1), "[1 1 1]"},
		{math.Inf(1), math.Inf(1), 1, math.Inf(1), "[1 1 2]"},
		{math.NaN(), math.NaN(), 1, math.Inf(1), "[1 1 3]"},
		{4, math.NaN(), 1, math.Inf(1), "[1 2 3]"},
		{math.Inf(-1), math.NaN(), math.Inf(-1), math.Inf(1), "[2 2 3]"},
	} {
		stats.Record(context.Background(), m.M(c.v))
		d := rows(t, "nfc/dist")[0].Data.(*view.DistributionData)
		sum := d.Sum()
		if d.Count != int64(i+1) || !(sum == c.sum || math.IsNaN(sum) && math.IsNaN(c.sum)) || d.Min != c.min || d.Max != c.max ||
			fmt.Sprint(d.CountPerBucket) != c.buckets {
			t.Errorf("after %d records: count %d sum %v min %v max %v buckets %v; want %d, %v, %v, %v, %s",
				i+1, d.Count, sum, d.Min, d.Max, d.CountPerBucket, i+1, c.sum, c.min, c.max, c.buckets)
		}
		if i > 0 && (d.Mean-d.Mean == 0 || !math.IsNaN(d.SumOfSquaredDev)) {
			t.Errorf("after %d records: mean %v, sum_sq_dev %v; want non-finite and NaN", i+1, d.Mean, d.SumOfSquaredDev)
		}
	}
}

func TestMissingAndEmptyTagsShareARow(t *testing.T) {
	// OpenCensus does not tell an absent key from an empty value.
	m := stats.Int64("tags/missing", "", "")
	register(t, &view.View{Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyA, keyB}})
	stats.Record(ctxWith(t, tag.Upsert(keyA, "")), m.M(1))
	stats.Record(context.Background(), m.M(1))
	stats.Record(ctxWith(t, tag.Upsert(tag.MustNewKey("unrelated"), "z")), m.M(1))
	stats.Record(ctxWith(t, tag.Upsert(keyB, "b")), m.M(1))
	rs := rows(t, "tags/missing")
	if len(rs) != 2 || rs[0].Tags != nil || rs[0].Data.(*view.CountData).Value != 3 ||
		fmt.Sprint(rs[1].Tags) != "[{b b}]" || rs[1].Data.(*view.CountData).Value != 1 {
		t.Errorf("got %v", rs)
	}
}

func TestRowsSortedDeterministically(t *testing.T) {
	m := stats.Int64("rows/sorted", "", "")
	register(t, &view.View{Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyA, keyB}})
	for _, ab := range [][2]string{{"z", "1"}, {"a", "2"}, {"a", ""}, {"", "9"}, {"m", "1"}, {"a", "10"}} {
		ctx := ctxWith(t, tag.Upsert(keyA, ab[0]), tag.Upsert(keyB, ab[1]))
		stats.Record(ctx, m.M(1))
	}
	var got []string
	for _, r := range rows(t, "rows/sorted") {
		got = append(got, fmt.Sprint(r.Tags))
	}
	want := "[[{b 9}] [{a a}] [{a a} {b 10}] [{a a} {b 2}] [{a m} {b 1}] [{a z} {b 1}]]"
	if fmt.Sprint(got) != want {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func TestUnregisterStartsFresh(t *testing.T) {
	m := stats.Int64("unreg/fresh", "", "")
	v := &view.View{Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{keyA}}
	ctx := ctxWith(t, tag.Upsert(keyA, "x"))
	register(t, v)
	stats.Record(ctx, m.M(5))
	view.Unregister(v)
	if view.Find(v.Name) != nil {
		t.Fatal("view still registered")
	}
	if _, err := view.RetrieveData(v.Name); err == nil {
		t.Fatal("RetrieveData of an unregistered view succeeded")
	}
	stats.Record(ctx, m.M(7)) // no view: dropped
	register(t, v)
	stats.Record(ctx, m.M(1)) // the ctx map's cached series is stale: must not be reused
	rs := rows(t, v.Name)
	if len(rs) != 1 || rs[0].Data.(*view.SumData).Value != 1 {
		t.Errorf("got %v; want a fresh sum of 1", rs)
	}
	view.Unregister(&view.View{Name: "unreg/never"}) // unknown: ignored
	view.Unregister(nil)
}

type recordingExporter struct {
	mu   sync.Mutex
	data []*view.Data
}

func (e *recordingExporter) ExportView(d *view.Data) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.data = append(e.data, d)
}

func (e *recordingExporter) find(name string) []*view.Data {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*view.Data
	for _, d := range e.data {
		if d.View.Name == name {
			out = append(out, d)
		}
	}
	return out
}

func TestExporterLoop(t *testing.T) {
	m := stats.Int64("export/loop", "", "")
	v := &view.View{Measure: m, Aggregation: view.Count()}
	register(t, v)
	stats.Record(context.Background(), m.M(1), m.M(1))

	e := &recordingExporter{}
	view.SetReportingPeriod(10 * time.Millisecond)
	defer view.SetReportingPeriod(0)
	view.RegisterExporter(e)
	view.RegisterExporter(e) // a set: no double reports
	deadline := time.Now().Add(5 * time.Second)
	for len(e.find(v.Name)) < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	view.UnregisterExporter(e)
	ds := e.find(v.Name)
	if len(ds) < 3 {
		t.Fatalf("got %d reports in 5s; want at least 3", len(ds))
	}
	// A report builds one *Data per view and gives it to each exporter:
	// registered twice, e would receive each one twice.
	for i := 1; i < len(ds); i++ {
		if ds[i] == ds[i-1] {
			t.Fatalf("report %d received twice: the exporter set holds e twice", i)
		}
	}
	d := ds[0]
	if d.View != v || d.Start.After(d.End) || len(d.Rows) != 1 || d.Rows[0].Data.(*view.CountData).Value != 2 {
		t.Errorf("report %+v", d)
	}

	// Unregister sends a final report to the exporters left.
	e2 := &recordingExporter{}
	view.RegisterExporter(e2)
	defer view.UnregisterExporter(e2)
	view.SetReportingPeriod(time.Hour)
	stats.Record(context.Background(), m.M(1))
	view.Unregister(v)
	ds = e2.find(v.Name)
	if len(ds) == 0 || ds[len(ds)-1].Rows[0].Data.(*view.CountData).Value != 3 {
		t.Errorf("final report %v; want count 3", ds)
	}
}

// TestRecordConcurrentSafe records from many goroutines while views are
// registered, unregistered, retrieved and exported; the views that stay
// registered must end with exact totals.
func TestRecordConcurrentSafe(t *testing.T) {
	m := stats.Int64("conc/m", "", "")
	count := &view.View{Name: "conc/count", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyA}}
	sum := &view.View{Name: "conc/sum", Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{keyA}}
	dist := &view.View{Name: "conc/dist", Measure: m, Aggregation: view.Distribution(10, 100, 1000), TagKeys: []tag.Key{keyA, keyB}}
	register(t, count, sum, dist)
	churn := &view.View{Name: "conc/churn", Measure: m, Aggregation: view.LastValue(), TagKeys: []tag.Key{keyB}}

	e := &recordingExporter{}
	view.SetReportingPeriod(time.Millisecond)
	defer view.SetReportingPeriod(0)
	view.RegisterExporter(e)
	defer view.UnregisterExporter(e)

	const goroutines, perG = 8, 2000
	hot := ctxWith(t, tag.Upsert(keyA, "hot"), tag.Upsert(keyB, "b"))
	start := make(chan struct{})
	var wg sync.WaitGroup
	var stop atomic.Bool
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			own := ctxWith(t, tag.Upsert(keyA, fmt.Sprint("g", g)))
			for i := range perG {
				stats.Record(hot, m.M(int64(i%2000)))
				stats.Record(own, m.M(1))
				if i%100 == 0 {
					// A fresh map each time: the slow path.
					c, _ := tag.New(context.Background(), tag.Upsert(keyA, "fresh"))
					stats.Record(c, m.M(2))
					_ = stats.RecordWithTags(hot, []tag.Mutator{tag.Upsert(keyB, "rwt")}, m.M(3))
				}
			}
		}()
	}
	var side sync.WaitGroup
	side.Add(1)
	go func() {
		defer side.Done()
		<-start
		for !stop.Load() {
			_ = view.Register(churn)
			_, _ = view.RetrieveData("conc/dist")
			view.Unregister(churn)
		}
	}()
	close(start)
	wg.Wait()
	stop.Store(true)
	side.Wait()

	byTag := func(name string) map[string]view.AggregationData {
		out := map[string]view.AggregationData{}
		for _, r := range rows(t, name) {
			out[fmt.Sprint(r.Tags)] = r.Data
		}
		return out
	}
	counts := byTag("conc/count")
	if got := counts["[{a hot}]"].(*view.CountData).Value; got != goroutines*(perG+perG/100) {
		t.Errorf("hot count %d; want %d", got, goroutines*(perG+perG/100))
	}
	if got := counts["[{a fresh}]"].(*view.CountData).Value; got != goroutines*perG/100 {
		t.Errorf("fresh count %d; want %d", got, goroutines*perG/100)
	}
	for g := range goroutines {
		if got := counts[fmt.Sprintf("[{a g%d}]", g)].(*view.CountData).Value; got != perG {
			t.Errorf("g%d count %d; want %d", g, got, perG)
		}
	}
	wantHotSum := float64(goroutines) * (float64(perG*(perG-1)/2) + 3*perG/100)
	if got := byTag("conc/sum")["[{a hot}]"].(*view.SumData).Value; got != wantHotSum {
		t.Errorf("hot sum %v; want %v", got, wantHotSum)
	}
	d := byTag("conc/dist")["[{a hot} {b b}]"].(*view.DistributionData)
	if d.Count != goroutines*perG || d.Min != 0 || d.Max != perG-1 ||
		fmt.Sprint(d.CountPerBucket) != fmt.Sprint([]int64{goroutines * 10, goroutines * 90, goroutines * 900, goroutines * 1000}) {
		t.Errorf("hot distribution %+v", d)
	}
	if !near(d.Mean, float64(perG-1)/2) {
		t.Errorf("hot mean %v; want %v", d.Mean, float64(perG-1)/2)
	}
}

func TestCardinalityLimit(t *testing.T) {
	m := stats.Int64("limit/m", "", "")
	v := &view.View{Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{keyA}, CardinalityLimit: 100}
	register(t, v)
	// A million distinct values: memory stays bounded by the limit, and
	// every recorded unit is in some row.
	n := 1_000_000
	if testing.Short() {
		n = 10_000
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		if err := stats.RecordWithTags(context.Background(), []tag.Mutator{tag.Upsert(keyA, strconv.Itoa(i))}, m.M(1)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	// The stated bound: the view keeps 100 series and the overflow row,
	// whatever the number of distinct values: under 1 MiB of heap growth.
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 1<<20 {
		t.Errorf("heap grew by %d bytes over %d distinct values; want under 1 MiB", grown, n)
	}
	rs := rows(t, v.Name)
	if len(rs) != 101 {
		t.Fatalf("%d rows; want 100 and the overflow row", len(rs))
	}
	last := rs[len(rs)-1]
	if !last.IsOverflow() || len(last.Tags) != 1 || last.Tags[0].Key != keyA || last.Tags[0].Value != view.OverflowValue {
		t.Errorf("last row %v; want the overflow row, {a %s}", last, view.OverflowValue)
	}
	for _, r := range rs[:len(rs)-1] {
		if r.IsOverflow() {
			t.Fatalf("row %v says it is the overflow row", r)
		}
	}
	var total float64
	for _, r := range rs {
		total += r.Data.(*view.SumData).Value
	}
	if total != float64(n) {
		t.Errorf("rows add up to %v; want %d", total, n)
	}
}

func TestDefaultCardinalityLimit(t *testing.T) {
	view.SetDefaultCardinalityLimit(3)
	defer view.SetDefaultCardinalityLimit(view.DefaultCardinalityLimit)
	m := stats.Int64("limit/default", "", "")
	limited := &view.View{Name: "limit/default", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyA}}
	unlimited := &view.View{Name: "limit/none", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyA}, CardinalityLimit: -1}
	register(t, limited, unlimited)
	for i := range 10 {
		ctx := ctxWith(t, tag.Upsert(keyA, fmt.Sprint(i)))
		stats.Record(ctx, m.M(1))
	}
	if n := len(rows(t, limited.Name)); n != 4 {
		t.Errorf("default-limited view: %d rows; want 3 and the overflow row", n)
	}
	if n := len(rows(t, unlimited.Name)); n != 10 {
		t.Errorf("unlimited view: %d rows; want 10", n)
	}
}

// TestNoReportAfterUnregister: once Unregister has sent a view's final
// report, no periodic report of it follows (found by the migration
// example's tests: 208 late reports in 507,779 cycles before the fix).
func TestNoReportAfterUnregister(t *testing.T) {
	m := stats.Int64("late/m", "", "")
	var mu sync.Mutex
	reports := map[string]int{}
	e := &exporterFunc{f: func(d *view.Data) {
		mu.Lock()
		reports[d.View.Name]++
		mu.Unlock()
	}}
	view.SetReportingPeriod(50 * time.Microsecond)
	defer view.SetReportingPeriod(0)
	view.RegisterExporter(e)
	defer view.UnregisterExporter(e)
	n := 2000
	if testing.Short() {
		n = 200
	}
	for i := range n {
		v := &view.View{Name: fmt.Sprint("late/", i), Measure: m, Aggregation: view.Count()}
		if err := view.Register(v); err != nil {
			t.Fatal(err)
		}
		stats.Record(context.Background(), m.M(1))
		view.Unregister(v)
		mu.Lock()
		reports[v.Name] = -1_000_000 // any later report makes it >= -999,999
		mu.Unlock()
	}
	time.Sleep(5 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for name, c := range reports {
		if c != -1_000_000 {
			t.Errorf("%s reported %d times after its final report", name, c+1_000_000)
		}
	}
}

type exporterFunc struct{ f func(*view.Data) }

func (e *exporterFunc) ExportView(d *view.Data) { e.f(d) }

type funcExporter func(*view.Data)

func (f funcExporter) ExportView(d *view.Data) { f(d) }

func TestUncomparableExporterDoesNotPanic(t *testing.T) {
	// A func-typed exporter cannot be compared: OpenCensus panics on it.
	// It can be registered, and receives reports, but never unregistered.
	// A meter of its own, never started, sends no periodic report (the
	// default meter's, at whatever period another test left, would add
	// to the count): only Unregister's final ones.
	m := stats.Int64("export/uncomparable", "", "")
	v := &view.View{Measure: m, Aggregation: view.Count()}
	meter := view.NewMeter()
	if err := meter.Register(v); err != nil {
		t.Fatal(err)
	}
	var got atomic.Int64
	f := funcExporter(func(d *view.Data) {
		if d.View == v {
			got.Add(1)
		}
	})
	meter.RegisterExporter(f) // no panic
	meter.RegisterExporter(f) // cannot be found: added again, no panic
	stats.RecordWithOptions(context.Background(), stats.WithRecorder(meter), stats.WithMeasurements(m.M(1)))
	meter.Unregister(v) // the final report is synchronous
	if n := got.Load(); n != 2 {
		t.Errorf("the uncomparable exporter got %d final reports; want 2 (registered twice)", n)
	}
	meter.UnregisterExporter(f) // not found: a no-op, not a panic
	view.RegisterExporter(f)    // the default meter's too
	view.UnregisterExporter(f)
	e := &exporterFunc{f: func(*view.Data) {}}
	view.RegisterExporter(e)
	view.UnregisterExporter(e)
	view.RegisterExporter(nil)
	view.UnregisterExporter(nil)
}

func TestSumOfExactlyZero(t *testing.T) {
	m := stats.Float64("sum/zero", "", "")
	register(t, &view.View{Measure: m, Aggregation: view.Distribution(1)})
	for _, v := range []float64{0.1, 0.1, -0.2} {
		stats.Record(context.Background(), m.M(v))
	}
	if s := rows(t, "sum/zero")[0].Data.(*view.DistributionData).Sum(); s != 0 {
		t.Errorf("Sum() = %v; want the running sum, exactly 0", s)
	}
}

// TestReRegisterConcurrentWithReaders: registering an equal view again
// while exporters read the registered one must not write to it (-race),
// and is a no-op: no error, the first view stays, its rows are kept.
func TestReRegisterConcurrentWithReaders(t *testing.T) {
	m := stats.Int64("rereg/m", "", "") // an empty description
	v := &view.View{Name: "rereg/v", Measure: m, Aggregation: view.Count()}
	register(t, v)
	stats.Record(context.Background(), m.M(1))
	var wg sync.WaitGroup
	var regErrs, wrongFinds atomic.Int64
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range 1000 {
			if view.Register(v) != nil || view.Register(&view.View{Name: "rereg/v", Measure: m, Aggregation: view.Count()}) != nil {
				regErrs.Add(1)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range 1000 {
			if f := view.Find("rereg/v"); f != v || f.Description != "" {
				wrongFinds.Add(1)
			}
		}
	}()
	wg.Wait()
	if regErrs.Load() != 0 || wrongFinds.Load() != 0 {
		t.Errorf("%d re-registrations failed, %d finds saw another view or a description", regErrs.Load(), wrongFinds.Load())
	}
	if rs := rows(t, "rereg/v"); len(rs) != 1 || rs[0].Data.(*view.CountData).Value != 1 {
		t.Errorf("rows %v; want the one record, kept through re-registration", rs)
	}
}

// TestIssue11BucketRule: values on a bound count in the bucket above it
// with Distribution (OpenCensus) and in the bucket the bound closes with
// DistributionUpperInclusive (Prometheus's le, OTel's explicit bounds).
func TestIssue11BucketRule(t *testing.T) {
	m := stats.Float64("agg/bucketrule", "", "")
	oc := &view.View{Name: "rule/oc", Measure: m, Aggregation: view.Distribution(1, 5, 10, 50)}
	up := &view.View{Name: "rule/upper", Measure: m, Aggregation: view.DistributionUpperInclusive(1, 5, 10, 50)}
	// Over 16 bounds the search is binary: check that path too.
	var many []float64
	for i := 1; i <= 20; i++ {
		many = append(many, float64(i))
	}
	upMany := &view.View{Name: "rule/upper_many", Measure: m, Aggregation: view.DistributionUpperInclusive(many...)}
	register(t, oc, up, upMany)
	for _, v := range []float64{5, 10, 50, math.Nextafter(5, 6), math.NaN(), math.Inf(-1), math.Inf(1)} {
		stats.Record(context.Background(), m.M(v))
	}
	for _, tc := range []struct {
		name, want string
	}{
		{"rule/oc", "[1 0 2 1 3]"},    // -Inf | 5, 5+ε | 10 | 50, NaN, +Inf
		{"rule/upper", "[1 1 2 1 2]"}, // -Inf | 5 | 5+ε, 10 | 50 | NaN, +Inf
	} {
		d := rows(t, tc.name)[0].Data.(*view.DistributionData)
		if got := fmt.Sprint(d.CountPerBucket); got != tc.want || d.Count != 7 {
			t.Errorf("%s: buckets %s count %d; want %s, 7", tc.name, got, d.Count, tc.want)
		}
		if fmt.Sprint(d.Bounds()) != "[1 5 10 50]" {
			t.Errorf("%s: bounds %v; want the registered [1 5 10 50]", tc.name, d.Bounds())
		}
	}
	d := rows(t, "rule/upper_many")[0].Data.(*view.DistributionData)
	want := make([]int64, 21)
	want[0] = 1                         // -Inf
	want[4], want[5], want[9] = 1, 1, 1 // 5 in (4,5], 5+ε in (5,6], 10 in (9,10]
	want[20] = 3                        // 50, NaN, +Inf
	if fmt.Sprint(d.CountPerBucket) != fmt.Sprint(want) {
		t.Errorf("rule/upper_many: buckets %v; want %v", d.CountPerBucket, want)
	}
	// The rule is part of what a view aggregates: another rule under the
	// same name is a different view.
	if err := view.Register(&view.View{Name: "rule/oc", Measure: m, Aggregation: view.DistributionUpperInclusive(1, 5, 10, 50)}); err == nil {
		t.Error("registering rule/oc again with the other bucket rule succeeded")
	}
}

// TestIssue15UpperInclusiveZeroBound: DistributionUpperInclusive keeps a
// zero bound (OTel's first default bucket (-Inf, 0]) and accepts negative
// bounds; Distribution still drops zero and rejects negatives (OpenCensus).
func TestIssue15UpperInclusiveZeroBound(t *testing.T) {
	m := stats.Float64("agg/zerobound", "", "")
	up := &view.View{Name: "zero/upper", Measure: m, Aggregation: view.DistributionUpperInclusive(-1, 0, 5)}
	oc := &view.View{Name: "zero/oc", Measure: m, Aggregation: view.Distribution(0, 5)}
	register(t, up, oc)
	for _, v := range []float64{-2, -1, -0.5, 0, 0.5, 5, 6} {
		stats.Record(context.Background(), m.M(v))
	}
	d := rows(t, "zero/upper")[0].Data.(*view.DistributionData)
	if got := fmt.Sprint(d.Bounds(), d.CountPerBucket); got != "[-1 0 5] [2 2 2 1]" {
		t.Errorf("zero/upper: bounds and buckets %s; want [-1 0 5] [2 2 2 1]", got)
	}
	d = rows(t, "zero/oc")[0].Data.(*view.DistributionData)
	if got := fmt.Sprint(d.Bounds(), d.CountPerBucket); got != "[5] [5 2]" {
		t.Errorf("zero/oc: bounds and buckets %s; want [5] [5 2]", got)
	}
	err := view.Register(&view.View{Name: "zero/neg", Measure: m, Aggregation: view.Distribution(-1, 5)})
	if !errors.Is(err, view.ErrNegativeBucketBounds) {
		t.Errorf("Distribution(-1, 5): %v; want ErrNegativeBucketBounds", err)
	}
}

// blockingExporter blocks its first ExportView until release is closed,
// having closed entered.
type blockingExporter struct {
	once             sync.Once
	entered, release chan struct{}
	unregistered     atomic.Bool // UnregisterExporter returned
	calledAfter      atomic.Bool // an ExportView began after that
}

func (e *blockingExporter) ExportView(*view.Data) {
	if e.unregistered.Load() {
		e.calledAfter.Store(true)
	}
	e.once.Do(func() {
		close(e.entered)
		<-e.release
	})
}

// TestUnregisterExporterWaitsForReport: once UnregisterExporter returns,
// no report calls the exporter (issue 12, item 7: before, it returned
// while a report was still calling it, so UnregisterExporter(e);
// e.Close() could write to a closed connection).
func TestUnregisterExporterWaitsForReport(t *testing.T) {
	m := stats.Int64("export/wait", "", "")
	register(t, &view.View{Measure: m, Aggregation: view.Count()})
	stats.Record(context.Background(), m.M(1))
	e := &blockingExporter{entered: make(chan struct{}), release: make(chan struct{})}
	view.SetReportingPeriod(time.Millisecond)
	defer view.SetReportingPeriod(0)
	view.RegisterExporter(e)
	<-e.entered // a report is calling e
	released := false
	defer func() {
		if !released {
			close(e.release) // let the report end, or cleanup would wait for it
		}
	}()
	done := make(chan struct{})
	go func() {
		view.UnregisterExporter(e)
		e.unregistered.Store(true)
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("UnregisterExporter returned while a report was calling the exporter")
	case <-time.After(time.Second): // still waiting, as it should
	}
	close(e.release)
	released = true
	<-done
	if e.calledAfter.Load() {
		t.Error("ExportView called after UnregisterExporter returned")
	}
}

// TestUnregisteredViewsReleaseTheirStrings: per-tenant views registered
// and unregistered by the thousand leave no interned strings behind (issue
// 12, item 9: 20,000 cycles left 40,000).
func TestUnregisteredViewsReleaseTheirStrings(t *testing.T) {
	m := stats.Int64("tenant/m", "", "")
	cycle := func(i int) {
		v := &view.View{Name: fmt.Sprint("tenant/", i), Description: fmt.Sprint("tenant ", i, " requests"),
			Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{tag.MustNewKey(fmt.Sprint("tenant_key_", i))}}
		if err := view.Register(v); err != nil {
			t.Fatal(err)
		}
		stats.Record(context.Background(), m.M(1))
		view.Unregister(v)
	}
	cycle(-1) // warm up
	runtime.GC()
	before := core.InternedLive()
	const n = 2000
	for i := range n {
		cycle(i)
	}
	// Cleanups run after a collection, on a goroutine of their own.
	deadline := time.Now().Add(10 * time.Second)
	for core.InternedLive() > before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := core.InternedLive(); got > before {
		t.Errorf("%d strings interned after %d register/unregister cycles; want at most %d, as before them", got, n, before)
	}
}

// TestOverflowRowMapsOntoViewKeys: an OpenCensus-era exporter that maps
// row tags onto View.TagKeys handles the overflow row, in RetrieveData and
// in what view.Exporter receives (issue 12, item 8: its one tag,
// otel.metric.overflow, was not a view key, and the mapping indexed out
// of range).
func TestOverflowRowMapsOntoViewKeys(t *testing.T) {
	m := stats.Int64("limit/ockeys", "", "")
	v := &view.View{Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyB, keyA}, CardinalityLimit: 2}
	register(t, v)
	for i := range 5 {
		stats.Record(ctxWith(t, tag.Upsert(keyA, fmt.Sprint(i)), tag.Upsert(keyB, "b")), m.M(1))
	}
	var got [][]string
	var total int64
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("OpenCensus's tag mapping panicked on a row: %v", p)
			}
		}()
		for _, r := range rows(t, v.Name) {
			got = append(got, ocmap.TagValues(r.Tags, v.TagKeys))
			total += r.Data.(*view.CountData).Value
		}
	}()
	func() { // the mapping fails on a tag outside the keys, as the old overflow row had
		defer func() {
			if recover() == nil {
				t.Error("ocTagValues accepted a tag that is not a view key: this test could not fail")
			}
		}()
		ocmap.TagValues([]tag.Tag{{Key: view.OverflowKey, Value: "true"}}, v.TagKeys)
	}()
	want := [][]string{{"0", "b"}, {"1", "b"}, {view.OverflowValue, view.OverflowValue}}
	if fmt.Sprint(got) != fmt.Sprint(want) || total != 5 {
		t.Errorf("mapped rows %q (total %d); want %q (total 5)", got, total, want)
	}
}

// TestInt64SumIsExact: a Sum view over an Int64 measure adds exactly (see
// docs/migrating-from-opencensus.md), where OpenCensus's float64 additions
// lose each 1 added to 2^53; a Float64 measure keeps float64 additions.
func TestInt64SumIsExact(t *testing.T) {
	for _, isInt := range []bool{true, false} {
		name := fmt.Sprintf("test/int64-sum-exact/%v", isInt)
		var m stats.Measure
		var rec func(v int64) stats.Measurement
		if isInt {
			im := stats.Int64(name, "", stats.UnitDimensionless)
			m, rec = im, im.M
		} else {
			fm := stats.Float64(name, "", stats.UnitDimensionless)
			m, rec = fm, func(v int64) stats.Measurement { return fm.M(float64(v)) }
		}
		v := &view.View{Name: name, Measure: m, Aggregation: view.Sum()}
		if err := view.Register(v); err != nil {
			t.Fatal(err)
		}
		stats.Record(context.Background(), rec(1<<53))
		for range 3 {
			stats.Record(context.Background(), rec(1))
		}
		rows, err := view.RetrieveData(name)
		if err != nil || len(rows) != 1 {
			t.Fatalf("RetrieveData(%q) = %v, %v", name, rows, err)
		}
		// 2^53+3 rounds to 2^53+4; each float64 addition of 1 to 2^53 rounds
		// back to 2^53.
		want := float64(1<<53 + 4)
		if !isInt {
			want = 1 << 53
		}
		if got := rows[0].Data.(*view.SumData).Value; got != want {
			t.Errorf("Int64 measure %v: sum %v; want %v", isInt, got, want)
		}
		view.Unregister(v)
	}
}
