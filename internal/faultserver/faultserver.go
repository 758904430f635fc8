// Package faultserver is a receiver behind a switchable fault, for the
// fault matrix every push exporter is tested against: healthy, down,
// 500, 503, 429 with Retry-After, slower than any timeout, connection
// reset mid-body. Tests only.
package faultserver

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// Modes, in the order of Matrix.
const (
	OK   = "ok"
	Down = "down" // the connection is closed with no answer
	S500 = "500"  // 500 Internal Server Error
	S503 = "503"  // 503 with Retry-After: 1
	S429 = "429"  // 429 with Retry-After: 1
	// S429Once answers one request 429 with Retry-After: 1, then is OK.
	S429Once = "429-once"
	Slow     = "slow"  // reads the request, answers only when the client gives up
	Reset    = "reset" // reads part of the body, then resets the connection
)

// Matrix lists the faults.
var Matrix = []string{Down, S500, S503, S429, Slow, Reset}

// Server serves next in mode OK and fails as its mode says otherwise.
// Safe for concurrent use.
type Server struct {
	mode     atomic.Value // string
	Attempts atomic.Int64
	srv      *httptest.Server
	next     http.Handler
}

// New starts a server on 127.0.0.1 in mode OK, closed when t ends.
func New(t testing.TB, next http.Handler) *Server {
	s := &Server{next: next}
	s.mode.Store(OK)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the server's base URL.
func (s *Server) URL() string { return s.srv.URL }

// Set switches the fault.
func (s *Server) Set(mode string) {
	s.mode.Store(mode)
}

// Settle waits until the server has taken up n requests, the attempts
// the client made so far (its Stats().Requests), or until max has passed
// (an attempt cut short before it wrote its request never arrives). Call
// it before switching from a fault back to OK: on a loaded machine the
// server may read a request after the client gave up on it, and would
// then process under the new mode a request the client will send again
// (a duplicate delta: at-least-once delivery, not the exporter's fault).
func (s *Server) Settle(n int64, max time.Duration) {
	for deadline := time.Now().Add(max); s.Attempts.Load() < n && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.Attempts.Add(1)
	switch s.mode.Load().(string) {
	case Down:
		// Closing the listener would lose the port; a hijacked, closed
		// connection with no answer is what a client sees of a receiver
		// that died: no HTTP answer.
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return
	case S500:
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	case S503:
		w.Header().Set("Retry-After", "1")
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	case S429:
		w.Header().Set("Retry-After", "1")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return
	case S429Once:
		s.mode.Store(OK)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return
	case Slow:
		// The server notices a closed connection (and ends r.Context)
		// only once it has read the request.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
		return
	case Reset:
		buf := make([]byte, 16)
		_, _ = r.Body.Read(buf)
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // RST, not FIN
			}
			conn.Close()
		}
		return
	}
	s.next.ServeHTTP(w, r)
}
