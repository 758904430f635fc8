package encode

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var recordSeq atomic.Int64

// counter registers a fresh count view keyed by 2 tags and returns its
// measure, a context holding the 2 tags (built once with tag.New), its
// name and a function that unregisters it.
func counter(tb testing.TB) (*stats.Int64Measure, context.Context, string, func()) {
	tb.Helper()
	name := fmt.Sprintf("bench/record_during_export/%d", recordSeq.Add(1))
	m := stats.Int64(name, "requests", stats.UnitDimensionless)
	keys := []tag.Key{tag.MustNewKey("method"), tag.MustNewKey("status")}
	v := &view.View{Name: name, Measure: m, Aggregation: view.Count(), TagKeys: slices.Clone(keys)}
	if err := view.Register(v); err != nil {
		tb.Fatalf("Register(%q): %v", name, err)
	}
	ctx, err := tag.New(context.Background(), tag.Upsert(keys[0], "GET"), tag.Upsert(keys[1], "200"))
	if err != nil {
		tb.Fatalf("tag.New: %v", err)
	}
	return m, ctx, name, func() { view.Unregister(v) }
}

// checkCount fails unless the view's single row counts want recordings.
func checkCount(tb testing.TB, name string, want int64) {
	tb.Helper()
	rows, err := view.RetrieveData(name)
	if err != nil {
		tb.Fatalf("RetrieveData(%q): %v", name, err)
	}
	if len(rows) != 1 || len(rows[0].Tags) != 2 {
		tb.Fatalf("view %q: got %d rows; want 1 with 2 tags", name, len(rows))
	}
	if got := rows[0].Data.(*view.CountData).Value; got != want {
		tb.Fatalf("view %q: got count %d; want %d", name, got, want)
	}
}

// exportLoop runs Export back to back on one goroutine until stopped.
type exportLoop struct {
	stop    atomic.Bool
	wg      sync.WaitGroup
	exports atomic.Int64
	err     atomic.Pointer[error]
}

// startExports starts exporting the registry (the fixture's 10,000 series
// and whatever else is registered) back to back.
func startExports(tb testing.TB, f *fixture) *exportLoop {
	tb.Helper()
	ex, err := newExporter(f.resource, func(exporter.Payload) {})
	if err != nil {
		tb.Fatal(err)
	}
	l := &exportLoop{}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		ctx := context.Background()
		for !l.stop.Load() {
			if err := ex.Export(ctx); err != nil {
				l.err.Store(&err)
				return
			}
			l.exports.Add(1)
		}
	}()
	return l
}

// count returns the number of exports done so far (0 for a nil loop).
func (l *exportLoop) count() int64 {
	if l == nil {
		return 0
	}
	return l.exports.Load()
}

// end stops the loop, waits for it and fails if an export failed.
func (l *exportLoop) end(tb testing.TB) {
	tb.Helper()
	l.stop.Store(true)
	l.wg.Wait()
	if p := l.err.Load(); p != nil {
		tb.Fatalf("Export: %v", *p)
	}
}

// BenchmarkRecordDuringExport records a counter with 2 tags from
// GOMAXPROCS goroutines (RunParallel) while, for export=on, another
// goroutine exports the 10,000-series registry back to back. On a machine
// with few cores the exporter also takes CPU time from the recorders;
// BenchmarkRecordDuringExportOneRecorder leaves it a core of its own.
func BenchmarkRecordDuringExport(b *testing.B) {
	f := getFixture(b)
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("export=%s", onOff(on)), func(b *testing.B) {
			m, ctx, name, unregister := counter(b)
			defer unregister()
			var loop *exportLoop
			if on {
				loop = startExports(b, f)
			}
			var total atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			exports0 := loop.count()
			b.RunParallel(func(pb *testing.PB) {
				n := int64(0)
				for pb.Next() {
					stats.Record(ctx, m.M(1))
					n++
				}
				total.Add(n)
			})
			exports := loop.count() - exports0
			b.StopTimer()
			if loop != nil {
				loop.end(b)
				b.ReportMetric(float64(exports)/b.Elapsed().Seconds(), "exports/s")
			}
			checkCount(b, name, total.Load())
		})
	}
}

// BenchmarkRecordDuringExportOneRecorder is BenchmarkRecordDuringExport
// with one recording goroutine (the benchmark's own), so that with
// GOMAXPROCS >= 2 the exporter runs beside it rather than in its place:
// what is left of the difference is interference (caches, memory, the
// registry), not CPU sharing.
func BenchmarkRecordDuringExportOneRecorder(b *testing.B) {
	f := getFixture(b)
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("export=%s", onOff(on)), func(b *testing.B) {
			m, ctx, name, unregister := counter(b)
			defer unregister()
			var loop *exportLoop
			if on {
				loop = startExports(b, f)
			}
			b.ReportAllocs()
			b.ResetTimer()
			exports0 := loop.count()
			for b.Loop() {
				stats.Record(ctx, m.M(1))
			}
			exports := loop.count() - exports0
			b.StopTimer()
			if loop != nil {
				loop.end(b)
				b.ReportMetric(float64(exports)/b.Elapsed().Seconds(), "exports/s")
			}
			checkCount(b, name, int64(b.N))
		})
	}
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// TestRecordDuringExport records from two goroutines while exports run
// back to back (for the race detector), then checks nothing was lost and
// the last export holds every row.
func TestRecordDuringExport(t *testing.T) {
	f := getFixture(t)
	m, ctx, name, unregister := counter(t)
	defer unregister()
	loop := startExports(t, f)
	const perGoroutine = 20000
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perGoroutine {
				stats.Record(ctx, m.M(1))
			}
		}()
	}
	wg.Wait()
	for loop.exports.Load() == 0 && loop.err.Load() == nil {
		runtime.Gosched() // let at least one export finish
	}
	loop.end(t)
	checkCount(t, name, 2*perGoroutine)

	var payload []byte
	ex, err := newExporter(f.resource, func(p exporter.Payload) { payload = append(payload[:0], p.Data...) })
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, err := wire.Decode(payload)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.checkWire(p); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.Views, func(v wire.View) bool { return v.Name == name })
	if i < 0 || len(p.Views[i].Rows) != 1 || p.Views[i].Rows[0].Count != 2*perGoroutine {
		t.Fatalf("payload: the counter view %q is missing or wrong", name)
	}
}
