package exporter

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scriptedTransport fails the first len(errs) requests with errs, in
// order, then answers 204.
type scriptedTransport struct {
	errs  []error
	calls int
}

func (s *scriptedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	s.calls++
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	if s.calls <= len(s.errs) {
		return nil, s.errs[s.calls-1]
	}
	return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: r}, nil
}

// TestHTTPSinkRetriesOnlyTransientErrors: a network error or a connection
// closed mid-answer is retried; an error the same request would meet again
// (a bad scheme, no host) is final after one attempt.
func TestHTTPSinkRetriesOnlyTransientErrors(t *testing.T) {
	newFixture(t, 2)
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}},
		{"eof", io.EOF},
	} {
		tr := &scriptedTransport{errs: []error{tc.err}}
		e, _ := New(&HTTPSink{URL: "http://127.0.0.1:9/", Client: &http.Client{Transport: tr}},
			Options{Retry: Retry{InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := e.Export(ctx)
		cancel()
		if err != nil || tr.calls != 2 || e.Stats().Retries != 1 {
			t.Errorf("%s: error %v after %d calls, stats %+v; want success on the retry", tc.name, err, tr.calls, e.Stats())
		}
	}

	for _, tc := range []struct{ url, want string }{
		{"not a url", "unsupported protocol scheme"},
		{"ftp://127.0.0.1/", "unsupported protocol scheme"},
		{"http:///receive", "no Host"},
	} {
		e, _ := New(&HTTPSink{URL: tc.url}, Options{Retry: Retry{InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := e.Export(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "1 attempts") {
			t.Errorf("%q: error %v; want %q after 1 attempt", tc.url, err, tc.want)
		}
		if s := e.Stats(); s.Retries != 0 || s.Failures != 1 {
			t.Errorf("%q: stats %+v; want 1 failure, no retries", tc.url, s)
		}
	}
}
