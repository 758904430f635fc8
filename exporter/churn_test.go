package exporter

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

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

// TestUnregisterRacingExportsExact races Unregister against exports that
// run back to back on other goroutines, a delta and a cumulative exporter:
// every view's records arrive exactly once. Before, Unregister published
// the registry without the view before it kept the view for the exporters'
// final read: an export in between saw it in neither place, the delta
// exporter dropped its state for the view, and its final read then sent
// the view's whole total again (issue 48).
func TestUnregisterRacingExportsExact(t *testing.T) {
	views := 400
	if testing.Short() || race.Enabled {
		views = 150
	}
	const records = 5
	type result struct {
		c    collect
		e    *Exporter
		temp wire.Temporality
	}
	var rs [2]*result
	for i, temp := range []wire.Temporality{Delta, Cumulative} {
		r := &result{temp: temp}
		e, err := New(r.c.sink(t), Options{Temporality: temp, Interval: time.Hour, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		r.e = e
		e.Start()
		rs[i] = r
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := r.e.Export(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	m := stats.Int64("unreg_exact/m", "", "")
	for i := range views {
		v := &view.View{Name: fmt.Sprintf("unreg_exact/v%d", i), Measure: m, Aggregation: view.Count()}
		if err := view.Register(v); err != nil {
			t.Fatal(err)
		}
		for range records {
			stats.Record(context.Background(), m.M(1))
		}
		view.Unregister(v)
	}
	close(stop)
	wg.Wait()
	for _, r := range rs {
		if err := r.e.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := viewCounts(r.c.payloads, r.temp)
		for i := range views {
			if name := fmt.Sprintf("unreg_exact/v%d", i); got[name] != records {
				t.Errorf("%v: %s: the backend got %d of %d records", r.temp, name, got[name], records)
			}
		}
	}
}

// TestReregisteredViewKeepsTail: a view unregistered and registered again
// under its name before the exporters' next export (a configuration
// reload): each started exporter still exports the old registration's
// final values, and the new registration after them, with its own start;
// no payload holds two views of the name. Before, the new registration
// dropped the retiring view: what it recorded since the last export was
// lost to every exporter (issue 48).
func TestReregisteredViewKeepsTail(t *testing.T) {
	for _, temp := range []wire.Temporality{Delta, Cumulative} {
		var c collect
		e, err := New(c.sink(t), Options{Temporality: temp, Interval: time.Hour, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		e.Start()
		m := stats.Int64("rereg/m"+temp.String(), "", "")
		name := "rereg/v" + temp.String()
		ctx := context.Background()
		export := func() {
			t.Helper()
			if err := e.Export(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// Three registrations of the name: 5 records, export, 3 more,
		// then two reloads before the next export, 4 and 6 records.
		reg := func() *view.View {
			v := &view.View{Name: name, Measure: m, Aggregation: view.Count()}
			if err := view.Register(v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		record := func(n int) {
			for range n {
				stats.Record(ctx, m.M(1))
			}
		}
		v := reg()
		record(5)
		export()
		record(3)
		view.Unregister(v)
		v = reg()
		record(4)
		view.Unregister(v)
		v = reg()
		record(6)
		for range 4 {
			export()
		}
		view.Unregister(v)
		if err := e.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		// Per registration (its start), the sum of the intervals (delta)
		// or the last total (cumulative).
		got := map[time.Time]uint64{}
		var starts []time.Time
		for _, p := range c.payloads {
			n := 0
			for _, w := range p.Views {
				if w.Name != name {
					continue
				}
				n++
				if _, ok := got[w.Start]; !ok {
					starts = append(starts, w.Start)
				}
				for _, r := range w.Rows {
					if temp == Delta {
						got[w.Start] += r.Count
					} else {
						got[w.Start] = r.Count
					}
				}
			}
			if n > 1 {
				t.Errorf("%v: payload %d holds %d views named %s", temp, p.Sequence, n, name)
			}
		}
		want := []uint64{8, 4, 6}
		if len(starts) != len(want) {
			t.Fatalf("%v: %d registrations exported (%v); want %d", temp, len(starts), got, len(want))
		}
		for i, s := range starts {
			if got[s] != want[i] {
				t.Errorf("%v: registration %d (start %v): the backend got %d records; want %d", temp, i+1, s, got[s], want[i])
			}
		}
	}
}

// viewCounts returns what payloads delivered of each view of one row (a
// Count without keys): the sum of the intervals in delta, the last total
// in cumulative.
func viewCounts(payloads []*wire.Payload, temp wire.Temporality) map[string]uint64 {
	got := map[string]uint64{}
	for _, p := range payloads {
		for _, w := range p.Views {
			for _, row := range w.Rows {
				if temp == Delta {
					got[w.Name] += row.Count
				} else {
					got[w.Name] = row.Count
				}
			}
		}
	}
	return got
}
