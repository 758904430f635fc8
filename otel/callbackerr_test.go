package otel_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/exporter/wire"
	zmetric "github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/selfstats"
	"github.com/zerostat/zerostat/view"
)

// callbackInstruments creates, on mp, a gauge "ok" observed 5 and a gauge
// "bad" whose callback observes 3 and then returns boom.
func callbackInstruments(t *testing.T, mp metric.MeterProvider, boom error) {
	t.Helper()
	m := mp.Meter("m")
	if _, err := m.Int64ObservableGauge("ok", metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(5)
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Int64ObservableGauge("bad", metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(3)
		return boom
	})); err != nil {
		t.Fatal(err)
	}
}

// sdkGauges returns the SDK's gauges by name.
func sdkGauges(rm *metricdata.ResourceMetrics) map[string]int64 {
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if g, ok := m.Data.(metricdata.Gauge[int64]); ok && len(g.DataPoints) == 1 {
				out[m.Name] = g.DataPoints[0].Value
			}
		}
	}
	return out
}

type memExporter struct {
	mu      sync.Mutex
	exports int
}

func (e *memExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}
func (e *memExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}
func (e *memExporter) Export(context.Context, *metricdata.ResourceMetrics) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.exports++
	return nil
}
func (e *memExporter) ForceFlush(context.Context) error { return nil }
func (e *memExporter) Shutdown(context.Context) error   { return nil }

// TestCallbackErrorEveryPath (issue 42 item 6): a callback's error is
// reported on every path, as the SDK's reader reports it, and the
// snapshot still goes out with every value, the failing callback's
// observations included.
//   - the SDK: ManualReader.Collect returns the error with the data (both
//     gauges); its PeriodicReader exports nothing in that cycle (the
//     difference zerostat documents);
//   - zerostat: MeterProvider.Collect returns it; an export returns it
//     wrapping metric.ErrCallback and delivers both gauges; a scrape
//     passes it to otel.Handle and shows both; zerostat/callback_failures
//     counts each (reason=error).
func TestCallbackErrorEveryPath(t *testing.T) {
	boom := errors.New("boom: the device is gone")

	// The SDK, as the reference.
	reader := sdkmetric.NewManualReader()
	exp := &memExporter{}
	periodic := sdkmetric.NewPeriodicReader(exp)
	sdkP := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithReader(periodic))
	defer sdkP.Shutdown(context.Background())
	callbackInstruments(t, sdkP, boom)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); !errors.Is(err, boom) {
		t.Fatalf("SDK ManualReader.Collect: %v; want the callback's error", err)
	}
	if g := sdkGauges(&rm); g["ok"] != 5 || g["bad"] != 3 {
		t.Fatalf("SDK ManualReader data %v; want ok 5, bad 3", g)
	}
	if err := periodic.ForceFlush(ctx); !errors.Is(err, boom) {
		t.Errorf("SDK PeriodicReader.ForceFlush: %v; want the callback's error", err)
	}
	if exp.exports != 0 {
		t.Errorf("the SDK's PeriodicReader exported %d times in a cycle whose callback failed; the documented difference says 0", exp.exports)
	}

	// zerostat.
	if err := selfstats.Register(); err != nil {
		t.Fatal(err)
	}
	defer selfstats.Unregister()
	var handled []error
	var hmu sync.Mutex
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { hmu.Lock(); handled = append(handled, err); hmu.Unlock() }))
	defer otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	p := newProvider(t)
	callbackInstruments(t, p, boom)
	failures := func() int64 {
		selfstats.RecordViews()
		rows, err := view.RetrieveData("zerostat/callback_failures")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			var cb, reason string
			for _, tg := range r.Tags {
				switch tg.Key {
				case selfstats.KeyCallback:
					cb = tg.Value
				case selfstats.KeyReason:
					reason = tg.Value
				}
			}
			if strings.Contains(cb, "bad") && reason == "error" {
				return int64(r.Data.(*view.LastValueData).Value)
			}
		}
		return 0
	}

	// MeterProvider.Collect, as the SDK's reader.
	if err := p.Collect(ctx); !errors.Is(err, boom) {
		t.Errorf("MeterProvider.Collect: %v; want the callback's error", err)
	}
	check(t, "bad after Collect", rowsOf(t, p, "bad"), ": 3")
	if n := failures(); n != 1 {
		t.Errorf("callback_failures{reason=error} after Collect: %d; want 1", n)
	}

	// An export: the error, wrapping metric.ErrCallback, and both values.
	var buf bytes.Buffer
	e, err := exporter.New(&exporter.WriterSink{W: &buf}, exporter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = e.Export(ctx)
	if !errors.Is(err, zmetric.ErrCallback) || !errors.Is(err, boom) {
		t.Errorf("Export: %v; want metric.ErrCallback and the callback's error", err)
	}
	fr, err := wire.ReadFrame(bytes.NewReader(buf.Bytes()), nil, wire.MaxFrameSize)
	if err != nil {
		t.Fatalf("nothing delivered: %v", err)
	}
	pl, err := wire.Decode(fr)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, v := range pl.Views {
		if len(v.Rows) == 1 {
			got[v.Name] = v.Rows[0].Value
		}
	}
	if got[p.ViewName("ok")] != 5 || got[p.ViewName("bad")] != 3 {
		t.Errorf("exported %v; want %s 5 and %s 3", got, p.ViewName("ok"), p.ViewName("bad"))
	}
	if st := e.Stats(); st.Failures != 0 {
		t.Errorf("the export counted as failed (%+v): a callback's error is not the export's", st)
	}
	if n := failures(); n != 2 {
		t.Errorf("callback_failures{reason=error} after an export: %d; want 2", n)
	}

	// A scrape: otel.Handle, and both values.
	hmu.Lock()
	handled = nil
	hmu.Unlock()
	out := string(prometheus.NewHandler(prometheus.Options{}).AppendFormat(nil, prometheus.FormatText))
	prefix := strings.NewReplacer(".", "_").Replace(p.ViewName(""))
	for _, want := range []string{prefix + "ok 5\n", prefix + "bad 3\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	hmu.Lock()
	if len(handled) != 1 || !errors.Is(handled[0], boom) {
		t.Errorf("otel.Handle got %v; want the callback's error once", handled)
	}
	hmu.Unlock()
	if n := failures(); n != 3 {
		t.Errorf("callback_failures{reason=error} after a scrape: %d; want 3", n)
	}
}
