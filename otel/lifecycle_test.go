package otel_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/metric"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	zotel "github.com/zerostat/zerostat/otel"
	"github.com/zerostat/zerostat/view"
)

// TestShutdownKeepsSharedView (issue 41, item 6): two providers without a
// prefix that create the same instrument share one view; one provider's
// Shutdown leaves it to the other, whose instrument keeps recording, and
// the last one's Shutdown unregisters it. Before, the first Shutdown
// unregistered the view by name, and the other provider's instrument
// recorded into nothing while Enabled still said true.
func TestShutdownKeepsSharedView(t *testing.T) {
	const name = "shared.lifecycle.requests"
	p1, p2 := zotel.NewMeterProvider(), zotel.NewMeterProvider()
	defer p1.Shutdown(ctx)
	defer p2.Shutdown(ctx)
	c1, err1 := p1.Meter("a").Int64Counter(name)
	c2, err2 := p2.Meter("b").Int64Counter(name)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	c1.Add(ctx, 1)
	c2.Add(ctx, 10)
	check(t, "both providers", rowsOf(t, p2, name), ": 11")
	if err := p1.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	c1.Add(ctx, 100) // shut down: dropped
	c2.Add(ctx, 1000)
	if !c2.Enabled(ctx) {
		t.Error("the other provider's instrument is disabled")
	}
	check(t, "after one provider's Shutdown", rowsOf(t, p2, name), ": 1011")
	if err := p2.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := viewRows(p2.ViewName(name)); err == nil {
		t.Error("the view outlived the last provider that used it")
	}
}

// TestRegisterCallbackRefusesOtherProvidersInstrument (issue 41, item 9):
// a callback registered with one provider for an observable of another is
// refused for that instrument, with an error naming it (the OTel SDK
// refuses an instrument of another meter likewise), while the provider's
// own instruments of the same call are registered. Before, both providers
// wrote the instrument's state under different locks (a race the detector
// reports; it could crash with "concurrent map writes").
func TestRegisterCallbackRefusesOtherProvidersInstrument(t *testing.T) {
	p1, p2 := newProvider(t), newProvider(t)
	other, err := p2.Meter("b").Int64ObservableCounter("other")
	if err != nil {
		t.Fatal(err)
	}
	mine, err := p1.Meter("a").Int64ObservableCounter("mine")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := p1.Meter("a").RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(mine, 5)
		o.ObserveInt64(other, 7)
		return nil
	}, mine, other)
	if err == nil || !strings.Contains(err.Error(), `"other" was created by another MeterProvider`) {
		t.Fatalf("RegisterCallback with another provider's instrument: %v; want an error naming it", err)
	}
	if reg == nil {
		t.Fatal("no registration for the provider's own instrument")
	}
	defer reg.Unregister()
	// Both providers collect at once: nothing races (under -race).
	var wg sync.WaitGroup
	for _, p := range []*zotel.MeterProvider{p1, p2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_ = p.Collect(ctx)
			}
		}()
	}
	wg.Wait()
	check(t, "mine", rowsOf(t, p1, "mine"), ": 5")
	if rows, err := viewRows(p2.ViewName("other")); err == nil && len(rows) != 0 {
		t.Errorf("the other provider's instrument got %d rows from a callback it was refused to", len(rows))
	}
}

func viewRows(name string) ([]*view.Row, error) { return view.RetrieveData(name) }

// TestAttributeKeysCaseInsensitive (issue 41, item 12): instrument names
// are case-insensitive, and so is WithAttributeKeys's name and the
// semantic conventions' table: a key declared for "Reqs" is in the view
// of the instrument created as "reqs", and an instrument created as
// "HTTP.Server.Request.Duration" gets the convention's keys. Before, both
// were looked up case-sensitively, and the keys were missing from the
// view.
func TestAttributeKeysCaseInsensitive(t *testing.T) {
	p := newProvider(t, zotel.WithAttributeKeys("Reqs", "declared"))
	m := p.Meter("m")
	c, err := m.Int64Counter("reqs")
	if err != nil {
		t.Fatal(err)
	}
	c.Add(ctx, 1)
	h, err := m.Float64Histogram("HTTP.Server.Request.Duration")
	if err != nil {
		t.Fatal(err)
	}
	h.Record(ctx, 0.1)
	keys := map[string][]string{}
	for _, v := range p.Views() {
		for _, k := range v.TagKeys {
			keys[v.Name] = append(keys[v.Name], k.Name())
		}
	}
	if ks := keys[p.ViewName("reqs")]; !slices.Contains(ks, "declared") {
		t.Errorf("the view of reqs has keys %v; want the key declared for Reqs", ks)
	}
	if ks := keys[p.ViewName("http.server.request.duration")]; !slices.Contains(ks, "http.route") || !slices.Contains(ks, "http.response.status_code") {
		t.Errorf("the view of HTTP.Server.Request.Duration has keys %v; want the convention's", ks)
	}
}

// TestLowMemoryKeepsObservableCountersCumulative (issue 42, item 9): under
// the lowmemory temporality preference an observable counter (an
// asynchronous counter) is exported cumulatively and a counter as deltas,
// as the specification's table says; under delta both are deltas. Before,
// lowmemory made observable counters delta too.
func TestLowMemoryKeepsObservableCountersCumulative(t *testing.T) {
	for _, pref := range []exporter.TemporalityPreference{exporter.PreferLowMemory, exporter.PreferDelta} {
		p := newProvider(t, zotel.WithViewPrefix(t.Name()+"."+pref.String()+"."))
		m := p.Meter("m")
		total := int64(0)
		if _, err := m.Int64ObservableCounter("obs", metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			total += 5
			o.Observe(total)
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		c, err := m.Int64Counter("sync")
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var last []byte
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			last = b
			mu.Unlock()
		}))
		e, err := otlp.New(otlp.Options{Endpoint: srv.URL, TemporalityPreference: pref})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			c.Add(ctx, 1)
			if err := e.Export(ctx); err != nil {
				t.Fatal(err)
			}
		}
		srv.Close()
		mu.Lock()
		got := fromOTLP(t, last, p.ViewName(""))
		mu.Unlock()
		obs, syn := got["obs"], got["sync"]
		if obs == nil || syn == nil {
			t.Fatalf("%v: metrics %v", pref, got)
		}
		wantObs, wantValue := "cumulative", 10.0
		if pref == exporter.PreferDelta {
			wantObs, wantValue = "delta", 5
		}
		if obs.temporality != wantObs || !obs.monotonic || obs.points[""].value != wantValue {
			t.Errorf("%v: the observable counter is %s monotonic=%v with %v; want %s with %v", pref, obs.temporality, obs.monotonic, obs.points[""].value, wantObs, wantValue)
		}
		if syn.temporality != "delta" || syn.points[""].value != 1 {
			t.Errorf("%v: the counter is %s with %v; want delta with 1", pref, syn.temporality, syn.points[""].value)
		}
	}
}
