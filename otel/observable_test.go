package otel_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/zerostat/zerostat/exporter/prometheus"
	zmetric "github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/view"
)

// TestObservable: instrument callbacks and RegisterCallback run on
// Collect; counters record the difference of the totals observed.
func TestObservable(t *testing.T) {
	p := newProvider(t)
	m := p.Meter("m")
	var total int64 = 10
	a := metric.WithAttributes(attribute.String("q", "a"))
	cnt, err := m.Int64ObservableCounter("cnt", metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(total, a)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	gauge, _ := m.Float64ObservableGauge("gauge")
	ud, _ := m.Float64ObservableUpDownCounter("ud")
	level := 2.5
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveFloat64(gauge, level)
		o.ObserveFloat64(ud, -level, a)
		return nil
	}, gauge, ud)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	total, level = 25, 4
	if err := p.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	check(t, "counter", rowsOf(t, p, "cnt"), "q=a: 25")
	check(t, "gauge", rowsOf(t, p, "gauge"), ": 4")
	check(t, "up-down", rowsOf(t, p, "ud"), "q=a: -4")
	if !view.Find(p.ViewName("ud")).Aggregation.UpDown {
		t.Error("observable up-down counter is not an UpDownSum")
	}
	_ = cnt
	if err := reg.Unregister(); err != nil {
		t.Fatal(err)
	}
	level = 9
	p.Collect(ctx)
	check(t, "gauge after Unregister", rowsOf(t, p, "gauge"), ": 4")
}

// TestObservableErrors: a callback's error is returned, the other
// callbacks still run; observing an instrument the callback was not
// registered with is an error and dropped.
func TestObservableErrors(t *testing.T) {
	p := newProvider(t)
	m := p.Meter("m")
	g1, _ := m.Int64ObservableGauge("g1")
	g2, _ := m.Int64ObservableGauge("g2")
	boom := errors.New("boom")
	m.RegisterCallback(func(context.Context, metric.Observer) error { return boom }, g1)
	m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(g2, 7)
		o.ObserveInt64(g1, 1) // not registered with g1
		return nil
	}, g2)
	err := p.Collect(ctx)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "not registered") {
		t.Errorf("Collect: %v; want boom and the foreign observation", err)
	}
	check(t, "g2", rowsOf(t, p, "g2"), ": 7")
	if v := view.Find(p.ViewName("g1")); v != nil {
		t.Errorf("g1 has a view (%v); the foreign observation was recorded", v.Name)
	}
}

// TestCollectConcurrentSafe: Collects and records at once; the totals are
// exact.
func TestCollectConcurrentSafe(t *testing.T) {
	p := newProvider(t)
	m := p.Meter("m")
	var mu sync.Mutex
	var n int64
	m.Int64ObservableCounter("obs", metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
		mu.Lock()
		defer mu.Unlock()
		n++
		o.Observe(n)
		return nil
	}))
	c, _ := m.Int64Counter("c")
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			for range 100 {
				p.Collect(ctx)
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			for range 1000 {
				c.Add(ctx, 1)
			}
		}()
	}
	close(start)
	wg.Wait()
	check(t, "observed total", rowsOf(t, p, "obs"), ": 200")
	check(t, "counter", rowsOf(t, p, "c"), ": 2000")
}

// TestCallbacksRunOnSnapshots: a zerostat snapshot (here a Prometheus
// scrape) runs the provider's callbacks itself, with no Collect call;
// one that blocks or panics loses its values of that snapshot and stops
// neither the scrape nor the other callbacks; MeterProvider.Collect,
// running concurrently, does not race, waits for the stuck callback no
// longer than the collect timeout, and leaves the latest observations in
// the views.
func TestCallbacksRunOnSnapshots(t *testing.T) {
	p := newProvider(t)
	m := p.Meter("m")
	var mu sync.Mutex
	level, total := 2.5, int64(7)
	set := func(l float64, n int64) { mu.Lock(); level, total = l, n; mu.Unlock() }
	gauge, err := m.Float64ObservableGauge("level", metric.WithFloat64Callback(func(_ context.Context, o metric.Float64Observer) error {
		mu.Lock()
		defer mu.Unlock()
		o.Observe(level)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Int64ObservableCounter("jobs", metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
		mu.Lock()
		defer mu.Unlock()
		o.Observe(total, metric.WithAttributes(attribute.String("q", "a")))
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	stuck := make(chan struct{}, 1)
	if _, err := m.Float64ObservableGauge("stuck", metric.WithFloat64Callback(func(_ context.Context, o metric.Float64Observer) error {
		o.Observe(1)
		select {
		case stuck <- struct{}{}:
		default:
		}
		<-release
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Float64ObservableGauge("panics", metric.WithFloat64Callback(func(context.Context, metric.Float64Observer) error {
		panic("boom")
	})); err != nil {
		t.Fatal(err)
	}
	// The stuck callback holds the first scrape for the collect timeout:
	// 3 s, so that on a loaded machine the others have returned by then.
	zmetric.SetTimeout(3 * time.Second)
	defer zmetric.SetTimeout(0)
	h := prometheus.NewHandler(prometheus.Options{})
	scrape := func() string { return string(h.AppendFormat(nil, prometheus.FormatText)) }
	prefix := strings.NewReplacer(".", "_").Replace(p.ViewName(""))
	out := scrape()
	<-stuck
	for _, want := range []string{prefix + "level 2.5\n", prefix + `jobs_total{q="a"} 7` + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("first scrape lacks %q; got:\n%s", want, out)
		}
	}
	for _, gone := range []string{prefix + "stuck", prefix + "panics"} {
		if strings.Contains(out, gone+" ") {
			t.Errorf("first scrape has %s; want it left out", gone)
		}
	}
	set(4, 19)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the callbacks' own Collect, beside the scrape
		defer wg.Done()
		p.Collect(context.Background())
	}()
	out = scrape()
	wg.Wait()
	for _, want := range []string{prefix + "level 4\n", prefix + `jobs_total{q="a"} 19` + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("second scrape lacks %q; got:\n%s", want, out)
		}
	}
	check(t, "counter after a scrape and a Collect", rowsOf(t, p, "jobs"), "q=a: 19")
	_ = gauge
}
