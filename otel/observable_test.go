package otel_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

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
