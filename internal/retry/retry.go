// Package retry is the retry policy shared by zerostat's exporters:
// exponential backoff with full jitter, bounded by a deadline, honouring a
// server's Retry-After.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Policy is an exponential backoff: the n-th wait is drawn uniformly from
// [0, min(Max, Initial*2^n)) ("full jitter", so that many exporters failing
// together do not retry together).
type Policy struct {
	Initial time.Duration // first backoff ceiling; default 100 ms
	Max     time.Duration // largest backoff ceiling; default 5 s
}

func (p Policy) ceiling(attempt int) time.Duration {
	ini, mx := p.Initial, p.Max
	if ini <= 0 {
		ini = 100 * time.Millisecond
	}
	if mx <= 0 {
		mx = 5 * time.Second
	}
	d := ini
	for range attempt {
		if d >= mx/2 { // also keeps d*2 from overflowing
			return mx
		}
		d *= 2
	}
	return min(d, mx)
}

// Backoff returns the wait before retry number attempt (0 for the first).
func (p Policy) Backoff(attempt int) time.Duration {
	c := p.ceiling(attempt)
	return time.Duration(rand.Int64N(int64(c)) + 1)
}

// Error marks an error as worth retrying, optionally after a delay the
// server asked for.
type Error struct {
	Err        error
	RetryAfter time.Duration // 0: use the backoff
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Retryable wraps err as worth retrying.
func Retryable(err error, after time.Duration) error { return &Error{Err: err, RetryAfter: after} }

// Do calls fn until it succeeds, returns an error that is not Retryable, or
// the next wait would pass ctx's deadline (then the last error is returned,
// wrapped with why it was not retried). It reports the attempts made.
func Do(ctx context.Context, p Policy, fn func(ctx context.Context) error) (attempts int, err error) {
	var prev error
	for attempt := 0; ; attempt++ {
		err = fn(ctx)
		attempts++
		if err == nil {
			return attempts, nil
		}
		if prev != nil && ctx.Err() != nil {
			// The deadline cut this attempt short: the previous answer
			// says more about the failure than "deadline exceeded".
			return attempts, fmt.Errorf("%w (attempt %d; attempt %d abandoned: %w)", prev, attempts-1, attempts, ctx.Err())
		}
		prev = err
		var re *Error // escapes through errors.As: only on failure
		if !errors.As(err, &re) {
			return attempts, err
		}
		wait := p.Backoff(attempt)
		if re.RetryAfter > 0 {
			wait = re.RetryAfter
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return attempts, fmt.Errorf("%w (not retried: waiting %v would pass the deadline)", err, wait.Round(time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return attempts, fmt.Errorf("%w (retry abandoned: %w)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// HTTPStatusRetryable reports whether an HTTP status is worth retrying:
// 429 and the 5xx that mean "try later" (OTLP/HTTP's and Prometheus remote
// write's rule; other 4xx mean the request itself is wrong).
func HTTPStatusRetryable(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return code >= 500 && code != http.StatusNotImplemented && code != http.StatusHTTPVersionNotSupported
}

// ParseRetryAfter reads a Retry-After header: delay-seconds or an HTTP
// date (RFC 9110, 10.2.3). It returns 0 when absent or malformed; the
// result is capped at max.
func ParseRetryAfter(h string, now time.Time, max time.Duration) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(h); err == nil {
		if s < 0 {
			return 0
		}
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now)
	}
	if d < 0 {
		return 0
	}
	return min(d, max)
}
