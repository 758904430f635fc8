package otel_test

// Corner cases of the metrics API, side by side with the OTel SDK v1.47.0
// (issue 42, items 1 to 5): the same calls on both, the same data out
// (the conformance harness: fromSDK, fromOTLP, diff), and the same errors
// where the SDK returns one.

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	zotel "github.com/zerostat/zerostat/otel"
)

// sides is one SDK provider and one zerostat provider, with what each
// exports.
type sides struct {
	t      *testing.T
	sdk    metric.Meter
	zs     metric.Meter
	reader *sdkmetric.ManualReader
	zsP    *zotel.MeterProvider
	prefix string
}

func newSides(t *testing.T) *sides {
	reader := sdkmetric.NewManualReader()
	sdkP := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { sdkP.Shutdown(context.Background()) })
	prefix := strings.ReplaceAll(t.Name(), "/", ".") + "."
	zsP := zotel.NewMeterProvider(zotel.WithViewPrefix(prefix))
	t.Cleanup(func() { zsP.Shutdown(context.Background()) })
	return &sides{t: t, sdk: sdkP.Meter("corners"), zs: zsP.Meter("corners"), reader: reader, zsP: zsP, prefix: prefix}
}

// collect returns both sides' data.
func (s *sides) collect() (sdk, zs map[string]*nmetric) {
	s.t.Helper()
	if err := s.zsP.Collect(ctx); err != nil {
		s.t.Logf("zerostat Collect: %v", err)
	}
	var rm metricdata.ResourceMetrics
	if err := s.reader.Collect(ctx, &rm); err != nil {
		s.t.Logf("SDK Collect: %v", err)
	}
	enc, err := otlp.NewEncoder(otlp.Cumulative, exporter.Resource{})
	if err != nil {
		s.t.Fatal(err)
	}
	return fromSDK(&rm), fromOTLP(s.t, enc.Encode(time.Now()), s.prefix)
}

// same fails unless both sides exported the same data, but for the
// names in skip.
func (s *sides) same(what string) {
	s.t.Helper()
	sdk, zs := s.collect()
	h := &history{lastGauge: map[string]float64{}, lifeMin: map[string]float64{}}
	if errs := diff(sdk, zs, false, h); len(errs) > 0 {
		s.t.Errorf("%s: %d differences:\n%s", what, len(errs), strings.Join(errs, "\n"))
	}
}

// TestCornersInvalidNames (item 1): a name outside OTel's syntax is an
// error on both sides, and the instrument records and exports anyway, as
// the SDK's does, when a view can carry the name. Before, zerostat's was a
// no-op. Names no view carries (empty, non-ASCII, over 255 bytes) make no
// instrument in zerostat: the documented difference.
func TestCornersInvalidNames(t *testing.T) {
	s := newSides(t)
	for _, name := range []string{"9lives", "with space", "cost$", "a+b"} {
		sc, serr := s.sdk.Int64Counter(name)
		zc, zerr := s.zs.Int64Counter(name)
		if serr == nil || zerr == nil {
			t.Fatalf("%q: errors SDK %v, zerostat %v; want both", name, serr, zerr)
		}
		sc.Add(ctx, 3)
		zc.Add(ctx, 3)
	}
	s.same("invalid names")
	for _, name := range []string{"", "café", strings.Repeat("x", 256)} {
		zc, err := s.zs.Int64Counter(name)
		if err == nil {
			t.Errorf("%.20q: no error", name)
		}
		zc.Add(ctx, 1) // a no-op, not a panic
	}
}

// TestCornersHistogramBounds (item 2): no bounds given at all is the
// default bounds (before: one bucket); unsorted or repeated bounds are an
// error from the instrument's creation and the defaults are used (before:
// nil, and only a log); on both sides alike.
func TestCornersHistogramBounds(t *testing.T) {
	s := newSides(t)
	cases := []struct {
		name    string
		bounds  []float64
		wantErr bool
	}{
		{"empty", []float64{}, false},
		{"unsorted", []float64{5, 1, 10}, true},
		{"repeated", []float64{1, 1, 2}, true},
		{"given", []float64{0.5, 2}, false},
	}
	for _, c := range cases {
		sh, serr := s.sdk.Float64Histogram(c.name, metric.WithExplicitBucketBoundaries(c.bounds...))
		zh, zerr := s.zs.Float64Histogram(c.name, metric.WithExplicitBucketBoundaries(c.bounds...))
		if (serr != nil) != c.wantErr || (zerr != nil) != c.wantErr {
			t.Errorf("%s: errors SDK %v, zerostat %v; want an error: %v", c.name, serr, zerr, c.wantErr)
		}
		for _, v := range []float64{0.3, 1, 3, 7, 600} {
			sh.Record(ctx, v)
			zh.Record(ctx, v)
		}
	}
	s.same("histogram bounds")
	// Non-finite bounds: an error and the defaults in zerostat (the SDK
	// uses them: the documented difference).
	if _, err := s.zs.Float64Histogram("inf", metric.WithExplicitBucketBoundaries(1, math.Inf(1))); err == nil {
		t.Error("a +Inf bound: no error")
	}
}

// TestCornersNaNHistogram (item 3): a histogram that recorded only NaN
// exports min and max NaN, as the SDK does; never min above max (before:
// +Inf and -Inf).
func TestCornersNaNHistogram(t *testing.T) {
	s := newSides(t)
	sh, _ := s.sdk.Float64Histogram("nan")
	zh, _ := s.zs.Float64Histogram("nan")
	sh.Record(ctx, math.NaN())
	zh.Record(ctx, math.NaN())
	sdk, zs := s.collect()
	sp, zp := sdk["nan"].points[""], zs["nan"].points[""]
	if !math.IsNaN(sp.min) || !math.IsNaN(sp.max) {
		t.Fatalf("the SDK exports min %v max %v; the test expects NaN", sp.min, sp.max)
	}
	if !zp.hasMinMax || !math.IsNaN(zp.min) || !math.IsNaN(zp.max) || zp.count != sp.count {
		t.Errorf("zerostat exports %+v; want count %d, min and max NaN as the SDK's %+v", zp, sp.count, sp)
	}
}

// TestCornersObservedTwice (item 4): an observable counter observed twice
// for one attribute set in one callback reports the sum of the two (1,
// then 2: 3), as the SDK does (before: 2, the last); a gauge reports the
// last.
func TestCornersObservedTwice(t *testing.T) {
	s := newSides(t)
	set := attribute.NewSet(attribute.String("q", "a"))
	for _, m := range []metric.Meter{s.sdk, s.zs} {
		if _, err := m.Int64ObservableCounter("twice", metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(1, metric.WithAttributeSet(set))
			o.Observe(2, metric.WithAttributeSet(set))
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Float64ObservableUpDownCounter("twice.updown", metric.WithFloat64Callback(func(_ context.Context, o metric.Float64Observer) error {
			o.Observe(5, metric.WithAttributeSet(set))
			o.Observe(-2, metric.WithAttributeSet(set))
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Int64ObservableGauge("twice.gauge", metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(4, metric.WithAttributeSet(set))
			o.Observe(9, metric.WithAttributeSet(set))
			return nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		s.same("observed twice, collection " + string(rune('1'+round)))
	}
}

// TestCornersUnitsAfterShutdown (item 5): a provider made again after
// another's Shutdown, with the same instrument names and new units,
// exports the new units (before: the old ones).
func TestCornersUnitsAfterShutdown(t *testing.T) {
	prefix := t.Name() + "."
	old := zotel.NewMeterProvider(zotel.WithViewPrefix(prefix))
	c, _ := old.Meter("m").Int64Counter("bytes", metric.WithUnit("KiBy"))
	c.Add(ctx, 1)
	if err := old.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	s := newSidesPrefix(t, prefix)
	sc, _ := s.sdk.Int64Counter("bytes", metric.WithUnit("By"))
	zc, _ := s.zs.Int64Counter("bytes", metric.WithUnit("By"))
	sc.Add(ctx, 1024)
	zc.Add(ctx, 1024)
	s.same("after a Shutdown, new units")
}

func newSidesPrefix(t *testing.T, prefix string) *sides {
	reader := sdkmetric.NewManualReader()
	sdkP := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { sdkP.Shutdown(context.Background()) })
	zsP := zotel.NewMeterProvider(zotel.WithViewPrefix(prefix))
	t.Cleanup(func() { zsP.Shutdown(context.Background()) })
	return &sides{t: t, sdk: sdkP.Meter("corners"), zs: zsP.Meter("corners"), reader: reader, zsP: zsP, prefix: prefix}
}
