package zhttp

import (
	"bufio"
	"context"
	"errors"
	"hash/maphash"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
)

// Options configure a Handler or a Transport.
type Options struct {
	// Route returns the route of a request (the http_server_route and
	// http.route tags), called after the wrapped handler returned. It must
	// return a bounded set of values, never the raw path. Nil: the
	// pattern Go's ServeMux matched (Request.Pattern) without its method
	// and host ("GET /items/{id}" → "/items/{id}"), "" when none matched.
	Route func(*http.Request) string
	// ServerName is the server's primary name, "host" or "host:port", as
	// otelhttp.WithServerName takes it: the OpenTelemetry views'
	// server.address is its host, and server.port its port (the Host
	// header's when it names none), instead of the Host header's. The
	// Host header is the client's choice: set ServerName to keep clients
	// from choosing server.address's values (the conventions make the
	// attribute opt-in for that reason; otelhttp sets it, and so does
	// zhttp, each view's cardinality limit bounding its rows). Only
	// Handler uses it.
	ServerName string
}

// Handler records ochttp's server measures and the OpenTelemetry HTTP
// server measures for each request it serves (see the package doc for
// the tags). Its shape is ochttp.Handler's, so `&ochttp.Handler{Handler:
// mux}` migrates by renaming the package. Safe for concurrent use; do not
// change its fields once it serves.
type Handler struct {
	// Handler serves the requests; nil: http.DefaultServeMux.
	Handler http.Handler
	// Route: see Options.Route.
	Route func(*http.Request) string
	// ServerName: see Options.ServerName.
	ServerName string
}

// NewHandler wraps next. Cost per request: see the package doc.
func NewHandler(next http.Handler, opts Options) *Handler {
	return &Handler{Handler: next, Route: opts.Route, ServerName: opts.ServerName}
}

// WithRouteTag returns a handler that serves h with route as the route
// the enclosing Handler records (as ochttp.WithRouteTag): it sets
// Request.Pattern, which the enclosing Handler reads, so it works when no
// middleware between the two replaced the request (r.WithContext).
func WithRouteTag(h http.Handler, route string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Pattern = route
		h.ServeHTTP(w, r)
	})
}

var trackers = sync.Pool{New: func() any { return new(trackingWriter) }}

// ServeHTTP serves r with the wrapped handler and records the request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mi := methodIndex(r.Method)
	method := methods[mi]
	start := time.Now()
	// A request whose context carries no tags (the usual case) records
	// with contexts built once per method and per tag combination; one
	// whose context carries tags (set by a middleware) records them too.
	plain := tag.FromContext(r.Context()) == nil
	if plain {
		stats.Record(methodCtxs[mi], ServerRequestCount.M(1))
	} else {
		_ = stats.RecordWithTags(r.Context(), []tag.Mutator{tag.Upsert(Method, method)}, ServerRequestCount.M(1))
	}
	t := trackers.Get().(*trackingWriter)
	t.w = w
	// Count the bytes the handler reads, as otelhttp does: the body
	// wrapper is the tracker's field, so it costs no allocation. A body
	// that is nil or NoBody is left as it is (its identity means
	// something to net/http), and the request's own is put back after,
	// since net/http forbids reading it once ServeHTTP returned.
	body := r.Body
	wrapped := body != nil && body != http.NoBody
	if wrapped {
		t.body.rc = body
		r.Body = &t.body
	}
	next := h.Handler
	if next == nil {
		next = http.DefaultServeMux
	}
	next.ServeHTTP(t, r)
	if wrapped {
		r.Body = body
	}
	elapsed := time.Since(start)
	status := t.status
	if status == 0 {
		status = http.StatusOK
	}
	var route string
	if h.Route != nil {
		route = h.Route(r)
	} else {
		route = routeOf(r.Pattern)
	}
	reqSize := r.ContentLength // ochttp's request_bytes: the Content-Length
	if r.Body == nil || r.ContentLength < 0 {
		reqSize = 0
	}
	size, read := t.size, t.body.n
	*t = trackingWriter{} // hold nothing of the request while pooled
	trackers.Put(t)
	ms := [...]stats.Measurement{
		ServerLatency.M(float64(elapsed) / float64(time.Millisecond)), ServerResponseBytes.M(size),
		ServerRequestBytes.M(reqSize),
		ServerDuration.M(elapsed.Seconds()), ServerRequestSize.M(read), ServerResponseSize.M(size),
	}
	k := endKey{route: route, host: r.Host, name: h.ServerName, proto: r.Proto, status: int32(status), mi: uint8(mi), tls: r.TLS != nil}
	if plain {
		if ctx := endCtx(&k); ctx != nil {
			stats.Record(ctx, ms[:]...)
			return
		}
	}
	muts := k.mutators()
	_ = stats.RecordWithTags(r.Context(), muts[:], ms[:]...)
}

// serverErrorType returns the OpenTelemetry error.type of a response with
// status code status (code as text): the code for a 5xx, which the HTTP
// conventions count as a server's errors, "" (absent) otherwise.
func serverErrorType(status int, code string) string {
	if status >= 500 && status < 600 {
		return code
	}
	return ""
}

// endKey is a tag combination of a request's end, as the request gives
// it: mutators derives the tags from it (server.address and server.port
// from the Host header and ServerName, the protocol's name and version
// from Request.Proto, error.type from the status, see serverErrorType),
// so a request that finds its context in endCache derives none.
type endKey struct {
	route string
	host  string // the Host header
	name  string // Handler.ServerName
	proto string // Request.Proto
	// The method's index in methods, the status and TLS: hashed as
	// numbers.
	status int32
	mi     uint8
	tls    bool
}

// hash returns a seeded hash of k (the strings through one maphash.Hash,
// the numbers folded in after: cheaper than maphash.Comparable's hash of
// the struct).
func (k *endKey) hash() uint64 {
	var mh maphash.Hash
	mh.SetSeed(endSeed)
	mh.WriteString(k.route)
	mh.WriteByte(0)
	mh.WriteString(k.host)
	mh.WriteByte(0)
	mh.WriteString(k.name)
	mh.WriteByte(0)
	mh.WriteString(k.proto)
	n := uint64(k.status)<<16 | uint64(k.mi)<<8
	if k.tls {
		n |= 1
	}
	return mh.Sum64() ^ n
}

// mutators returns the tags of k, ochttp's and OpenTelemetry's. A host
// that cannot be a tag value (a Host header of more than 255 bytes, say)
// is left out (""), so that the request is still recorded.
func (k *endKey) mutators() [12]tag.Mutator {
	method, code := methods[k.mi], statusText(int(k.status))
	scheme := "http"
	if k.tls {
		scheme = "https"
	}
	host, port := serverAddress(k.name, k.host, k.tls)
	if !core.ValidValue(host) {
		host = ""
	}
	protoName, protoVersion := netProtocol(k.proto)
	return [...]tag.Mutator{
		tag.Upsert(Method, method), tag.Upsert(StatusCode, code), tag.Upsert(KeyServerRoute, k.route),
		tag.Upsert(KeyRequestMethod, method), tag.Upsert(KeyRoute, k.route), tag.Upsert(KeyStatusCode, code),
		tag.Upsert(KeyURLScheme, scheme), tag.Upsert(KeyErrorType, serverErrorType(int(k.status), code)),
		tag.Upsert(KeyServerAddress, host), tag.Upsert(KeyServerPort, port),
		tag.Upsert(KeyNetworkProtocolName, protoName), tag.Upsert(KeyNetworkProtocolVersion, protoVersion),
	}
}

type endEntry struct {
	k   endKey
	ctx context.Context
}

// endCache maps recent tag combinations to their contexts: direct-mapped
// by hash, lock-free (a miss builds the context and replaces the slot), so
// a request finds its tags with one hash, one atomic load and a compare.
// 512 slots cover a service's routes × methods × statuses (× its names
// and protocols); past that, colliding combinations take turns, each turn
// costing one tag.New.
var (
	endCache [512]atomic.Pointer[endEntry]
	endSeed  = maphash.MakeSeed()
)

// endCtx returns the context of the combination k, nil when its tags are
// invalid (a route that is not printable ASCII, say: the caller's
// RecordWithTags then reports nothing and records nothing, as for any
// invalid tag).
func endCtx(k *endKey) context.Context {
	slot := &endCache[k.hash()%uint64(len(endCache))]
	if e := slot.Load(); e != nil && e.k == *k {
		return e.ctx
	}
	muts := k.mutators()
	ctx, err := tag.New(context.Background(), muts[:]...)
	if err != nil {
		return nil
	}
	// The key's strings may be the request's (a route from Options.Route,
	// its Host header and Proto): keep copies, not the request's memory.
	c := *k
	c.route, c.host, c.proto = strings.Clone(c.route), strings.Clone(c.host), strings.Clone(c.proto)
	slot.Store(&endEntry{k: c, ctx: ctx})
	return ctx
}

// trackingWriter counts the status and body bytes of a response, and
// (body) the bytes read from the request body. Pooled: net/http forbids
// using a ResponseWriter, or reading the request body, after (or
// concurrently with the end of) ServeHTTP. Used by one request at a time:
// its handler writes, and reads the body, from any goroutines that
// finish before ServeHTTP returns; ServeHTTP reads the counts after.
type trackingWriter struct {
	w      http.ResponseWriter
	status int
	size   int64
	body   countingBody
}

// countingBody counts the bytes read from a request body.
type countingBody struct {
	rc io.ReadCloser
	n  int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *countingBody) Close() error { return b.rc.Close() }

func (t *trackingWriter) Header() http.Header { return t.w.Header() }

func (t *trackingWriter) Write(b []byte) (int, error) {
	if t.status == 0 {
		t.status = http.StatusOK
	}
	n, err := t.w.Write(b)
	t.size += int64(n)
	return n, err
}

func (t *trackingWriter) WriteHeader(code int) {
	// 1xx informational headers do not end the response, but for 101
	// Switching Protocols, as net/http (and otelhttp) count them.
	if t.status == 0 && (code < 100 || code > 199 || code == http.StatusSwitchingProtocols) {
		t.status = code
	}
	t.w.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the writer's other methods
// (SetReadDeadline, EnableFullDuplex, ...).
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.w }

// Flush implements http.Flusher when the wrapped writer does (otherwise it
// does nothing).
func (t *trackingWriter) Flush() {
	if t.status == 0 {
		t.status = http.StatusOK
	}
	if f, ok := t.w.(http.Flusher); ok {
		f.Flush()
	}
}

var errNotHijacker = errors.New("zhttp: the wrapped ResponseWriter is not an http.Hijacker")

// Hijack implements http.Hijacker when the wrapped writer does (otherwise
// it returns an error). A hijacked request records status 101 when the
// handler wrote none.
func (t *trackingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := t.w.(http.Hijacker)
	if !ok {
		return nil, nil, errNotHijacker
	}
	if t.status == 0 {
		t.status = http.StatusSwitchingProtocols
	}
	return h.Hijack()
}

// Push implements http.Pusher when the wrapped writer does.
func (t *trackingWriter) Push(target string, opts *http.PushOptions) error {
	if p, ok := t.w.(http.Pusher); ok {
		return p.Push(target, opts)
	}
	return http.ErrNotSupported
}

// routeOf returns pattern without its method and host: ServeMux patterns
// are "[METHOD ][HOST]/[PATH]" (net/http's ServeMux doc).
func routeOf(pattern string) string {
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		pattern = strings.TrimLeft(pattern[i+1:], " \t")
	}
	if i := strings.IndexByte(pattern, '/'); i > 0 {
		pattern = pattern[i:]
	}
	return pattern
}

// methods are the standard methods (RFC 9110 and PATCH) and "_OTHER",
// which any other method is recorded as, as the OpenTelemetry conventions
// say: a client choosing the method must not choose the cardinality.
var methods = [...]string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace, "_OTHER"}

// methodCtxs are the contexts of the start record, by methods index.
var methodCtxs = func() (c [len(methods)]context.Context) {
	for i, m := range methods {
		c[i], _ = tag.New(context.Background(), tag.Upsert(Method, m)) // valid: constants
	}
	return c
}()

// methodIndex returns the index of m in methods (of "_OTHER" for a
// method that is not standard).
func methodIndex(m string) int {
	for i, x := range methods[:len(methods)-1] {
		if m == x {
			return i
		}
	}
	return len(methods) - 1
}

// statusTexts holds the decimal strings of the status codes 100-599, so
// recording a status does not format (strconv.Itoa allocates above 99).
var statusTexts = func() (t [500]string) {
	for i := range t {
		t[i] = strconv.Itoa(i + 100)
	}
	return t
}()

func statusText(code int) string {
	if code >= 100 && code < 600 {
		return statusTexts[code-100]
	}
	return strconv.Itoa(code)
}

// serverAddress returns the server.address and server.port of a request
// with Host header hostHeader, as otelhttp's HTTPServer.MetricAttributes
// finds them: from name (Options.ServerName) when it is set, its port
// from hostHeader when it names none, else from hostHeader; the port only
// when it is not the scheme's default (80, or 443 for https). No
// allocation but for a port written with leading zeros, or a malformed
// name (net.SplitHostPort's error).
func serverAddress(name, hostHeader string, https bool) (host, port string) {
	var ps string
	var p int
	if name == "" {
		host, ps, p = splitHostPort(hostHeader)
	} else if host, ps, p = splitHostPort(name); p < 0 {
		_, ps, p = splitHostPort(hostHeader)
	}
	if p <= 0 || (https && p == 443) || (!https && p == 80) {
		return host, ""
	}
	return host, portText(ps, p)
}

// splitHostPort splits hostport ("host", "host:port", "[host]",
// "[host]:port", ":port", with an optional %zone) as otelhttp's
// semconv.SplitHostPort does: host "" when it is missing or hostport is
// malformed, port -1 when it is missing or not a number from 0 to 65535.
// ps is the port's text.
func splitHostPort(hostport string) (host, ps string, port int) {
	if strings.HasPrefix(hostport, "[") {
		end := strings.LastIndexByte(hostport, ']')
		if end < 0 {
			return "", "", -1
		}
		if strings.LastIndexByte(hostport[end:], ':') < 0 {
			return hostport[1:end], "", -1
		}
	} else if !strings.Contains(hostport, ":") {
		return hostport, "", -1
	}
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		return host, "", -1
	}
	// strconv.ParseUint(ps, 10, 16), without its error's allocation.
	if ps == "" {
		return host, "", -1
	}
	for i := 0; i < len(ps); i++ {
		c := ps[i]
		if c < '0' || c > '9' {
			return host, "", -1
		}
		port = port*10 + int(c-'0')
		if port > 65535 {
			return host, "", -1
		}
	}
	return host, ps, port
}

// portText returns the decimal text of port p, whose text was ps: ps
// itself unless it has leading zeros (otelhttp's attribute is the number).
func portText(ps string, p int) string {
	if len(ps) == 1 || ps[0] != '0' {
		return ps
	}
	return strconv.Itoa(p)
}

// netProtocol returns the network.protocol.name and
// network.protocol.version of proto ("HTTP/1.1": "http", "1.1"), as
// otelhttp's semconv.netProtocol does. No allocation for a name in
// HTTP, QUIC, SPDY or lower case.
func netProtocol(proto string) (name, version string) {
	name, version, _ = strings.Cut(proto, "/")
	switch name {
	case "HTTP":
		name = "http"
	case "QUIC":
		name = "quic"
	case "SPDY":
		name = "spdy"
	default:
		name = strings.ToLower(name)
	}
	return name, version
}
