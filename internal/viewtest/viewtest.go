// Package viewtest reads views for tests: a view's rows as a map from
// their tags ("k1=v1,k2=v2", keys by name, absent keys left out) to one
// number each, compared with Equal. For tests only; not safe to share a
// result between goroutines.
package viewtest

import (
	"context"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// Rows returns the rows of the registered view named name: a Count's or a
// Distribution's count, a Sum's sum, a LastValue's value.
func Rows(t testing.TB, name string) map[string]float64 {
	t.Helper()
	rows, err := view.RetrieveData(name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, r := range rows {
		var tags []string
		for _, tg := range r.Tags {
			tags = append(tags, tg.Key.Name()+"="+tg.Value)
		}
		k := strings.Join(tags, ",")
		switch d := r.Data.(type) {
		case *view.CountData:
			out[k] = float64(d.Value)
		case *view.DistributionData:
			out[k] = float64(d.Count)
		case *view.SumData:
			out[k] = d.Value
		case *view.LastValueData:
			out[k] = d.Value
		default:
			t.Fatalf("%s: row %v: unexpected %T", name, r.Tags, r.Data)
		}
	}
	return out
}

// Equal reports an error unless the view's rows are exactly want.
func Equal(t testing.TB, name string, want map[string]float64) {
	t.Helper()
	got := Rows(t, name)
	ok := len(got) == len(want)
	for k, v := range want {
		if g, has := got[k]; !has || g != v {
			ok = false
		}
	}
	if !ok {
		t.Errorf("%s: got %v; want %v", name, got, want)
	}
}

// Growable registers a Count view named name over an Int64 measure of its
// own, grouped by key "k", and makes its keys growable as the otel
// package does (core.Aggregator.MakeGrowable); grow adds keys to it
// (core.GrowView), record records 1 with tags kv ("key", "value", ...).
// The view is unregistered when the test ends. Not safe for concurrent
// use with another registration of name.
func Growable(t testing.TB, name string) (grow func(keys ...string), record func(kv ...string)) {
	t.Helper()
	m := stats.Int64(name+"/m", "", stats.UnitDimensionless)
	v := &view.View{Name: name, Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{tag.MustNewKey("k")}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	cv := core.FindView(name)
	if err := cv.Agg.MakeGrowable(); err != nil {
		t.Fatal(err)
	}
	grow = func(keys ...string) {
		t.Helper()
		if _, err := core.GrowView(cv, keys); err != nil {
			t.Fatal(err)
		}
	}
	record = func(kv ...string) {
		t.Helper()
		var muts []tag.Mutator
		for i := 0; i+1 < len(kv); i += 2 {
			muts = append(muts, tag.Upsert(tag.MustNewKey(kv[i]), kv[i+1]))
		}
		if err := stats.RecordWithTags(context.Background(), muts, m.M(1)); err != nil {
			t.Fatal(err)
		}
	}
	return grow, record
}
