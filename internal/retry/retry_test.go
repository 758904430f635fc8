package retry

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestBackoffBounds(t *testing.T) {
	p := Policy{Initial: 10 * time.Millisecond, Max: 80 * time.Millisecond}
	for attempt, ceil := range []time.Duration{10, 20, 40, 80, 80, 80} {
		ceil *= time.Millisecond
		for range 200 {
			if d := p.Backoff(attempt); d <= 0 || d > ceil {
				t.Fatalf("attempt %d: backoff %v outside (0, %v]", attempt, d, ceil)
			}
		}
	}
}

func TestBackoffLargeAttempt(t *testing.T) {
	p := Policy{Initial: 100 * time.Millisecond, Max: time.Second}
	if d := p.Backoff(200); d <= 0 || d > time.Second {
		t.Errorf("Backoff(200) = %v: the doubling overflowed", d)
	}
}

func TestDo(t *testing.T) {
	p := Policy{Initial: time.Millisecond, Max: 2 * time.Millisecond}
	calls := 0
	n, err := Do(context.Background(), p, func(context.Context) error {
		calls++
		if calls < 3 {
			return Retryable(errors.New("503"), 0)
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Errorf("got %d attempts, %v; want 3, nil", n, err)
	}
	permanent := errors.New("400")
	n, err = Do(context.Background(), p, func(context.Context) error { return permanent })
	if err != permanent || n != 1 {
		t.Errorf("a permanent error was retried: %d, %v", n, err)
	}
	// The deadline bounds the retries; the last error is returned.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	n, err = Do(ctx, p, func(context.Context) error { return Retryable(errors.New("down"), 0) })
	if err == nil || !strings.HasPrefix(err.Error(), "down (") || n < 2 || time.Since(start) > time.Second {
		t.Errorf("deadline: %d attempts, %v, %v", n, err, time.Since(start))
	}
	// A Retry-After beyond the deadline stops at once.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	n, _ = Do(ctx2, p, func(context.Context) error { return Retryable(errors.New("429"), time.Hour) })
	if n != 1 {
		t.Errorf("waited for a Retry-After past the deadline: %d attempts", n)
	}
}

func TestDeadlineKeepsThePreviousError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	refused := errors.New("connection refused")
	calls := 0
	_, err := Do(ctx, Policy{Initial: time.Millisecond, Max: time.Millisecond}, func(ctx context.Context) error {
		calls++
		if calls == 1 {
			return Retryable(refused, 0)
		}
		<-ctx.Done() // the second attempt is cut by the deadline
		return ctx.Err()
	})
	if !errors.Is(err, refused) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v; want the refusal, noting the deadline", err)
	}
}

func TestHTTPStatusRetryable(t *testing.T) {
	for code, want := range map[int]bool{200: false, 400: false, 401: false, 404: false, 413: false,
		429: true, 500: true, 502: true, 503: true, 504: true, 501: false} {
		if got := HTTPStatusRetryable(code); got != want {
			t.Errorf("%d: %v; want %v", code, got, want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"":     0,
		"3":    3 * time.Second,
		"-1":   0,
		"junk": 0,
		"3600": time.Minute, // capped
		now.Add(20 * time.Second).Format(http.TimeFormat): 20 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
		" 7 ":                            7 * time.Second,
		"Monday, 30-Nov-26 12:00:02 GMT": 2 * time.Second, // RFC 850, obsolete but valid
	} {
		if got := ParseRetryAfter(h, now, time.Minute); got != want {
			t.Errorf("%q: %v; want %v", h, got, want)
		}
	}
}
