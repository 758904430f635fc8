package otlp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/internal/retry"
)

const (
	userAgent = "zerostat-otlp"
	// maxResponse caps the bytes of an answer read (a partial success or
	// an error status); the rest is drained, up to drainResponse, so the
	// connection can be reused.
	maxResponse   = 64 << 10
	drainResponse = 256 << 10
	// maxErrorBody caps the answer quoted in an HTTPError.
	maxErrorBody = 512
)

// send POSTs body, retrying as e.opts.Retry says, within ctx and the
// Interval.
func (e *Exporter) send(ctx context.Context, body []byte, encoding string) (*PartialSuccess, error) {
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > e.opts.Interval {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.opts.Interval)
		defer cancel()
	}
	var ps *PartialSuccess
	pol := retry.Policy{Initial: e.opts.Retry.InitialBackoff, Max: e.opts.Retry.MaxBackoff}
	attempts, err := retry.Do(ctx, pol, func(ctx context.Context) error {
		p, a, err := e.post(ctx, body, encoding)
		if err == nil {
			ps = p
			return nil
		}
		if !a.retry || e.opts.Retry.Disabled {
			return err
		}
		return retry.Retryable(err, a.retryAfter)
	})
	if attempts > 1 {
		e.retries.Add(uint64(attempts - 1))
	}
	if err != nil {
		return nil, fmt.Errorf("%w (%d attempts)", err, attempts)
	}
	return ps, nil
}

// answer says what to do after a failed request.
type answer struct {
	retry      bool
	retryAfter time.Duration // the answer's Retry-After; 0 if none
}

// post makes one request.
func (e *Exporter) post(ctx context.Context, body []byte, encoding string) (*PartialSuccess, answer, error) {
	e.requests.Add(1)
	rctx := ctx
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > e.opts.Timeout {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, e.opts.Timeout)
		defer cancel()
	}
	final := answer{}
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return nil, final, fmt.Errorf("otlp: %w", err)
	}
	for k, vs := range e.opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", ContentType)
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", userAgent)
	}
	c := e.opts.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		// No answer (refused, reset, this request's timeout): retryable,
		// unless the export itself is over.
		return nil, answer{retry: ctx.Err() == nil}, fmt.Errorf("otlp: %w", err) // a *url.Error: "Post URL: ..."
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainResponse))
	if resp.StatusCode/100 == 2 {
		if !isProtobuf(resp.Header) || len(data) == 0 {
			return nil, final, nil
		}
		ps, _ := parsePartialSuccess(data) // undecodable: not a partial success
		return ps, final, nil
	}
	herr := &exporter.HTTPError{StatusCode: resp.StatusCode, Body: errorMessage(resp.Header, data)}
	err = fmt.Errorf("otlp: POST %s: %w", e.url, herr)
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		// The retryable codes of the OTLP/HTTP specification
		// (https://opentelemetry.io/docs/specs/otlp/#retryable-response-codes).
		return nil, answer{retry: true, retryAfter: retry.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now(), time.Hour)}, err
	}
	return nil, final, err
}

// empty or invalid.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseUint(v, 10, 31); err == nil {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return -1
}

func isProtobuf(h http.Header) bool {
	ct := h.Get("Content-Type")
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == ContentType
}

// errorMessage returns what to quote of an error answer: a protobuf
// google.rpc.Status's message (what OTLP/HTTP receivers send), else the
// start of the body.
func errorMessage(h http.Header, data []byte) string {
	if isProtobuf(h) {
		if msg, ok := parseStatusMessage(data); ok {
			data = []byte(msg)
		}
	}
	data = bytes.TrimSpace(data)
	if len(data) > maxErrorBody {
		data = data[:maxErrorBody]
	}
	return string(data)
}

var errMalformed = errors.New("otlp: malformed protobuf")

// field is one field read by nextField.
type field struct {
	num  uint64
	typ  uint8
	v    uint64 // varint and fixed values
	data []byte // length-delimited content
}

// nextField reads the field at the start of b and returns the rest.
func nextField(b []byte) (f field, rest []byte, err error) {
	key, n := binary.Uvarint(b)
	if n <= 0 {
		return f, nil, errMalformed
	}
	b = b[n:]
	f.num, f.typ = key>>3, uint8(key&7)
	switch f.typ {
	case wireVarint:
		if f.v, n = binary.Uvarint(b); n <= 0 {
			return f, nil, errMalformed
		}
		return f, b[n:], nil
	case wireFixed64:
		if len(b) < 8 {
			return f, nil, errMalformed
		}
		f.v = binary.LittleEndian.Uint64(b)
		return f, b[8:], nil
	case wireBytes:
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return f, nil, errMalformed
		}
		f.data = b[n : n+int(l)]
		return f, b[n+int(l):], nil
	case 5: // fixed32
		if len(b) < 4 {
			return f, nil, errMalformed
		}
		return f, b[4:], nil
	}
	return f, nil, errMalformed
}

// parsePartialSuccess decodes an ExportMetricsServiceResponse. It returns
// nil when the response reports no partial success.
func parsePartialSuccess(b []byte) (*PartialSuccess, error) {
	var ps *PartialSuccess
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, err
		}
		b = rest
		if f.num != tagResponsePartialSuccess>>3 || f.typ != wireBytes {
			continue
		}
		p := PartialSuccess{}
		for d := f.data; len(d) > 0; {
			g, rest, err := nextField(d)
			if err != nil {
				return nil, err
			}
			d = rest
			switch {
			case g.num == tagPSRejected>>3 && g.typ == wireVarint:
				p.RejectedDataPoints = int64(g.v)
			case g.num == tagPSMessage>>3 && g.typ == wireBytes:
				p.ErrorMessage = string(g.data)
			}
		}
		// "If the request is only partially accepted [...] the server
		// MUST initialize the partial_success field"; an empty one means
		// full success.
		if p.RejectedDataPoints != 0 || p.ErrorMessage != "" {
			ps = &p
		}
	}
	return ps, nil
}

// parseStatusMessage returns the message of a google.rpc.Status.
func parseStatusMessage(b []byte) (string, bool) {
	msg, found := "", false
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return "", false
		}
		b = rest
		if f.num == tagStatusMessage>>3 && f.typ == wireBytes {
			msg, found = string(f.data), true
		}
	}
	return msg, found
}
