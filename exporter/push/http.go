package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/zerostat/zerostat/internal/retry"
)

// Retryable marks err as worth another attempt, after after if positive,
// else after the backoff.
func Retryable(err error, after time.Duration) error { return retry.Retryable(err, after) }

// HTTPError is a non-2xx answer to a request.
type HTTPError struct {
	StatusCode int
	// Body is what the answer said: the start of its body, or the message
	// of a google.rpc.Status (OTLP).
	Body string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Body)
}

// Which answers are worth retrying differs by protocol.
type StatusRule func(code int) bool

// RetryAny5xx retries 429 and every 5xx: Prometheus remote write 1.0 ("MUST
// retry ... 5xx ... MAY retry 429", and every other 4xx is final) and
// zerostat's own receiver.
func RetryAny5xx(code int) bool { return code == http.StatusTooManyRequests || code/100 == 5 }

// RetryOTLP retries the codes the OTLP/HTTP specification lists as
// retryable: 429, 502, 503, 504
// (https://opentelemetry.io/docs/specs/otlp/#retryable-response-codes).
func RetryOTLP(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// Answer limits: the bytes of an answer read (a partial success, an error
// message) and the bytes drained after them so that the connection can be
// reused; a longer answer closes it.
const (
	maxAnswer   = 64 << 10
	drainAnswer = 256 << 10
	maxQuoted   = 512
	// maxRetryAfter caps a server's Retry-After: an export never waits
	// longer than its context allows anyway.
	maxRetryAfter = time.Hour
)

// HTTP posts requests: the transport every HTTP exporter shares.
type HTTP struct {
	URL    string
	Client *http.Client // nil: http.DefaultClient
	// Header holds the protocol's headers and the user's; set per request
	// after them: Content-Encoding from the Request.
	Header http.Header
	Retry  StatusRule
	// Message, if set, turns an error answer's body into the message
	// quoted in HTTPError (OTLP decodes a google.rpc.Status).
	Message func(h http.Header, body []byte) string
	// OK, if set, reads a 2xx answer (OTLP's partial success).
	OK func(h http.Header, body []byte)
}

// Post sends r once. It returns nil for a 2xx answer; an *HTTPError for
// another, wrapped by Retryable (with the answer's Retry-After) when the
// Retry rule says so; a network error wrapped by Retryable unless it
// cannot be helped by another attempt (an invalid URL, an unsupported
// scheme, a TLS certificate the client refuses, ctx ended).
func (h *HTTP) Post(ctx context.Context, r *Request) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(r.Body))
	if err != nil {
		return err
	}
	for k, vs := range h.Header {
		req.Header[k] = vs
	}
	if r.Encoding != "" {
		req.Header.Set("Content-Encoding", r.Encoding)
	}
	c := h.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		if ctx.Err() == nil && !Transient(err) {
			return err // the client cannot make this request: final
		}
		// Refused, reset, timed out, cut short: it may pass (the pipeline
		// does not wait past the export's deadline to try again).
		return retry.Retryable(err, 0)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainAnswer)) // let the connection be reused
	if resp.StatusCode/100 == 2 {
		if h.OK != nil {
			h.OK(resp.Header, body)
		}
		return nil
	}
	msg := ""
	if h.Message != nil {
		msg = h.Message(resp.Header, body)
	} else {
		msg = string(bytes.TrimSpace(body))
	}
	if len(msg) > maxQuoted {
		msg = msg[:maxQuoted]
	}
	herr := &HTTPError{StatusCode: resp.StatusCode, Body: msg}
	if h.Retry != nil && h.Retry(resp.StatusCode) {
		return retry.Retryable(herr, retry.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now(), maxRetryAfter))
	}
	return herr
}

// Transient reports whether an error from http.Client.Do may go away on
// another attempt: a network error (refused, reset, timeout, DNS) may; a
// request the client cannot make at all (an unsupported scheme, a
// malformed URL, a certificate it refuses) may not.
func Transient(err error) bool {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return true
	}
	var ne net.Error
	if errors.As(ue.Err, &ne) {
		return true
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.As(ue.Err, &opErr) || errors.As(ue.Err, &dnsErr) || errors.Is(ue.Err, io.EOF) || errors.Is(ue.Err, io.ErrUnexpectedEOF) {
		return true
	}
	// No network error inside: the client refused to make the request
	// (e.g. "unsupported protocol scheme").
	return false
}
