package remotewrite

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/viewtest"
)

// TestGrownView: a view whose keys grew between two pushes (an otel
// instrument's) writes each series with its own labels, and the first
// push's series are not marked stale by the second: the successor view
// has the family's name.
func TestGrownView(t *testing.T) {
	grow, record := viewtest.Growable(t, "rwgrow/requests")
	w := newWriter(t, Options{})
	record("k", "a")
	if _, err := decodeWriteRequest(w.AppendWriteRequest(nil, 1000)); err != nil {
		t.Fatal(err)
	}
	grow("late")
	record("k", "a")
	record("k", "a", "late", "x")
	ss, err := decodeWriteRequest(w.AppendWriteRequest(nil, 2000))
	if err != nil {
		t.Fatal(err)
	}
	got := lines(ss, "rwgrow_")
	want := []string{"__name__=rwgrow_requests_total,k=a 2", "__name__=rwgrow_requests_total,k=a,late=x 1"}
	if !slices.Equal(got, want) {
		t.Errorf("series %q; want %q", got, want)
	}
}

// TestGrownViewStaleMarkers: a series the previous view sent and that is
// gone (evicted and freed) when its view grows gets its stale marker in
// the next push, as it would without the growth.
func TestGrownViewStaleMarkers(t *testing.T) {
	grow, record := viewtest.Growable(t, "rwgrowstale/requests")
	w := newWriter(t, Options{})
	record("k", "a")
	record("k", "b")
	if _, err := decodeWriteRequest(w.AppendWriteRequest(nil, 1000)); err != nil {
		t.Fatal(err)
	}
	grow("late")
	a := core.FindView("rwgrowstale/requests").Agg
	for _, s := range a.AppendSeries(nil) {
		if core.Interned()[s.ValueIDs()[0]] == "b" {
			s.Evict()
		}
	}
	a.Sweep() // no delta reader: freed
	record("k", "a", "late", "x")
	ss, err := decodeWriteRequest(w.AppendWriteRequest(nil, 2000))
	if err != nil {
		t.Fatal(err)
	}
	got := lines(ss, "rwgrowstale_")
	want := []string{"__name__=rwgrowstale_requests_total,k=a 1", "__name__=rwgrowstale_requests_total,k=a,late=x 1", "__name__=rwgrowstale_requests_total,k=b stale"}
	if !slices.Equal(got, want) {
		t.Errorf("series %q; want %q", got, want)
	}
}

// lines returns the series of ss named with prefix as "labels value"
// lines, sorted; a stale marker's value is "stale".
func lines(ss []series, prefix string) []string {
	var out []string
	for _, s := range only(ss, prefix) {
		var ls []string
		for _, l := range s.labels {
			ls = append(ls, l.name+"="+l.value)
		}
		v := strconv.FormatFloat(s.value, 'g', -1, 64)
		if math.Float64bits(s.value) == StaleNaN {
			v = "stale"
		}
		out = append(out, strings.Join(ls, ",")+" "+v)
	}
	slices.Sort(out)
	return out
}
