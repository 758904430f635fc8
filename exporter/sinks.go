package exporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/retry"
)

var (
	_ Sink = (*HTTPSink)(nil)
	_ Sink = (*WriterSink)(nil)
	_ Sink = FuncSink(nil)
)

// HTTPSink POSTs each payload to a URL with Content-Type
// application/msgpack (and Content-Encoding: gzip when compressed). Any
// answer but 2xx is an error quoting the status and the start of the body.
type HTTPSink struct {
	URL    string
	Client *http.Client // nil: http.DefaultClient
	Header http.Header  // extra request headers (authentication, ...)
}

// Send implements Sink.
func (s *HTTPSink) Send(ctx context.Context, p Payload) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(p.Data))
	if err != nil {
		return err
	}
	for k, vs := range s.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", wire.ContentType)
	if p.Encoding != "" {
		req.Header.Set("Content-Encoding", p.Encoding)
	}
	req.Header.Set("Zerostat-Sequence", strconv.FormatUint(p.Sequence, 10)+"."+strconv.FormatUint(p.Part, 10))
	c := s.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return err // out of time: retrying cannot help
		}
		if !transient(err) {
			return err // a bad scheme, no host, a TLS certificate: the same again
		}
		return retry.Retryable(err, 0) // refused, reset, DNS, a timeout: try again
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	if resp.StatusCode/100 != 2 {
		herr := &HTTPError{StatusCode: resp.StatusCode, Body: string(bytes.TrimSpace(msg))}
		if retry.HTTPStatusRetryable(resp.StatusCode) {
			return retry.Retryable(herr, retry.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now(), maxRetryAfter))
		}
		return herr
	}
	return nil
}

// transient reports whether an error from http.Client.Do may go away on a
// retry: a network error (refused, reset, DNS, a timeout) or a connection
// closed mid-answer (EOF). The client's other errors (*url.Error around an
// unsupported protocol scheme, a URL with no host, a certificate the
// client does not trust, too many redirects) come from the request or the
// client's set-up and would fail again the same way. An error that is not
// a *url.Error (a custom Client's own) keeps the old rule: retryable.
// It runs only on a failed send.
func transient(err error) bool {
	var uerr *url.Error
	if !errors.As(err, &uerr) {
		return true
	}
	var nerr net.Error
	return errors.As(uerr.Err, &nerr) || errors.Is(uerr.Err, io.EOF) || errors.Is(uerr.Err, io.ErrUnexpectedEOF)
}

// maxRetryAfter caps a server's Retry-After: an export never waits longer
// than its context allows anyway.
const maxRetryAfter = time.Minute

// HTTPError is a non-2xx answer from an HTTP sink.
type HTTPError struct {
	StatusCode int
	Body       string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Body)
}

// WriterSink writes each payload as a frame (4-byte big-endian length,
// then the payload; see wire.ReadFrame) to W: a file, stdout, a pipe.
// `zerostat decode` reads such a stream. A failed write is not retried: a
// partly written frame would corrupt the stream.
type WriterSink struct {
	W  io.Writer
	mu sync.Mutex
	b  []byte
}

// Send implements Sink.
func (s *WriterSink) Send(ctx context.Context, p Payload) error {
	if s.W == nil {
		return errors.New("exporter: WriterSink has a nil Writer")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = wire.AppendFrame(s.b[:0], p.Data)
	_, err := s.W.Write(s.b)
	return err
}

// FuncSink calls the function with each payload, in process. The payload's
// Data is valid only during the call.
type FuncSink func(ctx context.Context, p Payload) error

// Send implements Sink.
func (f FuncSink) Send(ctx context.Context, p Payload) error { return f(ctx, p) }
