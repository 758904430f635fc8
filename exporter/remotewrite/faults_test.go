package remotewrite

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/internal/faultserver"
	"github.com/zerostat/zerostat/internal/snappy"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestFaultMatrix is the fault matrix every push exporter meets
// (internal/faultserver). Remote write is cumulative: while the receiver
// fails, pushes fail and what they carried is dropped and counted; after
// recovery the last sample received is every recording, including those
// made during the fault and before a Stop that met an outage.
func TestFaultMatrix(t *testing.T) {
	for _, fault := range faultserver.Matrix {
		t.Run(fault, func(t *testing.T) {
			name := fmt.Sprintf("rwfault%d", seq.Add(1))
			m := stats.Int64(name, "", "")
			register(t, &view.View{Name: name + "/n", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}})
			var mu sync.Mutex
			last := -1.0
			srv := faultserver.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				raw, err := snappy.Decode(body)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				ss, err := decodeWriteRequest(raw)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				total, seen := 0.0, false
				for _, s := range ss {
					for _, l := range s.labels {
						if l.name == "__name__" && l.value == name+"_n_total" {
							total, seen = total+s.value, true
						}
					}
				}
				if seen {
					mu.Lock()
					last = total
					mu.Unlock()
				}
			}))
			w := newWriter(t, Options{URL: srv.URL(), Interval: time.Minute, Timeout: 10 * time.Second,
				Retry: Retry{InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}})
			recorded := 0
			record := func(n int) {
				for i := range n {
					stats.Record(ctxWith(t, tag.Upsert(keyRoute, fmt.Sprint("/r", i%5))), m.M(1))
				}
				recorded += n
			}
			push := func(d time.Duration) error {
				ctx, cancel := context.WithTimeout(context.Background(), d)
				defer cancel()
				return w.Push(ctx)
			}
			got := func() float64 { mu.Lock(); defer mu.Unlock(); return last }

			record(100)
			if err := push(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			srv.Set(fault)
			for range 2 {
				record(500)
				if err := push(time.Second); err == nil { // expected to fail: a short deadline only bounds it
					t.Fatalf("push succeeded against %q", fault)
				}
			}
			if st := w.Stats(); st.Dropped == 0 || st.DroppedPoints == 0 || st.Queued != 0 {
				t.Errorf("stats %+v; want the failed pushes dropped and counted, nothing queued", st)
			}
			srv.Settle(int64(w.Stats().Requests), 10*time.Second)
			srv.Set(faultserver.OK)
			record(10)
			if err := push(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			if g := got(); g != float64(recorded) {
				t.Errorf("last total received %v; want %d", g, recorded)
			}

			srv.Set(fault)
			record(5)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if err := w.Stop(ctx); err == nil {
				t.Fatalf("Stop against %q succeeded", fault)
			}
			srv.Settle(int64(w.Stats().Requests), 10*time.Second)
			srv.Set(faultserver.OK)
			if err := push(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			if g := got(); g != float64(recorded) {
				t.Errorf("after Stop in an outage: last total received %v; want %d", g, recorded)
			}
		})
	}
}

// TestStaleMarkersAndMetadata: a view unregistered between pushes gets
// Prometheus's stale marker on every series it had (a histogram's buckets,
// _sum and _count included), once; a view re-registered under the same
// name gets none (its new series would collide); every family's metadata
// (type, help, unit) travels with its series.
func TestStaleMarkersAndMetadata(t *testing.T) {
	name := fmt.Sprintf("rwstale%d", seq.Add(1))
	m := stats.Float64(name+"/m", "", stats.UnitSeconds)
	count := &view.View{Name: name + "/requests", Description: "Requests", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}}
	hist := &view.View{Name: name + "/latency", Description: "Latency", Measure: m, Aggregation: view.Distribution(0.1, 1), TagKeys: []tag.Key{keyRoute}}
	if err := view.Register(count, hist); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(count, hist)
	for _, r := range []string{"/a", "/b"} {
		stats.Record(ctxWith(t, tag.Upsert(keyRoute, r)), m.M(0.5))
	}
	rcv := newCapture(t)
	w := newWriter(t, Options{URL: rcv.URL()})
	push := func() ([]series, []metadata) { return rcv.push(t, w) }
	stale := func(ss []series, prefix string) int {
		n := 0
		for _, s := range ss {
			if strings.HasPrefix(s.key(), prefix) && math.Float64bits(s.value) == StaleNaN {
				n++
			}
		}
		return n
	}
	ss, md := push()
	meta := map[string]metadata{}
	for _, x := range md {
		meta[x.name] = x
	}
	if c, h := meta[name+"_requests"], meta[name+"_latency_seconds"]; c.typ != metaCounter || c.help != "Requests" || c.unit != "" ||
		h.typ != metaHistogram || h.help != "Latency" || h.unit != "seconds" {
		t.Errorf("metadata %+v; want the counter and the histogram described", md)
	}
	if n := stale(ss, name); n != 0 {
		t.Fatalf("%d stale markers in the first push", n)
	}
	view.Unregister(hist)
	ss, _ = push()
	// 2 routes x (3 buckets + _sum + _count).
	if n := stale(ss, name+"_latency_seconds"); n != 10 {
		t.Errorf("%d stale markers for the unregistered histogram; want 10", n)
	}
	if n := stale(ss, name+"_requests"); n != 0 {
		t.Errorf("%d stale markers for the registered counter", n)
	}
	if ss, _ = push(); stale(ss, name) != 0 {
		t.Errorf("stale markers sent twice")
	}
	// Re-registered under the same name: its new series are not marked.
	if err := view.Register(hist); err != nil {
		t.Fatal(err)
	}
	stats.Record(ctxWith(t, tag.Upsert(keyRoute, "/a")), m.M(0.5))
	push()
	view.Unregister(count)
	countAgain := &view.View{Name: count.Name, Description: "Requests", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}}
	if err := view.Register(countAgain); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(countAgain)
	stats.Record(ctxWith(t, tag.Upsert(keyRoute, "/a")), m.M(0.5))
	if ss, _ = push(); stale(ss, name+"_requests") != 0 {
		t.Errorf("stale markers for a view re-registered under the same name")
	}
}

// TestStaleMarkerForEvictedSeries: a series a delta exporter evicted (its
// tag values no longer recorded) gets one stale marker in the next push;
// the series still recorded gets none.
func TestStaleMarkerForEvictedSeries(t *testing.T) {
	name := fmt.Sprintf("rwevict%d", seq.Add(1))
	m := stats.Int64(name+"/m", "", "")
	register(t, &view.View{Name: name + "/n", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}})
	gone, kept := ctxWith(t, tag.Upsert(keyRoute, "/gone")), ctxWith(t, tag.Upsert(keyRoute, "/kept"))
	stats.Record(gone, m.M(1))
	stats.Record(kept, m.M(1))
	ev, err := exporter.New(exporter.FuncSink(func(context.Context, exporter.Payload) error { return nil }),
		exporter.Options{Temporality: exporter.Delta, EvictIdleAfter: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Stop(context.Background())
	rcv := newCapture(t)
	w := newWriter(t, Options{URL: rcv.URL()})
	staleRoutes := func() []string {
		ss, _ := rcv.push(t, w)
		var out []string
		for _, s := range ss {
			if strings.HasPrefix(s.key(), name) && math.Float64bits(s.value) == StaleNaN {
				out = append(out, s.key())
			}
		}
		return out
	}
	if got := staleRoutes(); len(got) != 0 {
		t.Fatalf("stale markers %v before any eviction", got)
	}
	// Export until /gone is freed (it reads the record, finds it idle and
	// seals it, then frees it), recording /kept all along.
	for i := 0; i < 10; i++ {
		stats.Record(kept, m.M(1))
		if err := ev.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	want := name + "_n_total{route=/gone}"
	if got := staleRoutes(); len(got) != 1 || got[0] != want {
		t.Errorf("stale markers %v; want one, for %s", got, want)
	}
	if got := staleRoutes(); len(got) != 0 {
		t.Errorf("stale markers %v sent again", got)
	}
}

// capture is a remote-write receiver behind a switchable fault
// (faultserver) that keeps what each push delivered.
type capture struct {
	*faultserver.Server
	mu   sync.Mutex
	ss   []series
	meta []metadata
}

func newCapture(t *testing.T) *capture {
	c := &capture{}
	c.Server = faultserver.New(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		raw, err := snappy.Decode(body)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		ss, md, err := decodeWriteRequestMeta(raw)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.ss, c.meta = append(c.ss, ss...), append(c.meta, md...)
		c.mu.Unlock()
	}))
	return c
}

// push pushes w and returns what the receiver took of it (an error if the
// push fails).
func (c *capture) push(t *testing.T, w *Writer) ([]series, []metadata) {
	t.Helper()
	c.mu.Lock()
	c.ss, c.meta = nil, nil
	c.mu.Unlock()
	if err := w.Push(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ss, c.meta
}

// TestStaleMarkersUntilDelivered (issue 41, item 7): a stale marker is
// sent in every push until one carrying it is delivered: a push refused
// with 503 loses none, and AppendWriteRequest, which sends nothing, does
// not consume it. Before, a marker was written into one push and
// forgotten, delivered or not: the series stayed live in Prometheus for
// its 5-minute lookback.
func TestStaleMarkersUntilDelivered(t *testing.T) {
	name := fmt.Sprintf("rwstale503_%d", seq.Add(1))
	m := stats.Int64(name+"/m", "", "")
	v := &view.View{Name: name + "/n", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	stats.Record(ctxWith(t, tag.Upsert(keyRoute, "/a")), m.M(1))
	rcv := newCapture(t)
	w := newWriter(t, Options{URL: rcv.URL(), Retry: Retry{Disabled: true}, Logger: slog.New(slog.DiscardHandler)})
	rcv.push(t, w)
	view.Unregister(v)
	stale := func(ss []series) int {
		n := 0
		for _, s := range ss {
			if strings.HasPrefix(s.key(), name) && math.Float64bits(s.value) == StaleNaN {
				n++
			}
		}
		return n
	}
	// A tool reads the request: the marker is in it, and stays pending.
	ss, err := decodeWriteRequest(w.AppendWriteRequest(nil, 1))
	if err != nil || stale(ss) != 1 {
		t.Fatalf("AppendWriteRequest: %d markers (%v); want the pending one", stale(ss), err)
	}
	rcv.Set(faultserver.S503)
	for range 2 {
		if err := w.Push(context.Background()); err == nil {
			t.Fatal("a push refused with 503 succeeded")
		}
	}
	rcv.Set(faultserver.OK)
	if ss, _ := rcv.push(t, w); stale(ss) != 1 {
		t.Fatalf("the push after two refused ones carries %d stale markers; want the pending one", stale(ss))
	}
	if ss, _ := rcv.push(t, w); stale(ss) != 0 {
		t.Errorf("a delivered stale marker sent again")
	}
}

// TestFinal4xxDropsOnlyThatRequest (issue 41, item 12): a request answered
// 400 is dropped and counted, the requests after it in the same push are
// still sent (as the docs now say; they said they were dropped too), and
// the push's error says how many samples of how many it dropped (before,
// the cycle's bare error was returned, and the count never reached the
// caller).
func TestFinal4xxDropsOnlyThatRequest(t *testing.T) {
	name := fmt.Sprintf("rw4xx%d", seq.Add(1))
	m := stats.Int64(name+"/m", "", "")
	register(t, &view.View{Name: name + "/n", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}})
	for _, r := range []string{"/a", "/b", "/c"} {
		stats.Record(ctxWith(t, tag.Upsert(keyRoute, r)), m.M(1))
	}
	var mu sync.Mutex
	var got []string
	n := 0
	srv := faultserver.New(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		raw, _ := snappy.Decode(body)
		ss, _ := decodeWriteRequest(raw)
		mu.Lock()
		defer mu.Unlock()
		if n++; n == 1 {
			http.Error(rw, "out of order sample", http.StatusBadRequest)
			return
		}
		for _, s := range ss {
			if strings.HasPrefix(s.key(), name) {
				got = append(got, s.key())
			}
		}
	}))
	w := newWriter(t, Options{URL: srv.URL(), MaxSeriesPerRequest: 1, Logger: slog.New(slog.DiscardHandler)})
	w.encode(1) // the requests a push of these views makes, for the count
	want := w.total()
	err := w.Push(context.Background())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("dropped 1 of %d samples", want)) {
		t.Fatalf("push with its first request refused: %v; want \"dropped 1 of %d samples\"", err, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if n != want || len(got) == 0 {
		t.Errorf("%d requests reached the receiver, %d of this view's series taken; want all %d requests tried", n, len(got), want)
	}
	if st := w.Stats(); st.Dropped != 1 || st.DroppedPoints != 1 {
		t.Errorf("stats %+v; want the refused request dropped and counted", st)
	}
}
