package remotewrite

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestSummarySeries: a summary view is written as the series Prometheus
// stores for a scraped summary (name{quantile="<q>"} per quantile, as the
// scrape handler spells it, _sum and _count, the series' labels sorted
// with "quantile" among them) with SUMMARY metadata; once its view is
// unregistered, each of those series gets a stale marker.
func TestSummarySeries(t *testing.T) {
	name := fmt.Sprintf("rwsum%d", seq.Add(1))
	m := stats.Float64(name+"/pause", "Pauses", stats.UnitSeconds)
	v := &view.View{Name: name + "/pause", Measure: m, Aggregation: view.Summary(0, 0.5, 0.99), TagKeys: []tag.Key{keyRoute}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	agg := core.FindView(v.Name).Agg
	mu := tag.Upsert(keyRoute, "/a")
	if err := agg.SetSummary((*core.Mutator)(&mu).Apply(nil), 4, 2.5, []float64{0.25, 0.5, math.NaN()}); err != nil {
		t.Fatal(err)
	}
	w := newWriter(t, Options{})
	ss, md, err := decodeWriteRequestMeta(w.AppendWriteRequest(nil, 1000))
	if err != nil {
		t.Fatal(err)
	}
	n := name + "_pause_seconds"
	want := []string{
		"__name__=" + n + ",quantile=0.0,route=/a 0.25",
		"__name__=" + n + ",quantile=0.5,route=/a 0.5",
		"__name__=" + n + ",quantile=0.99,route=/a NaN",
		"__name__=" + n + "_count,route=/a 4",
		"__name__=" + n + "_sum,route=/a 2.5",
	}
	if got := lines(ss, n); !slices.Equal(got, want) {
		t.Errorf("series %q; want %q", got, want)
	}
	i := slices.IndexFunc(md, func(x metadata) bool { return x.name == n })
	if i < 0 || md[i].typ != metaSummary || md[i].help != "Pauses" || md[i].unit != "seconds" {
		t.Errorf("metadata %+v; want %s a summary (type %d)", md, n, metaSummary)
	}
	view.Unregister(v)
	ss, err = decodeWriteRequest(w.AppendWriteRequest(nil, 2000))
	if err != nil {
		t.Fatal(err)
	}
	got := lines(ss, n)
	if len(got) != 5 {
		t.Fatalf("after unregistering: %q; want 5 stale markers", got)
	}
	for _, l := range got {
		if l[len(l)-len(" stale"):] != " stale" {
			t.Errorf("after unregistering: %q is not a stale marker", l)
		}
	}
}
