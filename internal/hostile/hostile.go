package hostile

import (
	"context"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// Bounds are both Distribution views' bounds; the values recorded lie on
// each of them.
var Bounds = []float64{1, 5, 10, 50}

// Workload is a registered and recorded hostile workload.
type Workload struct {
	// NS is the prefix of every view name ("NS/…") and of every series
	// name zerostat's Prometheus paths give ("NS_…").
	NS string
	// Consts are constant labels: env holds a quote, a backslash and a
	// newline; job and instance name the sender as remote write sets them.
	Consts map[string]string
	// Description is the requests view's: a newline, a backslash, quotes.
	Description string
	// First and Refused are the colliding views, NS/col.x and NS/col_x
	// (one Prometheus name, NS_col_x_total). First is registered earlier
	// and counts 12 recordings; Refused counts another measure's 2, so a
	// value says which one a path kept. zerostat's Prometheus paths keep
	// First and refuse Refused with an error naming both.
	First, Refused string
	// Views are every view registered, in registration order.
	Views []*view.View
}

// Register registers the workload's views under ns and records it. The
// views are unregistered when t ends. It takes a few milliseconds: the
// later of the colliding views is registered at a later instant, which is
// what decides which one a Namer keeps.
func Register(t testing.TB, ns string) *Workload {
	t.Helper()
	w := &Workload{
		NS:          ns,
		Consts:      map[string]string{"env": "a\"b\\c\nd", "job": "zerostat", "instance": "test"},
		Description: "line one\nline two \\ \"quoted\"",
		First:       ns + "/col.x",
		Refused:     ns + "/col_x",
	}
	register := func(vs ...*view.View) {
		t.Helper()
		if err := view.Register(vs...); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { view.Unregister(vs...) })
		w.Views = append(w.Views, vs...)
	}
	m := stats.Float64(ns+"/m", "A measure", stats.UnitSeconds)
	route := tag.MustNewKey("route")
	register(
		&view.View{Name: ns + "/requests", Description: w.Description, Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{route}},
		&view.View{Name: ns + "/lat_oc", Measure: m, Aggregation: view.Distribution(Bounds...), TagKeys: []tag.Key{route}},
		&view.View{Name: ns + "/lat_le", Measure: m, Aggregation: view.DistributionUpperInclusive(Bounds...), TagKeys: []tag.Key{route}},
		&view.View{Name: ns + "/total", Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{route}},
		&view.View{Name: ns + "/last", Measure: m, Aggregation: view.LastValue(), TagKeys: []tag.Key{route}},
		&view.View{Name: w.First, Measure: m, Aggregation: view.Count()},
	)
	neg := stats.Float64(ns+"/neg", "", stats.UnitDimensionless)
	time.Sleep(2 * time.Millisecond) // a later registration: the second of the colliding views
	register(&view.View{Name: w.Refused, Measure: neg, Aggregation: view.Count()})
	odd := stats.Float64(ns+"/odd", "", stats.UnitDimensionless)
	register(
		&view.View{Name: ns + "/balance", Measure: neg, Aggregation: view.Sum()},
		&view.View{Name: ns + "/balance_dist", Measure: neg, Aggregation: view.Distribution(0)},
		&view.View{Name: ns + "/odd_last", Measure: odd, Aggregation: view.LastValue()},
		&view.View{Name: ns + "/odd_sum", Measure: odd, Aggregation: view.Sum()},
	)
	pinf := stats.Float64(ns+"/pinf", "", stats.UnitDimensionless)
	ninf := stats.Float64(ns+"/ninf", "", stats.UnitDimensionless)
	register(
		&view.View{Name: ns + "/pinf_sum", Measure: pinf, Aggregation: view.Sum()},
		&view.View{Name: ns + "/ninf_last", Measure: ninf, Aggregation: view.LastValue()},
	)
	for _, r := range []string{"/a", `/b"\q`} {
		ctx, err := tag.New(context.Background(), tag.Upsert(route, r))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []float64{0, 1, 5, 10, 50, 51} { // on every bound
			stats.Record(ctx, m.M(v))
		}
	}
	stats.Record(context.Background(), neg.M(2), neg.M(-5))
	stats.Record(context.Background(), odd.M(math.Inf(1)))             // the sum becomes +Inf
	stats.Record(context.Background(), odd.M(math.NaN()))              // the last value NaN, the sum NaN
	stats.Record(context.Background(), pinf.M(1), pinf.M(math.Inf(1))) // the sum +Inf
	stats.Record(context.Background(), ninf.M(math.Inf(-1)))           // the last value -Inf
	return w
}

// Want returns recorded values of the workload's series, by Key, as
// zerostat's Prometheus paths name them (bounds spelled le="1.0"), each
// with the labels in labels (the constant labels a path adds), and values
// as Prometheus spells them. It covers counts, both bucket rules on
// values placed on every bound (0, 1, 5, 10, 50, 51), a sum, a last
// value, a negative sum, NaN, +Inf and -Inf, and which colliding view was kept.
func (w *Workload) Want(labels map[string]string) map[string]string {
	ns := w.NS
	with := func(name string, ls ...string) string {
		m := map[string]string{}
		for k, v := range labels {
			m[k] = v
		}
		for i := 0; i+1 < len(ls); i += 2 {
			m[ls[i]] = ls[i+1]
		}
		return Key(name, m)
	}
	return map[string]string{
		with(ns+"_requests_total", "route", "/a"):                      "6",
		with(ns+"_requests_total", "route", `/b"\q`):                   "6",
		with(ns+"_lat_oc_seconds_bucket", "le", "1.0", "route", "/a"):  "1", // OpenCensus's rule: v < b
		with(ns+"_lat_oc_seconds_bucket", "le", "10.0", "route", "/a"): "3",
		with(ns+"_lat_le_seconds_bucket", "le", "1.0", "route", "/a"):  "2", // v <= b
		with(ns+"_lat_le_seconds_bucket", "le", "10.0", "route", "/a"): "4",
		with(ns+"_lat_le_seconds_bucket", "le", "+Inf", "route", "/a"): "6",
		with(ns+"_lat_le_seconds_sum", "route", "/a"):                  "117",
		with(ns+"_seconds_total", "route", "/a"):                       "117", // "total" is the _total suffix (otlptranslator's rule)
		with(ns+"_last_seconds", "route", "/a"):                        "51",
		with(ns + "_balance_total"):                                    "-3",
		with(ns + "_odd_last"):                                         "NaN",
		with(ns + "_odd_sum_total"):                                    "NaN",
		with(ns + "_pinf_sum_total"):                                   "+Inf",
		with(ns + "_ninf_last"):                                        "-Inf",
		with(ns + "_col_x_total"):                                      "12", // col.x, registered first
	}
}

// Key names a series: name{k="v",…}, labels sorted, values quoted
// (strconv.Quote), leaving out __name__, job and instance (which each path
// sets its own way).
func Key(name string, labels map[string]string) string {
	var ls []string
	for k, v := range labels {
		if k != "job" && k != "instance" && k != "__name__" {
			ls = append(ls, k+"="+strconv.Quote(v))
		}
	}
	sort.Strings(ls)
	return name + "{" + strings.Join(ls, ",") + "}"
}
