package exporter

import (
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestEvictIdleSeriesBoundsMemory records 1,000,000 distinct tag values,
// each twice and then never again, into a count and a distribution view
// limited to 3,500 rows, exporting in delta with EvictIdleAfter 1 after
// every 1,000 values. A value's series lives through three exports: the
// one that reads its records, the one that finds it idle and seals it, and
// the one that reads it sealed and frees it; so eviction keeps the views
// under their limit, and no record goes to the overflow row: every value
// arrives as its own row with exactly its two records. The heap after the run is within 4 MiB of the
// heap before it, and the interner keeps none of the million values.
func TestEvictIdleSeriesBoundsMemory(t *testing.T) {
	n := 1_000_000
	if testing.Short() || race.Enabled {
		n = 50_000
	}
	const batch = 1000
	m := stats.Int64("evict/m", "", "")
	cv := &view.View{Name: "evict/count", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 3500}
	dv := &view.View{Name: "evict/dist", Measure: m, Aggregation: view.Distribution(5, 10), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 3500}
	if err := view.Register(cv, dv); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(cv, dv)

	// The sink checks each row and keeps, per view, the number of rows and
	// the sum of their tag values (a checksum of which values arrived).
	var (
		mu    sync.Mutex
		nrows = map[string]int{}
		check = map[string]int64{}
	)
	sink := FuncSink(func(_ context.Context, p Payload) error {
		pl, err := wire.Decode(p.Data)
		if err != nil {
			t.Errorf("payload does not decode: %v", err)
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		for _, v := range pl.Views {
			if v.Overflow != nil {
				t.Errorf("%s: an overflow row (%d records) although eviction keeps the view under its limit", v.Name, v.Overflow.Count)
			}
			for _, r := range v.Rows {
				i, err := strconv.Atoi(r.Values[0])
				if err != nil {
					t.Fatalf("%s: row %+v", v.Name, r)
				}
				want := wire.Row{Count: 2, Sum: 2 * float64(i%20)}
				if r.Count != want.Count || v.Aggregation == wire.Distribution && r.Sum != want.Sum {
					t.Fatalf("%s: value %d: count %d sum %v; want %d and %v", v.Name, i, r.Count, r.Sum, want.Count, want.Sum)
				}
				nrows[v.Name]++
				check[v.Name] += int64(i)
			}
		}
		return nil
	})
	e, err := New(sink, Options{Temporality: Delta, EvictIdleAfter: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var before, after runtime.MemStats
	interned := 0
	for i := 0; i < n; i++ {
		mut := []tag.Mutator{tag.Upsert(keyRoute, strconv.Itoa(i))}
		for range 2 {
			if err := stats.RecordWithTags(ctx, mut, m.M(int64(i%20))); err != nil {
				t.Fatal(err)
			}
		}
		if i%batch == batch-1 {
			if err := e.Export(ctx); err != nil {
				t.Fatal(err)
			}
			if i == 10*batch-1 { // warmed up: buffers, tables and IDs at their size
				runtime.GC()
				runtime.ReadMemStats(&before)
				interned = core.InternedLive()
			}
		}
	}
	for range 3 { // the last batch: read, sealed, read sealed and freed
		if err := e.Export(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := int64(n) * int64(n-1) / 2
	for _, name := range []string{cv.Name, dv.Name} {
		if nrows[name] != n || check[name] != want {
			t.Errorf("%s: %d rows with values summing to %d; want %d rows summing to %d", name, nrows[name], check[name], n, want)
		}
		if rows, err := view.RetrieveData(name); err != nil || len(rows) != 0 {
			t.Errorf("%s: %d rows left after every series was idle (%v)", name, len(rows), err)
		}
	}
	// Freed series give their tag values back once the garbage collector
	// has found them unreachable.
	deadline := time.Now().Add(10 * time.Second)
	for core.InternedLive() > interned && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := core.InternedLive(); got > interned {
		t.Errorf("%d strings interned after the run; %d after the warm-up", got, interned)
	}
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d values: heap %+d bytes after the warm-up; interned strings %d -> %d", n, grown, interned, core.InternedLive())
	if grown > 4<<20 {
		t.Errorf("heap grew by %d bytes over %d distinct values; want under 4 MiB", grown, n)
	}
	if s := e.Stats(); s.LastError != nil || s.Dropped != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestStopUnregistersDeltaReader: an exporter that has stopped no longer
// holds the series another delta exporter seals.
func TestStopUnregistersDeltaReader(t *testing.T) {
	m := stats.Int64("evict/stop", "", "")
	v := &view.View{Name: "evict/stop", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	discard := FuncSink(func(context.Context, Payload) error { return nil })
	ctx := context.Background()
	evicting, err := New(discard, Options{Temporality: Delta, EvictIdleAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	stopped, err := New(discard, Options{Temporality: Delta})
	if err != nil {
		t.Fatal(err)
	}
	if err := stopped.Export(ctx); err != nil { // registers it as a reader
		t.Fatal(err)
	}
	if err := stopped.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := tag.New(ctx, tag.Upsert(keyRoute, "/a"))
	if err != nil {
		t.Fatal(err)
	}
	stats.Record(c, m.M(1))
	for range 3 { // reads /a, seals it, reads it sealed and frees it
		if err := evicting.Export(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if rows, _ := view.RetrieveData(v.Name); len(rows) != 0 {
		t.Errorf("%d rows left: a stopped exporter still holds what another sealed", len(rows))
	}
	runtime.KeepAlive(stopped)
}

// TestDeltaEvictExportAllocs: with eviction on, an export of series that
// keep changing allocates nothing in steady state (sealing, which does, is
// for idle series).
func TestDeltaEvictExportAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	m := stats.Int64("evict/allocs", "", "")
	v := &view.View{Name: "evict/allocs", Measure: m, Aggregation: view.Distribution(1, 10), TagKeys: []tag.Key{keyRoute}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	ctxs := make([]context.Context, 100)
	for i := range ctxs {
		var err error
		if ctxs[i], err = tag.New(context.Background(), tag.Upsert(keyRoute, strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	e, err := New(FuncSink(func(context.Context, Payload) error { return nil }), Options{Temporality: Delta, EvictIdleAfter: 1, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cycle := func() {
		for _, c := range ctxs {
			stats.Record(c, m.M(3))
		}
		_ = e.Export(ctx)
	}
	cycle()
	cycle()
	if got := testing.AllocsPerRun(20, cycle); got != 0 {
		t.Errorf("record and export with eviction on: %v allocations; want 0", got)
	}
	if rows, _ := view.RetrieveData(v.Name); len(rows) != 100 {
		t.Errorf("%d rows; want the 100 busy series kept", len(rows))
	}
}
