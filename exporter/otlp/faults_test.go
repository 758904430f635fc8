package otlp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/faultserver"
)

// TestFaultMatrix is the fault matrix every push exporter meets
// (internal/faultserver): for each fault and temporality, exports fail
// while recorders go on, then the receiver recovers. Cumulative: the last
// delivered total is everything recorded. Delta: the delivered deltas add
// up to everything recorded, with no duplicate. Then Stop during an
// outage: it reports what it could not send, and a later export sends it.
//
// A 500 is final under OTLP/HTTP (only 429, 502, 503 and 504 are
// retryable): its delta requests are dropped, not queued, and the loss is
// counted in Stats.Dropped instead.
func TestFaultMatrix(t *testing.T) {
	for _, fault := range faultserver.Matrix {
		for _, temp := range []Temporality{Cumulative, Delta} {
			t.Run(fmt.Sprint(fault, "/", temp), func(t *testing.T) {
				f := newFixture(t)
				var mu sync.Mutex
				var deltaSum, lastTotal int64
				srv := faultserver.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					m := decodeRequest(t, body).metrics[f.prefix+"count"]
					if m == nil {
						return
					}
					var n int64
					for _, p := range m.points {
						n += p.asInt
					}
					mu.Lock()
					deltaSum += n
					lastTotal = n
					mu.Unlock()
				}))
				e, err := New(Options{Endpoint: srv.URL(), Temporality: temp, Interval: time.Minute, Timeout: 10 * time.Second,
					Retry: Retry{InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				export := func(d time.Duration) error {
					ctx, cancel := context.WithTimeout(context.Background(), d)
					defer cancel()
					return e.Export(ctx)
				}
				final := fault == faultserver.S500 && temp == Delta
				recorded, lost := 0, 0
				record := func(n int) {
					for i := range n {
						f.record(t, fmt.Sprint("/r", i%7), "200", 1, 1)
					}
					recorded += n
				}
				got := func() int64 {
					mu.Lock()
					defer mu.Unlock()
					if temp == Delta {
						return deltaSum
					}
					return lastTotal
				}

				record(100)
				if err := export(10 * time.Second); err != nil {
					t.Fatal(err)
				}
				srv.Set(fault)
				for range 2 {
					record(500)
					if final {
						lost += 500
					}
					// A failing export ends by its deadline: it is
					// expected to fail, so a short one cannot fail the test.
					if err := export(time.Second); err == nil {
						t.Fatalf("export succeeded against %q", fault)
					}
				}
				if st := e.Stats(); temp == Delta && !final && st.Queued != 2 || (temp == Cumulative || final) && st.Queued != 0 ||
					final && st.Dropped != 2 {
					t.Errorf("stats %+v during the fault", st)
				}
				srv.Settle(int64(e.Stats().Requests), 10*time.Second)
				srv.Set(faultserver.OK)
				record(10)
				if err := export(10 * time.Second); err != nil {
					t.Fatal(err)
				}
				if g := got(); g != int64(recorded-lost) {
					t.Errorf("received %d; want all %d recordings but the %d of dropped requests", g, recorded, lost)
				}

				// Stop during an outage, then recovery.
				srv.Set(fault)
				record(5)
				if final {
					lost += 5
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				err = e.Stop(ctx)
				if err == nil {
					t.Fatalf("Stop against %q succeeded", fault)
				}
				if temp == Delta && !final && !strings.Contains(err.Error(), "stopped with 1 requests") {
					t.Errorf("Stop: %v; want a report of the unsent request", err)
				}
				srv.Settle(int64(e.Stats().Requests), 10*time.Second)
				srv.Set(faultserver.OK)
				if err := export(10 * time.Second); err != nil {
					t.Fatal(err)
				}
				if g := got(); g != int64(recorded-lost) {
					t.Errorf("after Stop in an outage and recovery: received %d; want %d", g, recorded-lost)
				}
				if st := e.Stats(); st.Queued != 0 || (temp == Delta && !final && st.Dropped != 0) || final && st.Dropped != 3 {
					t.Errorf("stats %+v; want the queue drained, nothing dropped", st)
				}
			})
		}
	}
}
