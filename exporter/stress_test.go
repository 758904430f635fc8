package exporter

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestStressExactTotals: recorders on every core, views registered and
// unregistered, tag maps created per record, delta exports back to back to
// a sink that fails at random (payloads then queue and go out later); at
// the end, every view that stayed registered has received exactly what was
// recorded. Bounded in time.
func TestStressExactTotals(t *testing.T) {
	dur := 2 * time.Second
	if testing.Short() {
		dur = 300 * time.Millisecond
	}
	m := stats.Int64("stress/m", "", "")
	stable := []*view.View{
		{Name: "stress/count", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, keyStatus}},
		{Name: "stress/dist", Measure: m, Aggregation: view.Distribution(2, 4, 8), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 5},
		{Name: "stress/sum", Measure: m, Aggregation: view.Sum()},
	}
	if err := view.Register(stable...); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(stable...)
	churn := &view.View{Name: "stress/churn", Measure: m, Aggregation: view.LastValue(), TagKeys: []tag.Key{keyStatus}}

	// The sink: fails at random while the test runs, decodes and sums what
	// it accepts.
	var (
		mu       sync.Mutex
		counts   = map[string]uint64{}
		sums     = map[string]float64{}
		failing  atomic.Bool
		rnd      = rand.New(rand.NewPCG(1, 2))
		accepted atomic.Int64
	)
	failing.Store(true)
	sink := FuncSink(func(_ context.Context, p Payload) error {
		mu.Lock()
		defer mu.Unlock()
		if failing.Load() && rnd.IntN(3) == 0 {
			return Retryable(fmt.Errorf("random failure"), time.Hour) // not retried within the export: queued
		}
		pl, err := wire.Decode(p.Data)
		if err != nil {
			t.Errorf("payload does not decode: %v", err)
			return nil
		}
		for _, v := range pl.Views {
			rows := v.Rows
			if v.Overflow != nil {
				rows = append(rows, *v.Overflow)
			}
			for _, r := range rows {
				switch v.Aggregation {
				case wire.Count, wire.Distribution:
					counts[v.Name] += r.Count
				case wire.Sum:
					sums[v.Name] += r.Sum
				}
			}
		}
		accepted.Add(1)
		return nil
	})
	e, err := New(sink, Options{Temporality: Delta, MaxPayloadBytes: 2048, MaxQueuedBytes: 1 << 30,
		Retry: Retry{InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var recorded atomic.Int64
	var wg sync.WaitGroup
	routes := []string{"/a", "/b", "/c", "/d", "/e", "/f", "/g", "/h"}
	for g := range 2 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			kept, _ := tag.New(context.Background(), tag.Upsert(keyRoute, routes[g%len(routes)]))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				switch i % 3 {
				case 0:
					stats.Record(kept, m.M(1))
				case 1:
					ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, routes[r.IntN(len(routes))]),
						tag.Upsert(keyStatus, fmt.Sprint(200+r.IntN(3))))
					stats.Record(ctx, m.M(1))
				default:
					_ = stats.RecordWithTags(kept, []tag.Mutator{tag.Upsert(keyStatus, "500")}, m.M(1))
				}
				recorded.Add(1)
			}
		}()
	}
	wg.Add(2)
	go func() { // view churn
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = view.Register(churn)
			time.Sleep(time.Millisecond)
			view.Unregister(churn)
		}
	}()
	go func() { // exports back to back
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			_ = e.Export(ctx)
			cancel()
		}
	}()
	time.Sleep(dur)
	close(stop)
	wg.Wait()

	failing.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	n := recorded.Load()
	s := e.Stats()
	t.Logf("%d recordings, %d exports (%d failed), %d payloads accepted, %d retries, %d dropped", n, s.Exports, s.Failures, accepted.Load(), s.Retries, s.Dropped)
	if s.Dropped != 0 {
		t.Fatalf("dropped %d payloads; the queue was large enough for none", s.Dropped)
	}
	if s.Failures == 0 {
		t.Error("no export failed: the test did not exercise the queue")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{"stress/count", "stress/dist"} {
		if counts[name] != uint64(n) {
			t.Errorf("%s received %d; recorded %d", name, counts[name], n)
		}
	}
	if sums["stress/sum"] != float64(n) {
		t.Errorf("stress/sum received %v; recorded %d", sums["stress/sum"], n)
	}
}
