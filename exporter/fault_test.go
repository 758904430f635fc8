package exporter

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/receiver"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/faultserver"
	"github.com/zerostat/zerostat/internal/testlog"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// flakyBackend is a receiver behind the fault matrix every push exporter
// is tested against (internal/faultserver), keeping what it received.
type flakyBackend struct {
	mode     *faultserver.Server
	mu       sync.Mutex
	received []*wire.Payload
	srv      struct{ URL string }
}

func newFlakyBackend(t testing.TB) *flakyBackend {
	b := &flakyBackend{}
	h := &receiver.Handler{OnPayload: func(p *wire.Payload) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.received = append(b.received, p)
	}}
	b.mode = faultserver.New(t, h)
	b.srv.URL = b.mode.URL()
	return b
}

// total sums a view's counts over payloads (all of them for delta, the
// last cycle's for cumulative).
func (b *flakyBackend) total(name string, delta bool) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var n uint64
	var lastSeq uint64
	for _, p := range b.received {
		lastSeq = max(lastSeq, p.Sequence)
	}
	for _, p := range b.received {
		if !delta && p.Sequence != lastSeq {
			continue
		}
		for _, v := range p.Views {
			if v.Name != name {
				continue
			}
			for _, r := range v.Rows {
				n += r.Count
			}
			if v.Overflow != nil {
				n += v.Overflow.Count
			}
		}
	}
	return n
}

var faultSeq atomic.Int64

func TestFaultsRecoverExactly(t *testing.T) {
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	downURL := "http://" + closed.Addr().String() + "/"
	closed.Close()

	// The shared matrix, and a receiver that is not there at all
	// (connection refused).
	for _, fault := range append([]string{"refused"}, faultserver.Matrix...) {
		for _, temp := range []wire.Temporality{Cumulative, Delta} {
			t.Run(fmt.Sprint(fault, "/", temp), func(t *testing.T) {
				b := newFlakyBackend(t)
				name := fmt.Sprintf("fault/%d", faultSeq.Add(1))
				m := stats.Int64(name, "", "")
				v := &view.View{Name: name, Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}}
				if err := view.Register(v); err != nil {
					t.Fatal(err)
				}
				defer view.Unregister(v)

				logger, logs := testlog.New()
				url := b.srv.URL + "/"
				sink := &HTTPSink{URL: url}
				// Timeout 2 s: a healthy attempt on a loaded machine is
				// never cut short (a cut delta attempt the receiver did
				// take would be sent twice).
				e, err := New(sink, Options{Temporality: temp, Timeout: 2 * time.Second,
					Retry:  Retry{InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond},
					Logger: logger})
				if err != nil {
					t.Fatal(err)
				}
				record := func(n int) {
					for i := range n {
						ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, fmt.Sprint("/r", i%7)))
						stats.Record(ctx, m.M(1))
					}
				}
				record(100)
				// A healthy export has seconds; a failing one ends when its
				// deadline does (its failure is the expected outcome, so a
				// short deadline cannot make the test fail).
				export := func(d time.Duration) error {
					ctx, cancel := context.WithTimeout(context.Background(), d)
					defer cancel()
					return e.Export(ctx)
				}
				if err := export(10 * time.Second); err != nil { // healthy first
					t.Fatal(err)
				}

				// The fault: exports fail, recorders go on.
				if fault == "refused" {
					sink.URL = downURL
				} else {
					b.mode.Set(fault)
				}
				var wg sync.WaitGroup
				wg.Add(1)
				go func() { defer wg.Done(); record(1000) }() // records during the failing export
				for range 2 {
					if err := export(time.Second); err == nil {
						t.Fatalf("export succeeded against %q", fault)
					}
				}
				wg.Wait()
				s := e.Stats()
				if temp == Delta && s.Queued == 0 {
					t.Errorf("delta payloads were not queued: %+v", s)
				}
				if temp == Cumulative && (s.Queued != 0 || s.Dropped == 0) {
					t.Errorf("cumulative payloads: %+v; want dropped, not queued", s)
				}
				// Retried within the export: no answer, 500, a reset. (429
				// and 503 ask for 1 s, the export's whole deadline; a slow
				// receiver takes it all.)
				if (fault == faultserver.Down || fault == faultserver.S500 || fault == faultserver.Reset || fault == "refused") && s.Retries == 0 {
					t.Errorf("no retries against %q: %+v", fault, s)
				}

				// Recovery: the totals received are exactly the totals recorded.
				if fault != "refused" { // no attempt reached a server
					b.mode.Settle(int64(s.Requests), 10*time.Second)
				}
				sink.URL = url
				b.mode.Set(faultserver.OK)
				record(10)
				if err := export(10 * time.Second); err != nil {
					t.Fatal(err)
				}
				if got := b.total(name, temp == Delta); got != 1110 {
					t.Errorf("received %d; want all 1110 recordings", got)
				}
				if s := e.Stats(); s.Queued != 0 {
					t.Errorf("queue not drained: %+v", s)
				}
				if l := logs.Lines(); len(l) != 2 || !strings.Contains(l[0], "WARN zerostat exporter: exports failing") ||
					!strings.Contains(l[1], "INFO zerostat exporter: exports recovered") || !strings.Contains(l[1], "failed_exports=2") {
					t.Errorf("logs %q; want one failing and one recovered line", l)
				}
			})
		}
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	b := newFlakyBackend(t)
	newFixture(t, 3)
	b.mode.Set(faultserver.S429Once)
	e, _ := New(&HTTPSink{URL: b.srv.URL + "/"}, Options{Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := e.Export(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("retried after %v; the server asked for 1 s", d)
	}
	if s := e.Stats(); s.Retries != 1 || s.Failures != 0 {
		t.Errorf("stats %+v; want one retry, no failure", s)
	}
}

func TestQueueBoundedDropsOldest(t *testing.T) {
	f := newFixture(t, 50)
	fail := true
	var got []uint64
	sink := FuncSink(func(_ context.Context, p Payload) error {
		if fail {
			return Retryable(fmt.Errorf("down"), time.Hour) // may pass: queued, not retried now
		}
		got = append(got, p.Sequence)
		return nil
	})
	e, _ := New(sink, Options{Temporality: Delta, MaxQueuedBytes: 4096, MaxPayloadBytes: 1024, Logger: slog.New(slog.DiscardHandler)})
	for range 5 {
		f.record(t, 50, 1)
		_ = e.Export(context.Background())
	}
	s := e.Stats()
	if s.QueuedBytes > 4096 || s.Dropped == 0 || s.Queued == 0 {
		t.Fatalf("stats %+v; want the queue capped at 4096 bytes and the oldest dropped", s)
	}
	fail = false
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	// What was kept went out oldest first, before the new cycle.
	for i := 1; i < len(got); i++ {
		if got[i] < got[i-1] {
			t.Fatalf("sequences out of order: %v", got)
		}
	}
	if got[len(got)-1] != 6 {
		t.Errorf("last payload from cycle %d; want the new cycle 6", got[len(got)-1])
	}
}

func TestStopReportsUnsent(t *testing.T) {
	newFixture(t, 5)
	e, _ := New(FuncSink(func(context.Context, Payload) error { return Retryable(fmt.Errorf("down"), time.Hour) }),
		Options{Temporality: Delta, Interval: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	e.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := e.Stop(ctx)
	if err == nil || !strings.Contains(err.Error(), "stopped with 1 requests") {
		t.Errorf("Stop: %v; want a report of the unsent payload", err)
	}
}

func TestClientErrorNotRetried(t *testing.T) {
	newFixture(t, 3)
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "bad payload", http.StatusBadRequest)
	}))
	defer srv.Close()
	e, _ := New(&HTTPSink{URL: srv.URL}, Options{Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := e.Export(ctx)
	if err == nil || !strings.Contains(err.Error(), "HTTP 400") || calls.Load() != 1 {
		t.Errorf("%v after %d requests; want HTTP 400 after exactly one", err, calls.Load())
	}
	if s := e.Stats(); s.Retries != 0 {
		t.Errorf("retried a 400: %+v", s)
	}
}

// TestSlowAttemptRetried: a send that runs out of its per-attempt Timeout
// while the export still has time is retried, not counted as lost.
func TestSlowAttemptRetried(t *testing.T) {
	newFixture(t, 3)
	var calls atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			select { // the first request hangs past the attempt's timeout
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	defer close(release)
	// Timeout 1 s: the first attempt hangs until it runs out; the second
	// must not (a loaded machine has a second).
	e, err := New(&HTTPSink{URL: srv.URL}, Options{Timeout: time.Second, Retry: Retry{InitialBackoff: 10 * time.Millisecond}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Export(ctx); err != nil {
		t.Fatalf("export after one slow attempt: %v", err)
	}
	if s := e.Stats(); s.Retries != 1 || s.Sent != 1 || s.Failures != 0 || calls.Load() != 2 {
		t.Errorf("stats %+v after %d requests; want 1 retry, 1 payload, 2 requests", s, calls.Load())
	}
}
