package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/zerostat/zerostat/exporter/push"
	"github.com/zerostat/zerostat/exporter/wire"
)

var (
	_ Sink = (*HTTPSink)(nil)
	_ Sink = (*WriterSink)(nil)
	_ Sink = FuncSink(nil)
)

// HTTPSink POSTs each payload to a URL with Content-Type
// application/msgpack (and Content-Encoding: gzip when compressed). Any
// answer but 2xx is an *HTTPError quoting the status and the start of the
// body; 429 and 5xx answers and network errors are retried, other answers
// and requests the client cannot make (an unsupported scheme) are final.
type HTTPSink struct {
	URL    string
	Client *http.Client // nil: http.DefaultClient
	Header http.Header  // extra request headers (authentication, ...)
}

// Send implements Sink.
func (s *HTTPSink) Send(ctx context.Context, p Payload) error {
	h := make(http.Header, len(s.Header)+2)
	for k, vs := range s.Header {
		h[k] = vs
	}
	h.Set("Content-Type", wire.ContentType)
	h.Set("Zerostat-Sequence", strconv.FormatUint(p.Sequence, 10)+"."+strconv.FormatUint(p.Part, 10))
	t := push.HTTP{URL: s.URL, Client: s.Client, Header: h, Retry: push.RetryAny5xx}
	return t.Post(ctx, &push.Request{Body: p.Data, Encoding: p.Encoding, Sequence: p.Sequence, Part: p.Part, Last: p.Last})
}

// HTTPError is a non-2xx answer from an HTTP sink (the type every zerostat
// HTTP exporter returns).
type HTTPError = push.HTTPError

// WriterSink writes each payload as a frame (4-byte big-endian length,
// then the payload; see wire.ReadFrame) to W: a file, stdout, a pipe.
// `zerostat decode` reads such a stream.
//
// A failed write is never retried as it is: a partly written frame
// followed by a whole one would corrupt the stream. When W can be cut
// back (an *os.File, or anything with Truncate and Seek), a partial frame
// is removed and the failure is worth retrying (ENOSPC may pass); when it
// cannot, the sink is broken from then on: every later Send fails with the
// first error, which is final (not Retryable), so the exporter drops the
// payloads and counts them (Stats.Dropped) instead of writing after
// garbage or queueing what no write will ever take.
//
// Send returns when ctx ends, even if W blocks (a full pipe nobody
// reads): the write is abandoned, and since it may still complete in part
// later, the stream is broken as after a failed write. So an exporter's
// Stop returns by its deadline whatever W does. Cost: a goroutine and a
// channel per Send, for the write.
type WriterSink struct {
	W      io.Writer
	mu     sync.Mutex
	b      []byte
	broken error
}

// truncater is what WriterSink needs to cut a partial frame back.
type truncater interface {
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
}

// Send implements Sink.
func (s *WriterSink) Send(ctx context.Context, p Payload) error {
	if s.W == nil {
		return errors.New("exporter: WriterSink has a nil Writer")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return s.broken
	}
	var off int64 = -1
	t, canCut := s.W.(truncater)
	if canCut {
		if o, err := t.Seek(0, io.SeekCurrent); err == nil {
			off = o
		}
	}
	s.b = wire.AppendFrame(s.b[:0], p.Data)
	n, abandoned, err := s.write(ctx)
	if abandoned {
		s.b = nil // the write still holds it
		s.broken = fmt.Errorf("exporter: WriterSink abandoned a write of a %d-byte frame that had not returned when its context ended; the stream may hold part of it, nothing more is written: %w", len(p.Data)+4, ctx.Err())
		return s.broken
	}
	if err == nil {
		return nil
	}
	if n == 0 {
		return Retryable(err, 0) // nothing written: the stream is intact
	}
	if off >= 0 {
		if terr := t.Truncate(off); terr == nil {
			if _, serr := t.Seek(off, io.SeekStart); serr == nil {
				return Retryable(fmt.Errorf("exporter: WriterSink wrote %d of %d bytes of a frame (removed): %w", n, len(s.b), err), 0)
			}
		}
	}
	s.broken = fmt.Errorf("exporter: WriterSink wrote %d of %d bytes of a frame and cannot remove them; the stream is corrupt from there, nothing more is written: %w", n, len(s.b), err)
	return s.broken
}

// write writes s.b to s.W, returning what Write returned, or abandoned
// when ctx ends first (the write goes on in its goroutine, with s.b).
func (s *WriterSink) write(ctx context.Context) (n int, abandoned bool, err error) {
	if ctx.Err() != nil {
		return 0, false, ctx.Err() // nothing written: worth a retry, if time is left
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	w, b := s.W, s.b
	go func() {
		n, err := w.Write(b)
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		return r.n, false, r.err
	case <-ctx.Done():
		select {
		case r := <-done: // returned meanwhile
			return r.n, false, r.err
		default:
			return 0, true, nil
		}
	}
}

// FuncSink calls the function with each payload, in process. The payload's
// Data is valid only during the call.
type FuncSink func(ctx context.Context, p Payload) error

// Send implements Sink.
func (f FuncSink) Send(ctx context.Context, p Payload) error { return f(ctx, p) }
