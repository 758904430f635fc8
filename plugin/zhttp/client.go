package zhttp

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
)

// Transport is an http.RoundTripper that records ochttp's client measures
// and the OpenTelemetry HTTP client measures for each request: the latency
// runs until the response body is read to its end or closed (or the
// round trip fails), as ochttp's does. Safe for concurrent use.
//
// http.client.request.body.size is the number of bytes Base read from the
// request body, as otelhttp counts them: Base is given a copy of the
// request whose Body counts (RoundTrip sets the response's Request back
// to the caller's), and the size is recorded once Base closed the body
// (RoundTripper's contract: it always does, perhaps after RoundTrip
// returned), so that bytes sent after the response headers count too.
// The other measures do not wait for it: a Base that never closes the
// request body (a stub) leaves out only that request's body size. A
// request that Base retries on a new connection with Request.GetBody
// counts the bytes of its first attempt (otelhttp's, of its last).
//
// Cost per request: two tagged records (three when Base closes the
// request body after the record at the response). A request with a body
// costs one allocation, in either mode and whatever the response: the
// copy of the request given to Base (about 450 bytes with the body's
// counter and the response body's wrapper, together). A request without
// one costs the response body's wrapper when the response has a body
// (the caller holds it, so it cannot be pooled: a read after Close would
// read another response), none with AtHeaders. ochttp allocates the same
// wrapper and about 20 more, otelhttp a copy of the request and about 15
// more.
type Transport struct {
	// Base makes the requests; nil: http.DefaultTransport.
	Base http.RoundTripper
	// AtHeaders records each request when its response headers arrive,
	// as otelhttp's and promhttp's InstrumentRoundTripperDuration do,
	// rather than at the body's end: the latency is the time to the
	// headers, the bytes received are the response's Content-Length (0
	// when it is unknown, a chunked body), and the response body is
	// returned as Base gave it, so a request without a body allocates
	// nothing (one with a body allocates its copy, see Transport).
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
	mi := 0 // GET: net/http sends it for an empty client Method
	if req.Method != "" {
		mi = methodIndex(req.Method)
	}
	method := methods[mi]
	_ = stats.RecordWithTags(req.Context(), []tag.Mutator{tag.Upsert(KeyClientMethod, method), tag.Upsert(Method, method)},
		ClientRequestCount.M(1))
	o := outcome{req: req, mi: uint8(mi), start: time.Now(), sent: -1}
	if req.Body != nil {
		o.sent = max(req.ContentLength, 0)
	} else if req.ContentLength > 0 {
		o.sent = req.ContentLength
	}
	if req.Body != nil && req.Body != http.NoBody {
		return t.roundTripBody(base, o)
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		o.fail()
		o.record(recordAll, 0, 0)
		return resp, err
	}
	o.respond(resp)
	if t.AtHeaders || resp.Body == nil || resp.Body == http.NoBody {
		o.record(recordAll, 0, 0)
		return resp, nil
	}
	c := &call{o: o, body: resp.Body}
	resp.Body = (*responseBody)(c)
	return resp, nil
}

// roundTripBody is RoundTrip for a request with a body (o.req's), which
// Base is given in a copy whose body counts the bytes read.
func (t *Transport) roundTripBody(base http.RoundTripper, o outcome) (*http.Response, error) {
	cr := &callRequest{}
	c := &cr.call
	c.o = o
	c.reqBody = o.req.Body
	cr.req = *o.req
	cr.req.Body = (*requestBody)(c)
	resp, err := base.RoundTrip(&cr.req)
	if err != nil {
		c.o.fail()
		c.publish(0)
		return resp, err
	}
	if resp.Request == &cr.req {
		resp.Request = o.req // the caller's, as without the Transport
	}
	c.o.respond(resp)
	if t.AtHeaders || resp.Body == nil || resp.Body == http.NoBody {
		c.publish(0)
		return resp, nil
	}
	c.body = resp.Body
	resp.Body = (*responseBody)(c)
	return resp, nil
}

// outcome is what a request's record reports: set by RoundTrip, then by
// respond or fail, and not changed after (call.publish); read by record.
// Its fields are packed: the Transport allocates it (in a call) for most
// requests.
type outcome struct {
	req    *http.Request // the caller's
	start  time.Time
	sent   int64  // ochttp's sent_bytes: the Content-Length, -1 without a body
	cl     int64  // the response's Content-Length (0 for a HEAD)
	proto  string // the response's Proto, else the request's
	status int32  // ochttp's: 500 for a failed round trip
	mi     uint8  // the method's index in methods
	failed bool
}

func (o *outcome) fail() {
	o.status, o.failed, o.proto = http.StatusInternalServerError, true, o.req.Proto
}

func (o *outcome) respond(resp *http.Response) {
	o.status, o.proto = int32(resp.StatusCode), o.req.Proto
	if resp.Proto != "" {
		o.proto = resp.Proto
	}
	if o.req.Method != http.MethodHead {
		o.cl = resp.ContentLength
	}
}

// What record records: every measure with the request body's size, every
// one but it, or only it.
const (
	recordAll = iota
	recordAllButSize
	recordSize
)

// record records o's measures (what: recordAll, ...), with reqSize the
// bytes read from the request body and read those read from the response
// body: one record of both families' measures with both families' tags
// (twelve: within the 16 tags stats.RecordWithTags finds again or builds
// on the stack).
func (o *outcome) record(what int, reqSize, read int64) {
	elapsed := time.Since(o.start)
	received := read
	if read == 0 && o.cl > 0 {
		received = o.cl
	}
	code := statusText(int(o.status))
	method := methods[o.mi]
	otelCode, errType := code, ""
	if o.failed {
		otelCode, errType = "", "_OTHER"
	} else if o.status >= 400 {
		errType = code // the conventions: a client's 4xx or 5xx is an error
	}
	host, port, scheme := clientAddress(o.req)
	protoName, protoVersion := netProtocol(o.proto)
	ms := float64(elapsed) / float64(time.Millisecond)
	m := [...]stats.Measurement{
		ClientRequestSize.M(reqSize),
		ClientSentBytes.M(max(o.sent, 0)), ClientReceivedBytes.M(received), ClientRoundtripLatency.M(ms),
		ClientLatency.M(ms), ClientResponseBytes.M(read), ClientDuration.M(elapsed.Seconds()), ClientRequestBytes.M(o.sent),
	}
	ml := m[:]
	switch what {
	case recordSize:
		ml = m[:1]
	case recordAllButSize:
		ml = m[1:]
	}
	if what != recordSize && o.sent < 0 {
		ml = ml[:len(ml)-1] // as ochttp: no request_bytes without a body
	}
	_ = stats.RecordWithTags(o.req.Context(), []tag.Mutator{
		tag.Upsert(KeyClientMethod, method), tag.Upsert(Method, method),
		tag.Upsert(StatusCode, code), tag.Upsert(KeyClientStatus, code),
		tag.Upsert(KeyRequestMethod, method), tag.Upsert(KeyStatusCode, otelCode),
		tag.Upsert(KeyServerAddress, host), tag.Upsert(KeyServerPort, port),
		tag.Upsert(KeyErrorType, errType), tag.Upsert(KeyURLScheme, scheme),
		tag.Upsert(KeyNetworkProtocolName, protoName), tag.Upsert(KeyNetworkProtocolVersion, protoVersion),
	}, ml...)
}

// clientAddress returns the server.address, server.port and url.scheme
// of a client request: the host and port of its URL, else of its Host
// header, as otelhttp finds them; the port is the scheme's default (80
// for http, 443 for https) when the request names none, since the
// conventions require server.port on client metrics. A host that cannot
// be a tag value is left out ("", absent), so the request is still
// recorded. No allocation but for a port written with leading zeros.
func clientAddress(req *http.Request) (host, port, scheme string) {
	var h string
	if req.URL != nil {
		h, scheme = req.URL.Host, req.URL.Scheme
	}
	host, ps, p := splitHostPort(h)
	if host == "" && p < 0 {
		host, ps, p = splitHostPort(req.Header.Get("Host"))
	}
	if !core.ValidValue(host) {
		host = ""
	}
	switch {
	case p > 0:
		port = portText(ps, p)
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	}
	if scheme == "" {
		scheme = "http"
		if req.TLS != nil {
			scheme = "https"
		}
	}
	return host, port, scheme
}

// call is a request's record in flight, when it outlives RoundTrip: the
// response body's wrapper (responseBody), and the request body's counter
// (requestBody) for a request with a body. The two are call itself under
// other method sets, so one allocation holds both.
//
// Concurrency: the response body may be read and closed from different
// goroutines (mu guards read and done). Base reads and closes the request
// body from goroutines of its own, perhaps after RoundTrip returned
// (reqRead and state are atomic). The record happens at the response
// (publish: with AtHeaders, or a response without a body, or a failed
// round trip) or at the response body's end (EOF, a read error or Close,
// whichever comes first); the request body's size goes with it if Base
// closed the request body already, else in a record of its own at that
// Close. state's bits, set once each with Or, decide who records what:
// whoever sets the second records the size. o is written before
// published is set and not after, so the Close that sees published
// reads it safely.
type call struct {
	o outcome

	body    io.ReadCloser // the response body, as Base returned it
	reqBody io.ReadCloser // the request body, nil without one
	read    int64         // bytes read from body
	reqRead atomic.Int64
	mu      sync.Mutex
	state   atomic.Uint32 // published | reqClosed
	done    bool
}

const (
	published = 1 << iota
	reqClosed
)

// callRequest is a call with the copy of the request given to Base.
type callRequest struct {
	call
	req http.Request
}

// publish records the request at its response (or failure or body end),
// read bytes read from the response body: with the request body's size
// if there is no request body or Base closed it, else without.
func (c *call) publish(read int64) {
	old := c.state.Or(published)
	if c.reqBody == nil || old&reqClosed != 0 {
		c.o.record(recordAll, c.reqRead.Load(), read)
	} else {
		c.o.record(recordAllButSize, 0, read)
	}
}

// responseBody is the response body the caller reads: it counts the
// bytes and records the request once, at its end.
type responseBody call

func (b *responseBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	b.mu.Lock()
	b.read += int64(n)
	b.mu.Unlock()
	if err != nil {
		b.end()
	}
	return n, err
}

// Close records the request, then closes the body (which may block: an
// upgraded connection's, say).
func (b *responseBody) Close() error {
	b.end()
	return b.body.Close()
}

func (b *responseBody) end() {
	b.mu.Lock()
	done, read := b.done, b.read
	b.done = true
	b.mu.Unlock()
	if !done {
		(*call)(b).publish(read)
	}
}

// requestBody is the request body Base reads: it counts the bytes, and
// at Close records the body's size if the request was recorded already.
type requestBody call

func (b *requestBody) Read(p []byte) (int, error) {
	n, err := b.reqBody.Read(p)
	b.reqRead.Add(int64(n))
	return n, err
}

// Close records the size, if it is due, then closes the body.
func (b *requestBody) Close() error {
	if old := b.state.Or(reqClosed); old&reqClosed == 0 && old&published != 0 {
		b.o.record(recordSize, b.reqRead.Load(), 0)
	}
	return b.reqBody.Close()
}
