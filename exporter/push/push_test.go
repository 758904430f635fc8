package push

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/retry"
)

var quiet = slog.New(slog.DiscardHandler)

// fakeTransport fails while down is set, and counts what it delivered.
type fakeTransport struct {
	down  atomic.Bool
	final bool // a final failure, not one that may pass
	// retryNow: the failure may pass and is worth retrying at once; else
	// it asks for an hour (queued, not retried within the export).
	retryNow bool
	calls    atomic.Int64
	points   atomic.Int64
	seqs     []uint64
}

func (f *fakeTransport) send(_ context.Context, r *Request) error {
	f.calls.Add(1)
	if f.down.Load() {
		err := errors.New("receiver down")
		switch {
		case f.final:
			return err
		case f.retryNow:
			return Retryable(err, 0)
		}
		return Retryable(err, time.Hour)
	}
	f.points.Add(int64(r.Points))
	f.seqs = append(f.seqs, r.Sequence)
	return nil
}

func newPipe(t *testing.T, cfg Config, f *fakeTransport) *Pipeline {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	p, err := New(cfg, f.send, "test: ")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func sendN(seq uint64, points ...int) func(*Cycle) error {
	return func(c *Cycle) error {
		for i, n := range points {
			body := []byte(fmt.Sprint("request ", seq, ".", i))
			if err := c.Send(&Request{Body: body, Points: n, Sequence: seq, Part: uint64(i), Last: i == len(points)-1}); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestQueueFlushedWhenNothingNew: a request queued during an outage is
// sent by the next export even when that export has nothing new (the OTLP
// exporter returned early and stranded it), and by Stop.
func TestQueueFlushedWhenNothingNew(t *testing.T) {
	for _, viaStop := range []bool{false, true} {
		f := &fakeTransport{}
		p := newPipe(t, Config{Queue: true}, f)
		f.down.Store(true)
		if err := p.Export(context.Background(), sendN(1, 5)); err == nil {
			t.Fatal("export to a receiver that is down succeeded")
		}
		if s := p.Stats(); s.Queued != 1 || s.QueuedPoints != 5 {
			t.Fatalf("stats %+v; want one request of 5 points queued", s)
		}
		f.down.Store(false)
		nothing := func(*Cycle) error { return nil }
		var err error
		if viaStop {
			err = p.Stop(context.Background(), nothing, nil)
		} else {
			err = p.Export(context.Background(), nothing)
		}
		if err != nil {
			t.Fatal(err)
		}
		if s := p.Stats(); f.points.Load() != 5 || s.Queued != 0 || s.Points != 5 || s.Dropped != 0 {
			t.Errorf("stop=%v: receiver got %d points, stats %+v; want all 5, queue empty", viaStop, f.points.Load(), s)
		}
	}
}

// TestQueueOrderAndBound: queued requests go first, oldest first; past
// MaxQueuedBytes the oldest are dropped and counted with their points.
func TestQueueOrderAndBound(t *testing.T) {
	f := &fakeTransport{}
	p := newPipe(t, Config{Queue: true, MaxQueuedBytes: 3 * len("request 1.0")}, f)
	f.down.Store(true)
	for seq := uint64(1); seq <= 5; seq++ {
		_ = p.Export(context.Background(), sendN(seq, 1))
	}
	s := p.Stats()
	if s.Queued != 3 || s.Dropped != 2 || s.DroppedPoints != 2 {
		t.Fatalf("stats %+v; want 3 queued, the 2 oldest dropped", s)
	}
	f.down.Store(false)
	if err := p.Export(context.Background(), sendN(6, 1)); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(f.seqs); got != "[3 4 5 6]" {
		t.Errorf("delivered sequences %s; want [3 4 5 6]", got)
	}
}

// TestCumulativeStopsAtFirstFailure: without a queue, the first failure
// ends the cycle; the producer hears it and the rest is not tried.
func TestCumulativeStopsAtFirstFailure(t *testing.T) {
	f := &fakeTransport{}
	p := newPipe(t, Config{}, f)
	f.down.Store(true)
	err := p.Export(context.Background(), sendN(1, 2, 3, 4))
	if err == nil || !strings.Contains(err.Error(), "receiver down") {
		t.Fatalf("export: %v", err)
	}
	if s := p.Stats(); f.calls.Load() != 1 || s.Dropped != 1 || s.DroppedPoints != 2 || s.Queued != 0 || s.Failures != 1 {
		t.Errorf("%d calls, stats %+v; want 1 call, 1 request dropped", f.calls.Load(), s)
	}
}

// TestFinalFailureDropsOnlyThatRequest: a request the receiver refuses
// for good is dropped and counted, never queued (it would be refused
// again and hold up the queue), and the cycle goes on.
func TestFinalFailureDropsOnlyThatRequest(t *testing.T) {
	f := &fakeTransport{final: true}
	p := newPipe(t, Config{Queue: true}, f)
	f.down.Store(true)
	if err := p.Export(context.Background(), sendN(1, 2, 3)); err == nil {
		t.Fatal("export of refused requests succeeded")
	}
	if s := p.Stats(); f.calls.Load() != 2 || s.Queued != 0 || s.Dropped != 2 || s.DroppedPoints != 5 {
		t.Errorf("%d calls, stats %+v; want both tried and dropped, none queued", f.calls.Load(), s)
	}
}

// TestRetryDisabled: a retryable failure is final when retries are off.
func TestRetryDisabled(t *testing.T) {
	for _, disabled := range []bool{false, true} {
		f := &fakeTransport{retryNow: true}
		f.down.Store(true)
		p := newPipe(t, Config{Retry: Retry{Disabled: disabled, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}}, f)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = p.Export(ctx, sendN(1, 1))
		cancel()
		if n := f.calls.Load(); disabled && n != 1 || !disabled && n < 2 {
			t.Errorf("disabled=%v: %d attempts", disabled, n)
		}
	}
}

// TestStateLoggedOnce: failing and recovering are logged once each,
// however many exports fail.
func TestStateLoggedOnce(t *testing.T) {
	var lines []string
	h := slog.NewTextHandler(writerFunc(func(b []byte) { lines = append(lines, string(b)) }), nil)
	f := &fakeTransport{}
	p := newPipe(t, Config{Logger: slog.New(h), Name: "x"}, f)
	f.down.Store(true)
	for range 3 {
		_ = p.Export(context.Background(), sendN(1, 1))
	}
	f.down.Store(false)
	for range 2 {
		_ = p.Export(context.Background(), sendN(2, 1))
	}
	if len(lines) != 2 || !strings.Contains(lines[0], "exports failing") || !strings.Contains(lines[1], "exports recovered") || !strings.Contains(lines[1], "failed_exports=3") {
		t.Errorf("log %q; want one failing and one recovered line", lines)
	}
}

type writerFunc func([]byte)

func (w writerFunc) Write(b []byte) (int, error) { w(b); return len(b), nil }

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Interval: -1}, "test: Interval"},
		{Config{Timeout: -1}, "test: Timeout"},
		{Config{MaxQueuedBytes: -1}, "test: MaxQueuedBytes"},
		{Config{Retry: Retry{InitialBackoff: -1}}, "test: Retry backoff"},
		{Config{Retry: Retry{InitialBackoff: time.Second, MaxBackoff: time.Millisecond}}, "test: Retry.MaxBackoff"},
	} {
		if _, err := New(c.cfg, (&fakeTransport{}).send, "test: "); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", c.cfg, err, c.want)
		}
	}
}

// TestHTTPRetryRules: which answers each protocol retries.
func TestHTTPRetryRules(t *testing.T) {
	for code, want := range map[int][2]bool{ // [any 5xx rule, OTLP rule]
		400: {false, false}, 404: {false, false}, 429: {true, true}, 500: {true, false},
		501: {true, false}, 502: {true, true}, 503: {true, true}, 504: {true, true}, 505: {true, false},
	} {
		if got := [2]bool{RetryAny5xx(code), RetryOTLP(code)}; got != want {
			t.Errorf("%d: retried %v; want %v", code, got, want)
		}
	}
}

// TestHTTPPost: status, Retry-After and the classification of client
// errors through the shared transport.
func TestHTTPPost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/429":
			w.Header().Set("Retry-After", "7")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		case "/400":
			http.Error(w, "bad", http.StatusBadRequest)
		default:
			if r.Header.Get("Content-Encoding") != "gzip" || r.Header.Get("X-Test") != "1" {
				http.Error(w, "headers", http.StatusBadRequest)
			}
		}
	}))
	defer srv.Close()
	post := func(path string) error {
		h := HTTP{URL: srv.URL + path, Header: http.Header{"X-Test": {"1"}}, Retry: RetryAny5xx}
		return h.Post(context.Background(), &Request{Body: []byte("x"), Encoding: "gzip"})
	}
	if err := post("/"); err != nil {
		t.Errorf("2xx: %v", err)
	}
	err := post("/429")
	var he *HTTPError
	if !isRetryable(err) || !errors.As(err, &he) || he.StatusCode != 429 || !strings.Contains(err.Error(), "slow down") {
		t.Errorf("429: %v; want a retryable HTTPError", err)
	}
	if err := post("/400"); !errors.As(err, &he) || he.StatusCode != 400 || isRetryable(err) {
		t.Errorf("400: %v; want a final HTTPError", err)
	}
	// No answer: retryable. A request the client cannot make: final.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	h := HTTP{URL: "http://" + addr + "/"}
	if err := h.Post(context.Background(), &Request{}); !isRetryable(err) {
		t.Errorf("connection refused: %v; want retryable", err)
	}
	h = HTTP{URL: "ftp://" + addr + "/"}
	if err := h.Post(context.Background(), &Request{}); err == nil || isRetryable(err) {
		t.Errorf("unsupported scheme: %v; want a final error", err)
	}
}

func isRetryable(err error) bool {
	var re *retry.Error
	return errors.As(err, &re)
}
