package metric_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// summaryRows reads a summary view's rows as "tags: count sum [values]".
func summaryRows(t *testing.T, name string) map[string]string {
	t.Helper()
	rows, err := view.RetrieveData(name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		d, ok := r.Data.(*view.SummaryData)
		if !ok {
			t.Fatalf("%s: %T", name, r.Data)
		}
		var tags []string
		for _, tg := range r.Tags {
			tags = append(tags, tg.Key.Name()+"="+tg.Value)
		}
		out[strings.Join(tags, ",")] = fmt.Sprint(d.Count, " ", d.Sum, " ", d.Values)
	}
	return out
}

// TestSummaryCallback: a callback summary's rows are what the callback
// observed at the last snapshot, replaced whole each time; a row it stops
// reporting keeps its last value; the Prometheus scrape shows a summary;
// Unregister removes the view and stops the callback.
func TestSummaryCallback(t *testing.T) {
	var n atomic.Int64
	n.Store(1)
	var drop atomic.Bool
	s, err := metric.NewSummary("test/pauses", "Pauses", "s", []float64{0, 0.5, 1}, []tag.Key{keyQueue}, func(o *metric.SummaryObserver) {
		k := float64(n.Load())
		o.Observe(uint64(k), 2*k, []float64{k / 10, k / 5, k / 2}, "a")
		if !drop.Load() {
			o.Observe(0, 0, []float64{math.NaN(), math.NaN(), math.NaN()}) // no tag values: the row without tags
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Unregister()
	if s.View().Aggregation.Type != view.AggTypeSummary || !slices.Equal(s.View().Aggregation.Quantiles, []float64{0, 0.5, 1}) {
		t.Fatalf("view %+v", s.View())
	}
	metric.Collect()
	if got := summaryRows(t, "test/pauses"); len(got) != 2 || got["queue=a"] != "1 2 [0.1 0.2 0.5]" || got[""] != "0 0 [NaN NaN NaN]" {
		t.Fatalf("rows %q", got)
	}
	n.Store(3)
	drop.Store(true)
	out := string(prometheus.NewHandler(prometheus.Options{}).AppendFormat(nil, prometheus.FormatText))
	for _, want := range []string{
		"# HELP test_pauses_seconds Pauses\n# TYPE test_pauses_seconds summary\n",
		`test_pauses_seconds{quantile="0.0"} NaN` + "\n",
		`test_pauses_seconds{queue="a",quantile="0.0"} 0.3` + "\n" +
			`test_pauses_seconds{queue="a",quantile="0.5"} 0.6` + "\n" +
			`test_pauses_seconds{queue="a",quantile="1.0"} 1.5` + "\n" +
			`test_pauses_seconds_sum{queue="a"} 6` + "\n" +
			`test_pauses_seconds_count{queue="a"} 3` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q:\n%s", want, out)
		}
	}
	if got := summaryRows(t, "test/pauses"); got[""] != "0 0 [NaN NaN NaN]" {
		t.Errorf("a row no longer reported: %q; want its last value", got[""])
	}
	if err := s.Err(); err != nil {
		t.Errorf("Err: %v", err)
	}
	s.Unregister()
	if _, err := view.RetrieveData("test/pauses"); err == nil {
		t.Error("the view is still registered after Unregister")
	}
	metric.Collect() // the callback is no longer called (nothing to check but no panic)
}

// TestSummaryBadObservations: a row with more tag values than keys, a
// values count other than the quantiles', or an invalid tag value is
// dropped and reported (ErrBadObservation, naming the counts), never a
// panic; the good rows go in.
func TestSummaryBadObservations(t *testing.T) {
	s := metric.MustNewSummary("test/summary_bad", "", "1", []float64{0.5, 0.9}, []tag.Key{keyQueue}, func(o *metric.SummaryObserver) {
		o.Observe(1, 1, []float64{1, 2}, "a", "extra") // too many tag values
		o.Observe(1, 1, []float64{1}, "b")             // one value for two quantiles
		o.Observe(1, 1, []float64{1, 2, 3}, "c")       // three
		o.Observe(1, 1, []float64{1, 2}, "bad\x01")    // invalid tag value
		o.Observe(4, 8, []float64{1, 2}, "ok")
	})
	defer s.Unregister()
	metric.Collect()
	if got := summaryRows(t, "test/summary_bad"); len(got) != 1 || got["queue=ok"] != "4 8 [1 2]" {
		t.Errorf("rows %q; want ok only", got)
	}
	err := s.Err()
	if !errors.Is(err, metric.ErrBadObservation) {
		t.Fatalf("Err: %v; want ErrBadObservation", err)
	}
	// The last report is the invalid tag value; the earlier ones were
	// reported first (the callback counts them all).
	if !strings.Contains(err.Error(), "invalid tag value") {
		t.Errorf("Err: %v", err)
	}
	s2 := metric.MustNewSummary("test/summary_bad2", "", "1", []float64{0.5, 0.9}, nil, func(o *metric.SummaryObserver) {
		o.Observe(1, 1, []float64{1, 2, 3})
	})
	defer s2.Unregister()
	metric.Collect()
	if err := s2.Err(); err == nil || !strings.Contains(err.Error(), "1 rows with a values count other than its 2 quantiles (the last: 3) were dropped") {
		t.Errorf("Err: %v", err)
	}
	if _, err := metric.NewSummary("test/summary_bad3", "", "1", []float64{0.5, 0.5}, nil, func(*metric.SummaryObserver) {}); err == nil ||
		err.Error() != `metric "test/summary_bad3": view "test/summary_bad3": cannot register: summary quantile 0.5 is repeated` {
		t.Errorf("repeated quantile: %v", err)
	}
	if _, err := metric.NewSummary("test/summary_bad", "", "1", []float64{0.5}, nil, func(*metric.SummaryObserver) {}); err == nil {
		t.Error("a summary of other quantiles took a registered name")
	}
}

// TestSummaryConcurrentCollectsAndReads: snapshots (Collect and
// Prometheus scrapes) on several goroutines while others read the rows
// (RetrieveData); the callback's k-th run observes count k, sum 2k and
// values k, k+0.5, k+1, so every read must be one run's whole value.
// Run under -race. After the snapshots, the row is the last run's
// exactly.
func TestSummaryConcurrentCollectsAndReads(t *testing.T) {
	var runs atomic.Int64
	s := metric.MustNewSummary("test/summary_conc", "", "1", []float64{0.1, 0.5, 0.9}, []tag.Key{keyQueue}, func(o *metric.SummaryObserver) {
		k := float64(runs.Add(1))
		o.Observe(uint64(k), 2*k, []float64{k, k + 0.5, k + 1}, "q")
	})
	defer s.Unregister()
	h := prometheus.NewHandler(prometheus.Options{})
	const collectors, each = 4, 25
	var stop atomic.Bool
	var bad atomic.Int64
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for !stop.Load() {
				rows, err := view.RetrieveData("test/summary_conc")
				if err != nil {
					bad.Add(1)
					return
				}
				for _, r := range rows {
					d := r.Data.(*view.SummaryData)
					k := float64(d.Count)
					if d.Sum != 2*k || !slices.Equal(d.Values, []float64{k, k + 0.5, k + 1}) {
						bad.Add(1)
					}
				}
			}
		})
	}
	var wg sync.WaitGroup
	for g := range collectors {
		wg.Go(func() {
			for range each {
				if g%2 == 0 {
					metric.Collect()
				} else {
					h.AppendFormat(nil, prometheus.FormatText)
				}
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	readers.Wait()
	if n := bad.Load(); n != 0 {
		t.Errorf("%d reads saw a mixed value", n)
	}
	total := runs.Load()
	if total != collectors*each {
		t.Errorf("%d runs; want one per snapshot, %d", total, collectors*each)
	}
	k := float64(total)
	if got := summaryRows(t, "test/summary_conc")["queue=q"]; got != fmt.Sprint(total, " ", 2*k, " ", []float64{k, k + 0.5, k + 1}) {
		t.Errorf("last row %q; want run %d's", got, total)
	}
}
