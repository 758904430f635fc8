package view

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
)

// TestSummaryRegister: Register checks a summary's quantiles, naming the
// bad one; an equal summary registers again as a no-op, one of other
// quantiles is refused; the aggregator gets the quantiles (a copy).
func TestSummaryRegister(t *testing.T) {
	m := stats.Float64("viewtest/summary_reg", "", "s")
	for _, c := range []struct {
		q    []float64
		want string
	}{
		{[]float64{0.5, 2}, `view "viewtest/summary_bad": cannot register: summary quantile 2 is outside 0..1`},
		{[]float64{math.NaN()}, `view "viewtest/summary_bad": cannot register: summary quantile 1 of 1 is NaN`},
		{[]float64{0.5, 0.25}, `view "viewtest/summary_bad": cannot register: summary quantiles are not increasing: 0.25 after 0.5`},
		{[]float64{0.5, 0.5}, `view "viewtest/summary_bad": cannot register: summary quantile 0.5 is repeated`},
	} {
		err := Register(&View{Name: "viewtest/summary_bad", Measure: m, Aggregation: Summary(c.q...)})
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: %v; want %q", c.q, err, c.want)
		}
	}
	q := []float64{0, 0.5, 1}
	v := &View{Name: "viewtest/summary_reg", Measure: m, Aggregation: Summary(q...)}
	if err := Register(v); err != nil {
		t.Fatal(err)
	}
	defer Unregister(v)
	if err := Register(&View{Name: "viewtest/summary_reg", Measure: m, Aggregation: Summary(0, 0.5, 1)}); err != nil {
		t.Errorf("the same summary again: %v", err)
	}
	if err := Register(&View{Name: "viewtest/summary_reg", Measure: m, Aggregation: Summary(0, 0.5, 0.9)}); err == nil {
		t.Error("a summary of other quantiles took the name")
	}
	q[1] = 0.4 // the aggregator keeps its own copy
	if got := core.FindView("viewtest/summary_reg").Agg.Quantiles(); !slices.Equal(got, []float64{0, 0.5, 1}) {
		t.Errorf("aggregator's quantiles %v", got)
	}
	if AggTypeSummary.String() != "Summary" || AggTypeSummary != 6 {
		t.Errorf("AggTypeSummary %d %q", AggTypeSummary, AggTypeSummary.String())
	}
}

// TestSummaryRecordsIgnored: records of a summary view's measure do not
// reach it (it is not subscribed: no row appears), while another view of
// the same measure records them; its rows come from SetSummary, read by
// RetrieveData as SummaryData (the view's quantiles, the values, the
// row's start), and an exporter's view.Data carries them too.
func TestSummaryRecordsIgnored(t *testing.T) {
	m := stats.Float64("viewtest/summary_rec", "", "s")
	k := tag.MustNewKey("k")
	sv := &View{Name: "viewtest/summary_rec", Measure: m, Aggregation: Summary(0.5, 0.99), TagKeys: []tag.Key{k}}
	cv := &View{Name: "viewtest/summary_rec_count", Measure: m, Aggregation: Count()}
	if err := Register(sv, cv); err != nil {
		t.Fatal(err)
	}
	defer Unregister(sv, cv)
	ctx, _ := tag.New(context.Background(), tag.Upsert(k, "a"))
	for range 3 {
		stats.Record(ctx, m.M(1))
	}
	if err := stats.RecordWithTags(context.Background(), []tag.Mutator{tag.Upsert(k, "b")}, m.M(2)); err != nil {
		t.Fatal(err)
	}
	if rows, _ := RetrieveData(sv.Name); len(rows) != 0 {
		t.Errorf("records reached the summary: %d rows", len(rows))
	}
	if rows, _ := RetrieveData(cv.Name); len(rows) != 1 || rows[0].Data.(*CountData).Value != 4 {
		t.Errorf("the count view of the same measure: %v", rows)
	}
	agg := core.FindView(sv.Name).Agg
	before := time.Now()
	tags := (*core.Mutator)(new(tag.Upsert(k, "a"))).Apply(nil)
	if err := agg.SetSummary(tags, 7, 3.5, []float64{0.25, 1.5}); err != nil {
		t.Fatal(err)
	}
	rows, err := RetrieveData(sv.Name)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	d, ok := rows[0].Data.(*SummaryData)
	if !ok || d.Count != 7 || d.Sum != 3.5 || !slices.Equal(d.Quantiles, []float64{0.5, 0.99}) || !slices.Equal(d.Values, []float64{0.25, 1.5}) ||
		d.Start.Before(before.Add(-time.Second)) || !d.StartTime().Equal(d.Start) {
		t.Fatalf("data %#v", rows[0].Data)
	}
	if len(rows[0].Tags) != 1 || rows[0].Tags[0].Value != "a" {
		t.Errorf("tags %v", rows[0].Tags)
	}
	same := &SummaryData{Count: 7, Sum: 3.5, Quantiles: []float64{0.5, 0.99}, Values: []float64{0.25, 1.5}, Start: d.Start}
	if !d.equal(same) {
		t.Error("equal: false for the same data")
	}
	same.Values = []float64{0.25, 1.6}
	if d.equal(same) {
		t.Error("equal: true for other values")
	}
	if !(&SummaryData{Values: []float64{math.NaN()}}).equal(&SummaryData{Values: []float64{math.NaN()}}) {
		t.Error("equal: NaN values differ")
	}
	ClearStart(d)
	if !d.Start.IsZero() {
		t.Error("ClearStart left the start")
	}
	r, _ := defaultWorker.lookup(sv.Name)
	data := r.data(time.Now())
	if data.View.Aggregation.Type != AggTypeSummary || len(data.Rows) != 1 {
		t.Errorf("view.Data %+v", data)
	}
	if _, ok := data.Rows[0].Data.(*SummaryData); !ok {
		t.Errorf("view.Data row %T", data.Rows[0].Data)
	}
	if err := agg.SetSummary(tags, 1, 1, []float64{1}); err == nil || !strings.Contains(err.Error(), "1 quantile values for 2 quantiles") {
		t.Errorf("short values: %v", err)
	}
}
