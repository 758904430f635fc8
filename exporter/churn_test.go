package exporter

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestHandleChurnUnderEvictionBoundsMemory binds handles to tag values
// that recur (users coming back), records through them, keeps some for a
// few rounds and drops the rest, while a delta exporter evicts and frees
// the idle series after every round. The live series and the live handles
// stay bounded, and so must the heap: before, a freed series kept the
// cells of the handles once bound to it, and so their 512-byte blocks of
// 8 handles, whose other handles kept their own freed series, and so on
// back through every eviction round (issue 48: +529 MiB a minute in a
// soak run). Checked with the runtime's memory statistics after a GC, not
// a timing.
func TestHandleChurnUnderEvictionBoundsMemory(t *testing.T) {
	rounds := 400
	if testing.Short() || race.Enabled {
		rounds = 120
	}
	const (
		values    = 4000 // distinct tag values; each round binds perRound of them
		perRound  = 600
		keepFor   = 4 // rounds a kept handle lives
		keepEvery = 5 // one handle in keepEvery is kept
		warmUp    = 40
	)
	m := stats.Int64("churn/handles", "", "")
	cv := &view.View{Name: "churn/handles_count", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 2000}
	if err := view.Register(cv); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(cv)
	var recorded, exported uint64
	sink := FuncSink(func(_ context.Context, p Payload) error {
		pl, err := wire.Decode(p.Data)
		if err != nil {
			t.Error(err)
			return nil
		}
		for _, v := range pl.Views {
			if v.Name != cv.Name {
				continue
			}
			for _, r := range v.Rows {
				exported += r.Count
			}
			if v.Overflow != nil {
				exported += v.Overflow.Count
			}
		}
		return nil
	})
	e, err := New(sink, Options{Temporality: Delta, EvictIdleAfter: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	maps := make([]*tag.Map, values)
	for i := range maps {
		ctx, err := tag.New(context.Background(), tag.Upsert(keyRoute, "user"+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		maps[i] = tag.FromContext(ctx)
	}
	rng := rand.New(rand.NewPCG(48, 1))
	kept := make([][]*stats.Int64Handle, keepFor)
	ctx := context.Background()
	var before, after runtime.MemStats
	for round := range rounds {
		var keep []*stats.Int64Handle
		for j := range perRound {
			h := m.Bind(maps[rng.IntN(values)])
			n := 1 + rng.IntN(3)
			for range n {
				h.Record(1)
			}
			recorded += uint64(n)
			if j%keepEvery == 0 {
				keep = append(keep, h)
			}
		}
		// The kept handles of keepFor rounds ago are dropped; theirs
		// record once more first, so their series are not all idle.
		for _, h := range kept[round%keepFor] {
			h.Record(1)
			recorded++
		}
		kept[round%keepFor] = keep
		if err := e.Export(ctx); err != nil {
			t.Fatal(err)
		}
		if round == warmUp {
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&before)
		}
	}
	for range 3 {
		if err := e.Export(ctx); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	if exported != recorded {
		t.Errorf("exported %d records; recorded %d", exported, recorded)
	}
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	objs := int64(after.HeapObjects) - int64(before.HeapObjects)
	t.Logf("%d rounds of %d handles: heap %+d bytes, %+d objects after the warm-up (%d bytes then)", rounds, perRound, grown, objs, before.HeapAlloc)
	if grown > 4<<20 {
		t.Errorf("the heap grew by %d bytes (%+d objects) over %d rounds after the warm-up; want under 4 MiB: freed series keep dropped handles reachable", grown, objs, rounds-warmUp)
	}
	if s := e.Stats(); s.LastError != nil || s.Dropped != 0 {
		t.Errorf("stats %+v", s)
	}
}
