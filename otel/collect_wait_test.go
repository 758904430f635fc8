package otel_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"

	zotel "github.com/zerostat/zerostat/otel"

	"github.com/zerostat/zerostat/internal/core"
	zmetric "github.com/zerostat/zerostat/metric"
)

// blockingGauge registers a gauge whose first callback run (a snapshot's)
// signals entered and waits for release; later runs observe level at
// once.
func blockingGauge(t *testing.T, p *zotel.MeterProvider, level *float64, entered, release chan struct{}) {
	t.Helper()
	var once sync.Once
	m := p.Meter("m")
	if _, err := m.Float64ObservableGauge("g", metric.WithFloat64Callback(func(_ context.Context, o metric.Float64Observer) error {
		first := false
		once.Do(func() { first = true })
		if first {
			close(entered)
			<-release
			o.Observe(1)
			return nil
		}
		o.Observe(*level)
		return nil
	})); err != nil {
		t.Fatal(err)
	}
}

// TestCollectWaitsForSnapshotRun: MeterProvider.Collect, called while a
// snapshot runs a callback, waits for that run to end, then runs the
// callback itself: it returns no error and the view holds the value the
// callback observed last.
func TestCollectWaitsForSnapshotRun(t *testing.T) {
	p := newProvider(t)
	level := 5.0
	entered, release := make(chan struct{}), make(chan struct{})
	blockingGauge(t, p, &level, entered, release)
	zmetric.SetTimeout(30 * time.Second) // the snapshot waits for its run
	defer zmetric.SetTimeout(0)
	snap := make(chan struct{})
	go func() { defer close(snap); zmetric.Collect() }()
	<-entered
	waited := false
	zotel.SetCollectWaitHook(func() { waited = true; close(release) })
	defer zotel.SetCollectWaitHook(nil)
	if err := p.Collect(ctx); err != nil {
		t.Errorf("Collect while a snapshot runs the callback: %v; want it to wait and run it", err)
	}
	<-snap
	if !waited {
		t.Error("Collect did not wait: the callback was not running")
	}
	check(t, "gauge", rowsOf(t, p, "g"), ": 5")
}

// TestCollectLeavesOutStuckCallback: a callback a snapshot still runs is
// waited for no longer than Collect's context allows, then reported by
// name and left out.
func TestCollectLeavesOutStuckCallback(t *testing.T) {
	p := newProvider(t)
	level := 5.0
	entered, release := make(chan struct{}), make(chan struct{})
	blockingGauge(t, p, &level, entered, release)
	snap := make(chan struct{})
	go func() { defer close(snap); zmetric.Collect() }()
	<-entered
	done, cancel := context.WithCancel(ctx)
	cancel()
	err := p.Collect(done)
	close(release)
	<-snap
	if err == nil || !strings.Contains(err.Error(), "still running since a snapshot") || !strings.Contains(err.Error(), "g") {
		t.Errorf("Collect with a stuck callback and a done context: %v; want the callback named as left out", err)
	}
}

// TestSlowCallbackStallsNoSnapshot (issue 41, item 1): while a provider's
// Collect runs one of its callbacks that blocks, a snapshot (what every
// exporter and scrape takes) waits for that callback at most the collect
// timeout, reports it late, and applies the provider's other callbacks
// and returns. Before, Collect held the provider's collect lock while the
// callback ran, and the snapshot's apply of the other callbacks took that
// lock under core's collect lock: every exporter's snapshot waited for
// the slow callback.
func TestSlowCallbackStallsNoSnapshot(t *testing.T) {
	p := newProvider(t)
	m := p.Meter("m")
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	if _, err := m.Float64ObservableGauge("slow", metric.WithFloat64Callback(func(_ context.Context, o metric.Float64Observer) error {
		once.Do(func() { close(entered); <-release })
		o.Observe(1)
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	fast := 0.0
	if _, err := m.Float64ObservableGauge("fast", metric.WithFloat64Callback(func(_ context.Context, o metric.Float64Observer) error {
		fast++
		o.Observe(fast)
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	// The snapshot gives up on the slow callback after this; the fast one
	// returns well within it even on a loaded machine.
	zmetric.SetTimeout(2 * time.Second)
	defer zmetric.SetTimeout(0)
	collected := make(chan error, 1)
	go func() { collected <- p.Collect(ctx) }() // runs slow first, and blocks in it
	<-entered
	snap := make(chan struct{})
	go func() { defer close(snap); zmetric.Collect() }()
	select {
	case <-snap:
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("a snapshot waited for a slow callback that a Collect runs, past 30 s; the collect timeout is 2 s")
	}
	if got := rowsOf(t, p, "fast"); len(got) != 1 || got[0] == ": 0" {
		t.Errorf("the fast callback's value after the snapshot: %v; want it applied", got)
	}
	late := uint64(0)
	for _, c := range core.Callbacks() {
		if c.Name == "otel:slow" {
			late += c.Timeouts()
		}
	}
	if late == 0 {
		t.Error("the slow callback is not counted late")
	}
	close(release)
	if err := <-collected; err != nil {
		t.Errorf("Collect: %v", err)
	}
	check(t, "slow", rowsOf(t, p, "slow"), ": 1")
}
