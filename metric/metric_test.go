package metric_test

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/internal/viewtest"
	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/selfstats"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
)

var keyQueue = tag.MustNewKey("queue")

// testTimeout is the collect timeout of the tests that expect callbacks to
// return: seconds, so that a loaded machine stalling a goroutine does not
// fail them (CONTRIBUTING.md).
const testTimeout = 10 * time.Second

func TestMain(m *testing.M) {
	metric.SetTimeout(testTimeout)
	os.Exit(m.Run())
}

func TestGaugeTagsAndPrometheus(t *testing.T) {
	var n atomic.Int64
	n.Store(3)
	g := metric.MustNewGauge("test/queue_length", "Jobs waiting", stats.UnitDimensionless,
		[]tag.Key{keyQueue}, func(o *metric.Observer) {
			o.Observe(float64(n.Load()), "a")
			o.Observe(7, "b")
		})
	defer g.Unregister()
	metric.Collect()
	if got := viewtest.Rows(t, "test/queue_length"); got["queue=a"] != 3 || got["queue=b"] != 7 || len(got) != 2 {
		t.Fatalf("rows: got %v; want a:3 b:7", got)
	}
	n.Store(5)
	out := string(prometheus.NewHandler(prometheus.Options{}).AppendFormat(nil, prometheus.FormatText))
	for _, want := range []string{"# TYPE test_queue_length gauge", `test_queue_length{queue="a"} 5`, `test_queue_length{queue="b"} 7`} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q:\n%s", want, out)
		}
	}
	if err := g.Err(); err != nil {
		t.Errorf("Err: got %v; want nil", err)
	}
}

func TestCounterFollowsTotals(t *testing.T) {
	var total atomic.Int64
	c := metric.MustNewCounter("test/jobs_done", "Jobs done", stats.UnitDimensionless, nil,
		func(o *metric.Observer) { o.Observe(float64(total.Load())) })
	defer c.Unregister()
	for _, v := range []int64{0, 5, 5, 8, 2 /* reset */, 10} {
		total.Store(v)
		metric.Collect()
		if got := viewtest.Rows(t, "test/jobs_done")[""]; got != float64(v) {
			t.Fatalf("after total %d: got %v", v, got)
		}
	}
	out := string(prometheus.NewHandler(prometheus.Options{}).AppendFormat(nil, prometheus.FormatText))
	if !strings.Contains(out, "# TYPE test_jobs_done_total counter") || !strings.Contains(out, "test_jobs_done_total 10") {
		t.Errorf("scrape lacks the counter:\n%s", out)
	}
}

func TestRegisterErrors(t *testing.T) {
	if _, err := metric.NewGauge("test/nilfn", "", "1", nil, nil); err == nil {
		t.Error("nil callback: got nil error")
	}
	g := metric.MustNewGauge("test/taken", "", "1", nil, func(o *metric.Observer) {})
	defer g.Unregister()
	if _, err := metric.NewCounter("test/taken", "", "1", nil, func(o *metric.Observer) {}); err == nil {
		t.Error("name of a different view: got nil error")
	}
}

func TestBadObservations(t *testing.T) {
	g := metric.MustNewGauge("test/bad_obs", "", "1", []tag.Key{keyQueue}, func(o *metric.Observer) {
		o.Observe(1, "a", "extra")   // more values than keys: dropped
		o.Observe(2, "bad\x01value") // invalid tag value: dropped
		o.Observe(3, "ok")
	})
	defer g.Unregister()
	metric.Collect()
	if got := viewtest.Rows(t, "test/bad_obs"); len(got) != 1 || got["queue=ok"] != 3 {
		t.Errorf("rows: got %v; want ok:3 only", got)
	}
	if err := g.Err(); !errors.Is(err, metric.ErrBadObservation) {
		t.Errorf("Err: got %v; want ErrBadObservation", err)
	}
}

// failures returns zerostat/callback_failures by "callback=...,reason=...".
func failures(t *testing.T) map[string]float64 {
	t.Helper()
	selfstats.RecordViews()
	return viewtest.Rows(t, "zerostat/callback_failures")
}

func TestPanicDoesNotStopSnapshot(t *testing.T) {
	if err := selfstats.Register(); err != nil {
		t.Fatal(err)
	}
	defer selfstats.Unregister()
	good := metric.MustNewGauge("test/good", "", "1", nil, func(o *metric.Observer) { o.Observe(42) })
	defer good.Unregister()
	bad := metric.MustNewGauge("test/panics", "", "1", nil, func(o *metric.Observer) {
		o.Observe(1)
		panic("boom")
	})
	defer bad.Unregister()
	out := string(prometheus.NewHandler(prometheus.Options{}).AppendFormat(nil, prometheus.FormatText))
	if !strings.Contains(out, "test_good 42") {
		t.Errorf("scrape lacks the good gauge:\n%s", out)
	}
	if strings.Contains(out, "test_panics 1") {
		t.Errorf("scrape has the value of a callback that panicked:\n%s", out)
	}
	if err := bad.Err(); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Err: got %v; want the panic", err)
	}
	metric.Collect()
	if got := failures(t)["callback=test/panics,reason=panic"]; got != 2 {
		t.Errorf("callback_failures{test/panics,panic}: got %v; want 2", got)
	}
}

func TestBlockedCallbackIsBounded(t *testing.T) {
	if err := selfstats.Register(); err != nil {
		t.Fatal(err)
	}
	defer selfstats.Unregister()
	metric.SetTimeout(time.Second) // expected to expire: only bounds the test
	defer metric.SetTimeout(testTimeout)
	release, returned := make(chan struct{}), make(chan struct{})
	var calls atomic.Int64
	stuck := metric.MustNewGauge("test/stuck", "", "1", nil, func(o *metric.Observer) {
		calls.Add(1)
		o.Observe(1)
		<-release
	})
	defer stuck.Unregister()
	good := metric.MustNewGauge("test/good2", "", "1", nil, func(o *metric.Observer) { o.Observe(9) })
	defer good.Unregister()

	h := prometheus.NewHandler(prometheus.Options{})
	for i := 0; i < 2; i++ { // the second finds the first run still stuck
		out := string(h.AppendFormat(nil, prometheus.FormatText))
		if !strings.Contains(out, "test_good2 9") || strings.Contains(out, "test_stuck 1") {
			t.Fatalf("scrape %d: want test_good2 9 and no test_stuck:\n%s", i+1, out)
		}
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("stuck callback started %d times; want 1", got)
	}
	if got := failures(t)["callback=test/stuck,reason=timeout"]; got != 2 {
		t.Errorf("callback_failures{test/stuck,timeout}: got %v; want 2", got)
	}
	if err := stuck.Err(); err == nil {
		t.Error("Err: got nil; want the timeout")
	}
	go func() { release <- struct{}{}; close(returned) }()
	<-returned
}

func TestCollectConcurrentSafe(t *testing.T) {
	var total atomic.Int64
	c := metric.MustNewCounter("test/conc", "", "1", []tag.Key{keyQueue}, func(o *metric.Observer) {
		o.Observe(float64(total.Add(1)), "q")
	})
	defer c.Unregister()
	h := prometheus.NewHandler(prometheus.Options{})
	const goroutines, each = 4, 25
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; i < each; i++ {
				if g%2 == 0 {
					metric.Collect()
				} else {
					h.AppendFormat(nil, prometheus.FormatText)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	if got := viewtest.Rows(t, "test/conc")["queue=q"]; got != goroutines*each {
		t.Errorf("counter: got %v; want %d (one run per snapshot)", got, goroutines*each)
	}
}

// BenchmarkCollect is a snapshot's cost of n trivial callback gauges.
func BenchmarkCollect(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run("callbacks="+strconv.Itoa(n), func(b *testing.B) {
			for i := 0; i < n; i++ {
				g := metric.MustNewGauge("bench/gauge_"+strconv.Itoa(i), "", "1", []tag.Key{keyQueue},
					func(o *metric.Observer) { o.Observe(1, "q") })
				defer g.Unregister()
			}
			b.ReportAllocs()
			for b.Loop() {
				metric.Collect()
			}
		})
	}
}
