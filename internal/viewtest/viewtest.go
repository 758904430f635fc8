// Package viewtest reads views for tests: a view's rows as a map from
// their tags ("k1=v1,k2=v2", keys by name, absent keys left out) to one
// number each, compared with Equal. For tests only; not safe to share a
// result between goroutines.
package viewtest

import (
	"strings"
	"testing"

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
