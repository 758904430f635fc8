package exporter

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// The soak test (issue 48): a busy service's load, in phases.
//
//   - Four recorders, each on one path: tag.New contexts, RecordWithTags,
//     and two on handles bound per user and dropped (one in keepEvery kept
//     for keepFor phases), into views limited to soakLimit series.
//   - Users keep coming: each phase brings newPerPhase new ones, and
//     records pick among the last window of them, so series go idle, are
//     evicted, come back and are re-created, and the views fill to their
//     limit (the overflow row takes the rest).
//   - A delta exporter with EvictIdleAfter 2 and a cumulative one export
//     back to back on their own goroutines, each into a sink that folds
//     what it receives into totals (no payload is kept).
//   - One extra view over the requests' measure is unregistered and
//     registered again under its name every reregEvery phases, while the
//     exporters run (a configuration reload).
//
// At the end every exporter's totals equal what was recorded: per view
// (counts, sums, bucket counts; the overflow row included), and for the
// extra view per registration; the last values equal the last recorded.
// Live series never exceed the limit, and the post-GC heap after the
// warm-up stays flat. The phases are counted, not timed: a loaded machine
// runs the same test more slowly. `make soak` runs it for minutes
// (ZEROSTAT_SOAK=duration), with the figures in docs/reliability.md.

const (
	soakLimit      = 5000
	soakRoutes     = 4
	soakWindow     = 20 // phases of new users that records pick from
	soakKeepEvery  = 8
	soakKeepFor    = 3
	soakReregEvery = 5
)

var keyUser = tag.MustNewKey("user")

// soakTime formats a start in a key: fixed width, so that keys sort in
// time order.
const soakTime = "2006-01-02T15:04:05.000000000Z07:00"

var soakBounds = []float64{1, 5, 10, 50, 100}

// soakTotals is what was recorded, or what an exporter delivered, into
// one view (or registration): a count, a sum and bucket counts.
type soakTotals struct {
	count   uint64
	sum     float64
	buckets [6]uint64
}

func (t *soakTotals) add(o *soakTotals) {
	t.count += o.count
	t.sum += o.sum
	for i := range t.buckets {
		t.buckets[i] += o.buckets[i]
	}
}

// rowTotals is a row's values as soakTotals (a Count's count, a Sum's
// sum, a Distribution's count, sum and buckets).
func rowTotals(v *wire.View, r *wire.Row) soakTotals {
	t := soakTotals{count: r.Count, sum: r.Sum}
	if v.Aggregation == wire.Sum {
		t = soakTotals{sum: r.Sum}
	}
	copy(t.buckets[:], r.Buckets)
	return t
}

// soakSink folds an exporter's payloads into totals per view (and per
// registration: the view's start). Delta: the sum of what arrived.
// Cumulative: per row (view, start, tag values, row start), the last
// total; a row missing from a whole cycle (its series was freed, or its
// view went) is folded into its view's closed totals, so the sink's
// memory is bounded by the live rows.
type soakSink struct {
	t        testing.TB
	temp     wire.Temporality
	mu       sync.Mutex
	totals   map[string]*soakTotals // by view name, then "\x00"+start for registrations
	live     map[string]soakRow     // cumulative: rows of the last cycles
	cycleSeq uint64
	seen     map[string]bool // cumulative: rows of the cycle in progress
	last     map[string]float64
	payloads atomic.Uint64
}

type soakRow struct {
	view, reg string
	t         soakTotals
}

func newSoakSink(t testing.TB, temp wire.Temporality) *soakSink {
	return &soakSink{t: t, temp: temp, totals: map[string]*soakTotals{}, live: map[string]soakRow{}, seen: map[string]bool{}, last: map[string]float64{}}
}

func (s *soakSink) total(key string) *soakTotals {
	t := s.totals[key]
	if t == nil {
		t = new(soakTotals)
		s.totals[key] = t
	}
	return t
}

func (s *soakSink) sink() Sink {
	return FuncSink(func(_ context.Context, p Payload) error {
		pl, err := wire.Decode(p.Data)
		if err != nil {
			s.t.Errorf("payload %d.%d does not decode: %v", p.Sequence, p.Part, err)
			return nil
		}
		s.payloads.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.temp == Cumulative && pl.Sequence != s.cycleSeq {
			s.cycleSeq = pl.Sequence
			clear(s.seen)
		}
		names := map[string]int{}
		for i := range pl.Views {
			v := &pl.Views[i]
			if names[v.Name]++; names[v.Name] > 1 {
				s.t.Errorf("%v payload %d holds two views named %s", s.temp, pl.Sequence, v.Name)
			}
			reg := v.Name + "\x00" + v.Start.Format(soakTime)
			for j := range v.Rows {
				r := &v.Rows[j]
				if v.Aggregation == wire.LastValue {
					s.last[v.Name+"\x00"+strings.Join(r.Values, ",")] = r.Value
					continue
				}
				s.row(v, reg, r, v.RowStart(j), strings.Join(r.Values, ","))
			}
			if v.Overflow != nil {
				s.row(v, reg, v.Overflow, v.OverflowStart, "\x00overflow")
			}
		}
		if s.temp == Cumulative && pl.Last {
			s.endCycle()
		}
		return nil
	})
}

// row takes one row of view v (registration reg).
func (s *soakSink) row(v *wire.View, reg string, r *wire.Row, start time.Time, values string) {
	rt := rowTotals(v, r)
	if s.temp == Delta {
		s.total(v.Name).add(&rt)
		s.total(reg).add(&rt)
		return
	}
	key := reg + "\x00" + start.Format(soakTime) + "\x00" + values
	if old, ok := s.live[key]; ok && (rt.count < old.t.count || rt.sum < old.t.sum) {
		s.t.Errorf("cumulative %s row %q went down: %+v after %+v", v.Name, values, rt, old.t)
	}
	s.live[key] = soakRow{view: v.Name, reg: reg, t: rt}
	s.seen[key] = true
}

// endCycle folds the rows a whole cycle left out into the closed totals.
func (s *soakSink) endCycle() {
	for key, r := range s.live {
		if !s.seen[key] {
			s.total(r.view).add(&r.t)
			s.total(r.reg).add(&r.t)
			delete(s.live, key)
		}
	}
}

// result returns the totals of key (a view name, or a registration).
func (s *soakSink) result(key string) soakTotals {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t soakTotals
	if c := s.totals[key]; c != nil {
		t = *c
	}
	for _, r := range s.live {
		if r.view == key || r.reg == key {
			t.add(&r.t)
		}
	}
	return t
}

// soakRecorder is one recorder's expected totals.
type soakRecorder struct {
	req, lat, hits, bytes soakTotals
	extra                 map[int]uint64 // the extra view's records, by registration
}

func TestSoak(t *testing.T) {
	phases, perPhase, newPerPhase, warmUp := 100, 3000, 300, 50
	var soakFor time.Duration
	if d := os.Getenv("ZEROSTAT_SOAK"); d != "" {
		var err error
		if soakFor, err = time.ParseDuration(d); err != nil {
			t.Fatalf("ZEROSTAT_SOAK=%q: %v", d, err)
		}
		phases, perPhase = 1<<30, 20000
	} else if testing.Short() || race.Enabled {
		phases, perPhase, warmUp = 40, 600, 15
	}
	began := time.Now()

	mReq := stats.Int64("soak/requests", "", "1")
	mLat := stats.Float64("soak/latency", "", "ms")
	mHits := stats.Int64("soak/hits", "", "1")
	mBytes := stats.Int64("soak/bytes", "", "By")
	mInflight := stats.Int64("soak/inflight", "", "1")
	views := []*view.View{
		{Name: "soak/requests", Measure: mReq, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, keyUser}, CardinalityLimit: soakLimit},
		{Name: "soak/latency", Measure: mLat, Aggregation: view.Distribution(soakBounds...), TagKeys: []tag.Key{keyRoute, keyUser}, CardinalityLimit: soakLimit},
		{Name: "soak/hits", Measure: mHits, Aggregation: view.Count(), TagKeys: []tag.Key{keyUser}, CardinalityLimit: soakLimit},
		{Name: "soak/bytes", Measure: mBytes, Aggregation: view.Sum(), TagKeys: []tag.Key{keyUser}, CardinalityLimit: soakLimit},
		{Name: "soak/inflight", Measure: mInflight, Aggregation: view.LastValue(), TagKeys: []tag.Key{keyRoute}},
	}
	if err := view.Register(views...); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(views...)
	const extraName = "soak/extra"
	newExtra := func() *view.View {
		return &view.View{Name: extraName, Measure: mReq, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}}
	}
	extra := newExtra()
	if err := view.Register(extra); err != nil {
		t.Fatal(err)
	}
	var (
		extraMu  sync.RWMutex // recorders of mReq hold it; re-registration takes it
		extraReg int          // the extra view's registration number, under extraMu
	)

	quiet := slog.New(slog.DiscardHandler)
	dsink, csink := newSoakSink(t, Delta), newSoakSink(t, Cumulative)
	de, err := New(dsink.sink(), Options{Temporality: Delta, EvictIdleAfter: 2, Interval: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ce, err := New(csink.sink(), Options{Temporality: Cumulative, Interval: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	de.Start()
	ce.Start()
	stopExports := make(chan struct{})
	// The exporters hold pause's read lock while they export; the heap is
	// measured under its write lock, with no payload in flight.
	var pause sync.RWMutex
	var exporters sync.WaitGroup
	var exports [2]atomic.Uint64
	for i, e := range []*Exporter{de, ce} {
		exporters.Add(1)
		go func() {
			defer exporters.Done()
			for {
				select {
				case <-stopExports:
					return
				case <-time.After(5 * time.Millisecond): // pacing only: nothing depends on it
				}
				pause.RLock()
				err := e.Export(context.Background())
				pause.RUnlock()
				if err != nil {
					t.Errorf("export: %v", err)
					return
				}
				exports[i].Add(1)
			}
		}()
	}

	// Users: user i arrives in phase i/newPerPhase; a record picks one of
	// the last soakWindow phases' users, the newest more often.
	userMap := func(u int, route int) *tag.Map {
		ctx, err := tag.New(context.Background(), tag.Upsert(keyRoute, "r"+strconv.Itoa(route)), tag.Upsert(keyUser, "u"+strconv.Itoa(u)))
		if err != nil {
			panic(err)
		}
		return tag.FromContext(ctx)
	}
	pickUser := func(rng *rand.Rand, phase int) int {
		back := min(int(rng.ExpFloat64()*soakWindow/3), soakWindow-1, phase)
		return (phase-back)*newPerPhase + rng.IntN(newPerPhase)
	}
	bucketOf := func(v float64) int {
		n := 0
		for _, b := range soakBounds {
			if b <= v {
				n++
			}
		}
		return n
	}

	recs := make([]*soakRecorder, 4)
	for i := range recs {
		recs[i] = &soakRecorder{extra: map[int]uint64{}}
	}
	start := make([]chan int, len(recs))
	var phaseDone sync.WaitGroup
	var recorders sync.WaitGroup
	for g := range recs {
		start[g] = make(chan int)
		recorders.Add(1)
		go func() {
			defer recorders.Done()
			rec := recs[g]
			rng := rand.New(rand.NewPCG(uint64(g), 48))
			kept := make([][]*stats.Int64Handle, soakKeepFor)
			for phase := range start[g] {
				var keep []*stats.Int64Handle
				for n := 0; n < perPhase; {
					u, route := pickUser(rng, phase), rng.IntN(soakRoutes)
					k := 1 + rng.IntN(5)
					n += k
					switch g {
					case 0, 1: // contexts, and mutators
						extraMu.RLock()
						var ctx context.Context
						muts := []tag.Mutator{tag.Upsert(keyRoute, "r"+strconv.Itoa(route)), tag.Upsert(keyUser, "u"+strconv.Itoa(u))}
						if g == 0 {
							var err error
							if ctx, err = tag.New(context.Background(), muts...); err != nil {
								panic(err)
							}
						}
						for range k {
							lat := float64(rng.IntN(120))
							if g == 0 {
								stats.Record(ctx, mReq.M(1), mLat.M(lat))
							} else if err := stats.RecordWithTags(context.Background(), muts, mReq.M(1), mLat.M(lat)); err != nil {
								panic(err)
							}
							rec.req.count++
							rec.lat.count++
							rec.lat.sum += lat
							rec.lat.buckets[bucketOf(lat)]++
						}
						rec.extra[extraReg] += uint64(k)
						extraMu.RUnlock()
					default: // handles bound per user and dropped, some kept
						tm := userMap(u, route)
						hits, bytes := mHits.Bind(tm), mBytes.Bind(tm)
						for range k {
							b := int64(rng.IntN(1500))
							hits.Record(1)
							bytes.Record(b)
							rec.hits.count++
							rec.bytes.sum += float64(b)
						}
						if rng.IntN(soakKeepEvery) == 0 {
							keep = append(keep, hits, bytes)
						}
					}
				}
				// The handles kept soakKeepFor phases ago record once more
				// and are dropped.
				old := kept[phase%soakKeepFor]
				for i := 0; i+1 < len(old); i += 2 {
					old[i].Record(1)
					rec.hits.count++
					old[i+1].Record(7)
					rec.bytes.sum += 7
				}
				kept[phase%soakKeepFor] = keep
				phaseDone.Done()
			}
		}()
	}

	live := func(name string) int {
		rows, err := view.RetrieveData(name)
		if err != nil {
			t.Fatalf("RetrieveData(%s): %v", name, err)
		}
		n := 0
		for _, r := range rows {
			if !r.IsOverflow() {
				n++
			}
		}
		return n
	}
	var before, after runtime.MemStats
	lastGauge := map[string]float64{}
	maxLive := 0
	phase := 0
	for ; phase < phases; phase++ {
		if soakFor > 0 && time.Since(began) > soakFor {
			break
		}
		phaseDone.Add(len(recs))
		for g := range recs {
			start[g] <- phase
		}
		phaseDone.Wait()
		for r := range soakRoutes {
			v := int64(phase*10 + r)
			ctx, err := tag.New(context.Background(), tag.Upsert(keyRoute, "r"+strconv.Itoa(r)))
			if err != nil {
				t.Fatal(err)
			}
			stats.Record(ctx, mInflight.M(v))
			lastGauge["soak/inflight\x00r"+strconv.Itoa(r)] = float64(v)
		}
		for _, v := range views[:4] {
			n := live(v.Name)
			maxLive = max(maxLive, n)
			if n > soakLimit {
				t.Errorf("phase %d: %s holds %d series; its limit is %d", phase, v.Name, n, soakLimit)
			}
		}
		if phase%soakReregEvery == soakReregEvery-1 {
			extraMu.Lock()
			view.Unregister(extra)
			extra = newExtra()
			if err := view.Register(extra); err != nil {
				t.Fatal(err)
			}
			extraReg++
			extraMu.Unlock()
		}
		quiet := func(ms *runtime.MemStats) {
			pause.Lock()
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(ms)
			pause.Unlock()
		}
		if soakFor > 0 && phase%50 == 49 {
			var ms runtime.MemStats
			quiet(&ms)
			t.Logf("phase %d (%v): post-GC heap %.1f MiB, %d objects; exports: delta %d, cumulative %d",
				phase, time.Since(began).Round(time.Second), float64(ms.HeapAlloc)/(1<<20), ms.HeapObjects, exports[0].Load(), exports[1].Load())
		}
		warm := phase == warmUp
		if soakFor > 0 {
			warm = before.HeapAlloc == 0 && time.Since(began) > soakFor/4
		}
		if warm {
			quiet(&before)
			t.Logf("warmed up after phase %d (%v): heap %d bytes, %d objects", phase, time.Since(began).Round(time.Millisecond), before.HeapAlloc, before.HeapObjects)
		}
	}
	for g := range recs {
		close(start[g])
	}
	recorders.Wait()
	pause.Lock()
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	pause.Unlock()
	close(stopExports)
	exporters.Wait()
	view.Unregister(extra) // its last registration, exported by Stop
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, e := range []*Exporter{de, ce} {
		if err := e.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if s := e.Stats(); s.LastError != nil || s.Dropped != 0 || s.Failures != 0 {
			t.Errorf("exporter stats %+v", s)
		}
	}

	var want soakRecorder
	wantExtra := map[int]uint64{}
	for _, r := range recs {
		want.req.add(&r.req)
		want.lat.add(&r.lat)
		want.hits.add(&r.hits)
		want.bytes.add(&r.bytes)
		for reg, n := range r.extra {
			wantExtra[reg] += n
		}
	}
	wantReq := soakTotals{count: want.req.count}
	records := want.req.count + want.lat.count + want.hits.count + uint64(len(recs))
	for _, s := range []*soakSink{dsink, csink} {
		for name, w := range map[string]soakTotals{"soak/requests": wantReq, "soak/latency": want.lat, "soak/hits": want.hits, "soak/bytes": want.bytes} {
			if got := s.result(name); got != w {
				t.Errorf("%v: %s: delivered %+v; recorded %+v", s.temp, name, got, w)
			}
		}
		// The extra view, per registration: by start, in order.
		var regs []string
		s.mu.Lock()
		for k := range s.totals {
			if strings.HasPrefix(k, extraName+"\x00") {
				regs = append(regs, k)
			}
		}
		for _, r := range s.live {
			if r.view == extraName && !slices.Contains(regs, r.reg) {
				regs = append(regs, r.reg)
			}
		}
		for k, v := range lastGauge {
			if s.last[k] != v {
				t.Errorf("%v: last value %q: delivered %v; recorded last %v", s.temp, k, s.last[k], v)
			}
		}
		s.mu.Unlock()
		slices.Sort(regs) // soakTime: in time order
		if len(regs) != len(wantExtra) {
			t.Errorf("%v: %d registrations of %s delivered; there were %d", s.temp, len(regs), extraName, len(wantExtra))
		}
		for i, reg := range regs {
			if got := s.result(reg); got.count != wantExtra[i] {
				t.Errorf("%v: %s registration %d: delivered %d records; recorded %d", s.temp, extraName, i+1, got.count, wantExtra[i])
			}
		}
	}
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	elapsed := time.Since(began)
	t.Logf("%d phases in %v: %d records (%.2fM/s), %d users, max live series %d; exports: delta %d, cumulative %d; %d registrations of %s",
		phase, elapsed.Round(time.Millisecond), records, float64(records)/elapsed.Seconds()/1e6, phase*newPerPhase, maxLive,
		exports[0].Load(), exports[1].Load(), len(wantExtra), extraName)
	t.Logf("post-GC heap: %d bytes after the warm-up, %d at the end (%+d), objects %d -> %d", before.HeapAlloc, after.HeapAlloc, grown, before.HeapObjects, after.HeapObjects)
	if limit := max(int64(16<<20), int64(before.HeapAlloc)/4); grown > limit {
		t.Errorf("the post-GC heap grew by %d bytes after the warm-up; want at most %d: memory is bounded by the live series and handles", grown, limit)
	}
}
