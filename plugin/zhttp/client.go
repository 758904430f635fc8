package zhttp

import (
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
)

// Transport is an http.RoundTripper that records ochttp's client measures
// and the OpenTelemetry HTTP client measure for each request: the latency
// runs until the response body is read to its end or closed (or the
// round trip fails), as ochttp's does. Safe for concurrent use.
//
// Cost per request: two tagged records, plus one allocation, the response body's wrapper (the caller holds it, so it
// cannot be pooled: a read after Close would read another response);
// ochttp allocates the same wrapper and about 20 more. With AtHeaders,
// none.
type Transport struct {
	// Base makes the requests; nil: http.DefaultTransport.
	Base http.RoundTripper
	// AtHeaders records each request when its response headers arrive,
	// as otelhttp's and promhttp's InstrumentRoundTripperDuration do,
	// rather than at the body's end: the latency is the time to the
	// headers, the bytes received are the response's Content-Length (0
	// when it is unknown, a chunked body), and the response is returned
	// as Base gave it, so the Transport allocates nothing.
	AtHeaders bool
}

// NewTransport returns a Transport over base (nil: http.DefaultTransport).
func NewTransport(base http.RoundTripper) *Transport { return &Transport{Base: base} }

// RoundTrip makes the request with Base and records it (see Transport for
// when, and the cost). A failed round trip records with status 500, as
// ochttp does, and with the OpenTelemetry error.type "_OTHER" and no
// http.response.status_code; a 4xx or 5xx response records its status
// code as error.type too, since the HTTP conventions count it as a
// client's error. An empty Method is recorded as GET, which net/http
// sends for it.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	method := http.MethodGet // net/http: an empty client Method means GET
	if req.Method != "" {
		method = methodOf(req.Method)
	}
	_ = stats.RecordWithTags(req.Context(), []tag.Mutator{tag.Upsert(KeyClientMethod, method), tag.Upsert(Method, method)},
		ClientRequestCount.M(1))
	start := time.Now()
	var sent int64 = -1
	if req.Body != nil {
		sent = max(req.ContentLength, 0)
	} else if req.ContentLength > 0 {
		sent = req.ContentLength
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		recordClient(req, method, start, sent, 0, 0, http.StatusInternalServerError, true)
		return resp, err
	}
	var cl int64
	if req.Method != http.MethodHead {
		cl = resp.ContentLength
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		recordClient(req, method, start, sent, 0, cl, resp.StatusCode, false)
		return resp, nil
	}
	if t.AtHeaders {
		recordClient(req, method, start, sent, max(cl, 0), cl, resp.StatusCode, false)
		return resp, nil
	}
	resp.Body = &trackedBody{body: resp.Body, req: req, method: method, start: start, sent: sent, cl: cl, status: resp.StatusCode}
	return resp, nil
}

// recordClient records a request's end: failed for a round trip that
// returned an error (status is then ochttp's 500). One record of both
// families' measures with both families' tags (nine: within the 16 tags
// stats.RecordWithTags finds again or builds on the stack).
func recordClient(req *http.Request, method string, start time.Time, sent, read, cl int64, status int, failed bool) {
	elapsed := time.Since(start)
	received := read
	if read == 0 && cl > 0 {
		received = cl
	}
	code := statusText(status)
	otelCode, errType := code, ""
	if failed {
		otelCode, errType = "", "_OTHER"
	} else if status >= 400 {
		errType = code // the conventions: a client's 4xx or 5xx is an error
	}
	ms := float64(elapsed) / float64(time.Millisecond)
	m := [...]stats.Measurement{
		ClientSentBytes.M(max(sent, 0)), ClientReceivedBytes.M(received), ClientRoundtripLatency.M(ms),
		ClientLatency.M(ms), ClientResponseBytes.M(read), ClientDuration.M(elapsed.Seconds()), ClientRequestBytes.M(sent),
	}
	n := len(m)
	if sent < 0 {
		n-- // as ochttp: no request_bytes without a body
	}
	_ = stats.RecordWithTags(req.Context(), []tag.Mutator{
		tag.Upsert(KeyClientMethod, method), tag.Upsert(Method, method),
		tag.Upsert(StatusCode, code), tag.Upsert(KeyClientStatus, code),
		tag.Upsert(KeyRequestMethod, method), tag.Upsert(KeyStatusCode, otelCode),
		tag.Upsert(KeyServerAddress, req.URL.Hostname()), tag.Upsert(KeyServerPort, portOf(req.URL)),
		tag.Upsert(KeyErrorType, errType),
	}, m[:n]...)
}

// portOf returns the port of u, or its scheme's default port when it
// names none ("80" for http, "443" for https, "" for another scheme), the
// HTTP conventions' server.port. No allocation: a substring of u.Host or
// a constant.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch u.Scheme {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// trackedBody counts the bytes of a response body and records the
// request once, at its end (EOF, a read error or Close, whichever comes
// first). Safe for the concurrent use an http.Response.Body allows (a Read
// and a Close from different goroutines).
type trackedBody struct {
	body   io.ReadCloser
	req    *http.Request
	method string
	start  time.Time
	sent   int64
	cl     int64
	status int
	mu     sync.Mutex
	read   int64
	done   bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	b.mu.Lock()
	b.read += int64(n)
	b.mu.Unlock()
	if err != nil {
		b.end()
	}
	return n, err
}

func (b *trackedBody) Close() error {
	b.end()
	return b.body.Close()
}

func (b *trackedBody) end() {
	b.mu.Lock()
	done, read := b.done, b.read
	b.done = true
	b.mu.Unlock()
	if !done {
		recordClient(b.req, b.method, b.start, b.sent, read, b.cl, b.status, false)
	}
}
