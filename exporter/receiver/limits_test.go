package receiver_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/receiver"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/wiretest"
)

// post sends body and returns the status, Retry-After and body.
func post(t *testing.T, url string, body []byte) (int, string, string) {
	t.Helper()
	resp, err := http.Post(url, wire.ContentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(msg)
}

// served wraps h, sending on done each time a request's ServeHTTP returns
// (its reservation given back).
func served(h http.Handler, done chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		done <- struct{}{}
	})
}

const eventWait = 30 * time.Second // a deadline for events, never a timing

// TestInflightBudget: while one request holds its decoded payload (in
// OnPayload), a second that would pass MaxInflightBytes is answered 503
// with Retry-After and not stored; once the first is done, the same
// request is stored. The reservation held is exactly the payload's
// MemSize, and nothing stays reserved.
func TestInflightBudget(t *testing.T) {
	body := wiretest.DenseCounts(t, 5000) // ~20 KB, ~640 KB decoded
	entered, release := make(chan *wire.Payload), make(chan struct{})
	var mu sync.Mutex
	stored := 0
	first := true
	h := &receiver.Handler{MaxBodyBytes: 64 << 10, MaxDecompressedBytes: 64 << 10, MaxDecodedBytes: 1 << 20,
		MaxInflightBytes: 1, // raised to one request's caps: 1152 KiB
		OnPayload: func(p *wire.Payload) {
			mu.Lock()
			stored++
			block := first
			first = false
			mu.Unlock()
			if block {
				entered <- p
				<-release
			}
		}}
	done := make(chan struct{}, 3)
	srv := httptest.NewServer(served(h, done))
	defer srv.Close()

	firstStatus := make(chan int, 1)
	go func() {
		resp, err := http.Post(srv.URL, wire.ContentType, bytes.NewReader(body))
		if err != nil {
			firstStatus <- -1
			return
		}
		resp.Body.Close()
		firstStatus <- resp.StatusCode
	}()
	var p *wire.Payload
	select {
	case p = <-entered:
	case <-time.After(eventWait):
		t.Fatal("the first request never reached OnPayload")
	}
	if got := h.Inflight(); got != int64(p.MemSize()) {
		t.Errorf("held %d bytes in OnPayload; want the payload's MemSize %d", got, p.MemSize())
	}
	// The second needs its body and a 1 MiB decode reservation: more than
	// the 1152 KiB less the first's ~640 KiB.
	status, retry, msg := post(t, srv.URL, body)
	if status != http.StatusServiceUnavailable || retry != "1" || !strings.Contains(msg, "receiver busy") {
		t.Errorf("while full: %d, Retry-After %q, %q; want 503, 1", status, retry, msg)
	}
	<-done
	close(release)
	if s := <-firstStatus; s != http.StatusNoContent {
		t.Errorf("first request: %d", s)
	}
	<-done
	if n := h.Inflight(); n != 0 {
		t.Errorf("%d bytes reserved with no request", n)
	}
	if status, _, msg := post(t, srv.URL, body); status != http.StatusNoContent {
		t.Errorf("retried: %d %q; want 204", status, msg)
	}
	<-done
	if stored != 2 {
		t.Errorf("stored %d payloads; want 2", stored)
	}
}

// TestInflightBudgetConcurrentSafe: concurrent requests, some refused for
// the budget, some for their content: a good one is answered 204 or 503,
// a bad one 400 or 503 (which comes first depends on what else is in
// flight: a busy machine changes it, so the test does not count them),
// exactly the 204s are stored, and nothing stays reserved. Alone, a good
// request is stored and a bad one refused with 400.
func TestInflightBudgetConcurrentSafe(t *testing.T) {
	good := wiretest.DenseCounts(t, 2000)
	bad := wiretest.Rows(100, "v\xff")
	var mu sync.Mutex
	stored := 0
	h := &receiver.Handler{MaxBodyBytes: 64 << 10, MaxDecompressedBytes: 64 << 10, MaxDecodedBytes: 512 << 10,
		OnPayload: func(*wire.Payload) { mu.Lock(); stored++; mu.Unlock() }}
	h.MaxInflightBytes = 1 // one request's caps: 640 KiB, so requests often collide
	const workers, each = 4, 25
	counts := make(chan map[int]int, workers)
	start := make(chan struct{})
	for w := range workers {
		go func() {
			c := map[int]int{}
			<-start
			for i := range each {
				body, ok := good, 204
				if (w+i)%5 == 0 {
					body, ok = bad, 400
				}
				req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
				req.Header.Set("Content-Type", wire.ContentType)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != ok && rec.Code != http.StatusServiceUnavailable {
					c[-rec.Code]++ // a wrong answer for this body
				}
				c[rec.Code]++
			}
			counts <- c
		}()
	}
	close(start)
	total := map[int]int{}
	for range workers {
		for k, v := range <-counts {
			total[k] += v
		}
	}
	if total[204]+total[400]+total[503] != workers*each || total[-204]+total[-400] != 0 || total[400] > workers*each/5 {
		t.Errorf("answers %v (negative: a wrong answer for its body); want 204 or 503 for good bodies, 400 or 503 for the %d bad ones", total, workers*each/5)
	}
	if stored != total[204] {
		t.Errorf("stored %d; answered 204 %d times", stored, total[204])
	}
	for _, c := range []struct {
		body []byte
		want int
	}{{good, 204}, {bad, 400}} {
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(c.body))
		req.Header.Set("Content-Type", wire.ContentType)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("alone: %d; want %d", rec.Code, c.want)
		}
	}
	if stored != total[204]+1 {
		t.Errorf("stored %d; want %d", stored, total[204]+1)
	}
	if n := h.Inflight(); n != 0 {
		t.Errorf("%d bytes reserved with no request", n)
	}
}

// TestReadTimeout: a client that sends headers and part of its body, then
// stalls, is answered 408 once ReadTimeout (1 s here) passes, and its
// connection is closed; the handler returns. Before, it held the
// connection as long as the client wished (over 120 s measured).
func TestReadTimeout(t *testing.T) {
	h := &receiver.Handler{ReadTimeout: time.Second, OnPayload: func(*wire.Payload) { t.Error("stored a stalled body") }}
	done := make(chan struct{}, 1)
	srv := httptest.NewServer(served(h, done))
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: 1000\r\n\r\n0123456789", wire.ContentType)
	select {
	case <-done:
	case <-time.After(eventWait):
		t.Fatal("the handler did not return")
	}
	c.SetReadDeadline(time.Now().Add(eventWait))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(msg), "reading body: not done within 1s") {
		t.Errorf("got %d %q; want 408", resp.StatusCode, msg)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the answer: %v; want the connection closed (EOF)", err)
	}
	if n := h.Inflight(); n != 0 {
		t.Errorf("%d bytes reserved with no request", n)
	}
}

// hostileCases are requests at the default limits (8 MiB decompressed,
// 64 MiB decoded) built to cost the receiver as much memory as they can.
func hostileCases() []struct {
	name   string
	body   []byte
	gzip   bool
	status int
} {
	return []struct {
		name   string
		body   []byte
		gzip   bool
		status int
	}{
		// 64 KB of gzip, 64 MiB of zeros: was decompressed to the old
		// 64 MiB cap (and 128 MiB allocated as its buffer doubled).
		{"gzip bomb", gz(make([]byte, 64<<20)), true, 413},
		// 8 MiB of 2-byte rows (~8 KB gzipped): 384 MiB if decoded.
		{"decoded 48x", gz(wiretest.Rows(4<<20-100, "v")), true, 413},
		// 8 MiB of 1-byte rows in version 2's columns: 768 MiB if decoded.
		{"decoded 96x, version 2", gz(wiretest.Columns(8<<20-100, "v")), true, 413},
		// The largest of such payloads the decoded cap admits.
		{"decoded just within the cap", gz(wiretest.Rows(650000, "v")), true, 204},
		{"decoded just within the cap, identity", wiretest.Rows(650000, "v"), false, 204},
	}
}

// TestHostileMemoryBounded: what each hostile request allocates, read
// from runtime.MemStats, stays within one request's budget
// (MaxBodyBytes + MaxDecompressedBytes + MaxDecodedBytes, 80 MiB).
func TestHostileMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates ~100 MiB")
	}
	const budget = receiver.DefaultMaxBodyBytes + receiver.DefaultMaxDecompressedBytes + receiver.DefaultMaxDecodedBytes
	for _, tc := range hostileCases() {
		h := &receiver.Handler{OnPayload: func(*wire.Payload) {}}
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(tc.body))
		req.Header.Set("Content-Type", wire.ContentType)
		if tc.gzip {
			req.Header.Set("Content-Encoding", "gzip")
		}
		rec := httptest.NewRecorder()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		h.ServeHTTP(rec, req)
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d bytes sent, answered %d, allocated %.1f MiB", tc.name, len(tc.body), rec.Code, float64(alloc)/(1<<20))
		if rec.Code != tc.status {
			t.Errorf("%s: %d %q; want %d", tc.name, rec.Code, rec.Body, tc.status)
		}
		if alloc > budget {
			t.Errorf("%s: allocated %d bytes; the budget of one request is %d", tc.name, alloc, budget)
		}
	}
}

// BenchmarkHostile reports the bytes each hostile request allocates
// (B/op) at the default limits.
func BenchmarkHostile(b *testing.B) {
	for _, tc := range hostileCases() {
		b.Run(strings.ReplaceAll(tc.name, " ", "_"), func(b *testing.B) {
			h := &receiver.Handler{OnPayload: func(*wire.Payload) {}}
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.body)))
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(tc.body))
				req.Header.Set("Content-Type", wire.ContentType)
				if tc.gzip {
					req.Header.Set("Content-Encoding", "gzip")
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != tc.status {
					b.Fatalf("%d", rec.Code)
				}
			}
		})
	}
}

// TestDefaultCapsFitExporterPayloads: a payload zerostat's exporter
// writes at its default size cap decodes within the receiver's default
// decoded cap, in both wire format versions, for the densest views it
// writes (count rows of two small tag refs: version 2's columns take 3
// bytes a row where version 1 takes 4, for the same 128-byte decoded
// row). A payload over the cap is refused with 413 and not sent again:
// these caps must not drop what a default exporter sends.
func TestDefaultCapsFitExporterPayloads(t *testing.T) {
	limit := float64(receiver.DefaultMaxDecodedBytes) / float64(exporter.DefaultMaxPayloadBytes)
	for _, version := range wire.Versions {
		b := wiretest.DenseCountsVersion(t, 12000, version)
		p, err := wire.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		ratio := float64(p.MemSize()) / float64(len(b))
		t.Logf("version %d: %d bytes decode to %d: %.1fx (the default caps allow %.0fx)", version, len(b), p.MemSize(), ratio, limit)
		if ratio > limit {
			t.Errorf("version %d: a payload decodes to %.1fx its size; a default exporter's 1 MiB payload would pass the receiver's default %d MiB", version, ratio, receiver.DefaultMaxDecodedBytes>>20)
		}
	}
}
