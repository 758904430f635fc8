package exporter

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// BenchmarkRecordUnderFault measures a record (a count with two tags,
// through a cached tag map) while an exporter runs every 20 ms, in delta,
// against a backend in each fault mode: healthy, down, answering 500, 429
// with Retry-After, slower than the timeout, resetting the connection
// mid-body. Timing is not asserted in a test (the VM is noisy); compare
// the modes with benchstat (docs/reliability.md has a run).
func BenchmarkRecordUnderFault(b *testing.B) {
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	downURL := "http://" + closed.Addr().String() + "/"
	closed.Close()
	k2 := tag.MustNewKey("method")
	for _, fault := range []string{"none", "down", "500", "429", "slow", "reset"} {
		b.Run("fault="+fault, func(b *testing.B) {
			backend := newFlakyBackend(b)
			name := fmt.Sprintf("faultbench/%d", faultSeq.Add(1))
			m := stats.Int64(name, "", "")
			v := &view.View{Name: name, Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, k2}}
			if err := view.Register(v); err != nil {
				b.Fatal(err)
			}
			defer view.Unregister(v)
			// 1,000 other series, so that each export has work to do.
			for i := range 1000 {
				ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, fmt.Sprint("/bg", i)), tag.Upsert(k2, "GET"))
				stats.Record(ctx, m.M(1))
			}
			sink := &HTTPSink{URL: backend.srv.URL + "/"}
			switch fault {
			case "down":
				sink.URL = downURL
			case "none":
			default:
				backend.mode.Set(fault)
			}
			e, err := New(sink, Options{Interval: 20 * time.Millisecond, Temporality: Delta, Timeout: 20 * time.Millisecond,
				Retry: Retry{InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			e.Start()
			ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, "/users"), tag.Upsert(k2, "GET"))
			// Wait for the first export to end (an event, not a sleep):
			// recording then runs beside exports in their steady state.
			for e.Stats().Exports == 0 {
				time.Sleep(time.Millisecond)
			}
			b.ReportAllocs()
			for b.Loop() {
				stats.Record(ctx, m.M(1))
			}
			b.StopTimer()
			stopCtx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			_ = e.Stop(stopCtx)
			s := e.Stats()
			if fault != "none" && s.Failures == 0 {
				b.Fatalf("fault %s was not felt: %+v", fault, s)
			}
			// A healthy run whose exports failed (a loaded machine missing
			// a 20 ms deadline) is not a sample of the healthy case: the
			// gate's rule on failed-exports re-measures it, rather than
			// this benchmark failing the build or passing as healthy.
			b.ReportMetric(float64(s.Exports), "exports")
			b.ReportMetric(float64(s.Failures), "failed-exports")
		})
	}
}
