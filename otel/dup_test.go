package otel_test

import (
	"strings"
	"testing"

	otelglobal "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/zerostat/zerostat/view"
)

// withHandler captures what the provider reports through otel.Handle.
func withHandler(t *testing.T) *handler {
	h := &handler{}
	otelglobal.SetErrorHandler(h)
	t.Cleanup(func() { otelglobal.SetErrorHandler(otelglobal.ErrorHandlerFunc(func(error) {})) })
	return h
}

// TestDuplicateRegistrationIsFunctional: the specification's duplicate
// instrument registration (sdk.md: the Meter MUST return a functional
// instrument; api.md: a valid instrument in every case). An instrument
// created again with another description, unit or advisory boundaries,
// or another casing of its name (names are case-insensitive), is the
// first one: its measurements count, under the first-seen name, unit,
// description and boundaries, and a warning names both definitions.
// Before, it was a no-op instrument and an error.
func TestDuplicateRegistrationIsFunctional(t *testing.T) {
	h := withHandler(t)
	p := newProvider(t)
	m := p.Meter("lib")
	a, err1 := m.Int64Counter("reqs", metric.WithDescription("first"), metric.WithUnit("{request}"))
	b, err2 := m.Int64Counter("reqs", metric.WithDescription("second"))
	c, err3 := p.Meter("other").Int64Counter("REQS", metric.WithDescription("first"), metric.WithUnit("{request}"))
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatalf("errors %v, %v, %v; want none", err1, err2, err3)
	}
	a.Add(ctx, 1)
	b.Add(ctx, 10)
	c.Add(ctx, 100)
	check(t, "reqs", rowsOf(t, p, "reqs"), ": 111")
	if vs := p.Views(); len(vs) != 1 || vs[0].Name != p.ViewName("Reqs") || !strings.HasSuffix(vs[0].Name, ".reqs") || vs[0].Description != "first" || vs[0].Measure.Unit() != "{request}" {
		t.Fatalf("views %+v; want one, reqs, with the first description and unit", vs)
	}
	h.mu.Lock()
	errs := h.errs
	h.mu.Unlock()
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), `created again as "reqs" with unit "", description "second"`) ||
		!strings.Contains(errs[1].Error(), `created again as "REQS"`) {
		t.Fatalf("warnings %v; want one per redefinition, naming it", errs)
	}

	// Advisory boundaries: the first-seen ones.
	_, _ = m.Float64Histogram("lat", metric.WithExplicitBucketBoundaries(1, 2, 3))
	hist, err := m.Float64Histogram("lat", metric.WithExplicitBucketBoundaries(10, 20))
	if err != nil {
		t.Fatal(err)
	}
	hist.Record(ctx, 2)
	check(t, "lat", rowsOf(t, p, "lat"), ": n=1 min=2 max=2 sum=2 [0 1 0 0]")

	// Another kind or number type cannot share the name's view: an error
	// naming both, and the specification's no-op.
	for _, f := range []func() error{
		func() error { _, err := m.Float64Counter("reqs"); return err },
		func() error { _, err := m.Int64Histogram("Reqs"); return err },
	} {
		if err := f(); err == nil || !strings.Contains(err.Error(), `already created as Counter (int64) "reqs"`) {
			t.Errorf("another kind or number type: error %v; want one naming the first", err)
		}
	}
	if _, err := view.RetrieveData(p.ViewName("reqs")); err != nil {
		t.Fatal(err)
	}
}
