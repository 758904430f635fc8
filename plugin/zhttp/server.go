package zhttp

import (
	"bufio"
	"context"
	"errors"
	"hash/maphash"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
}

// NewHandler wraps next. Cost per request: see the package doc.
func NewHandler(next http.Handler, opts Options) *Handler {
	return &Handler{Handler: next, Route: opts.Route}
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
	next := h.Handler
	if next == nil {
		next = http.DefaultServeMux
	}
	next.ServeHTTP(t, r)
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
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	code := statusText(status)
	errType := serverErrorType(status, code)
	reqSize := r.ContentLength
	if r.Body == nil || r.ContentLength < 0 {
		reqSize = 0
	}
	size := t.size
	*t = trackingWriter{} // hold nothing of the request while pooled
	trackers.Put(t)
	ms := [...]stats.Measurement{
		ServerLatency.M(float64(elapsed) / float64(time.Millisecond)), ServerResponseBytes.M(size),
		ServerRequestBytes.M(reqSize),
		ServerDuration.M(elapsed.Seconds()), ServerRequestSize.M(reqSize), ServerResponseSize.M(size),
	}
	if plain {
		if ctx := endCtx(method, route, code, scheme, errType); ctx != nil {
			stats.Record(ctx, ms[:]...)
			return
		}
	}
	_ = stats.RecordWithTags(r.Context(), []tag.Mutator{
		tag.Upsert(Method, method), tag.Upsert(StatusCode, code), tag.Upsert(KeyServerRoute, route),
		tag.Upsert(KeyRequestMethod, method), tag.Upsert(KeyRoute, route), tag.Upsert(KeyStatusCode, code),
		tag.Upsert(KeyURLScheme, scheme), tag.Upsert(KeyErrorType, errType),
	}, ms[:]...)
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

// endKey is a tag combination of a request's end (its error.type follows
// from its code, see serverErrorType).
type endKey struct{ method, route, code, scheme string }

type endEntry struct {
	k   endKey
	ctx context.Context
}

// endCache maps recent tag combinations to their contexts: direct-mapped
// by hash, lock-free (a miss builds the context and replaces the slot), so
// a request finds its tags with one hash, one atomic load and a compare.
// 512 slots cover a service's routes × methods × statuses; past that,
// colliding combinations take turns, each turn costing one tag.New.
var (
	endCache [512]atomic.Pointer[endEntry]
	endSeed  = maphash.MakeSeed()
)

// endCtx returns the context of the combination, nil when its tags are
// invalid (a route that is not printable ASCII, say: the caller's
// RecordWithTags then reports nothing and records nothing, as for any
// invalid tag). errType is serverErrorType's of code.
func endCtx(method, route, code, scheme, errType string) context.Context {
	var mh maphash.Hash
	mh.SetSeed(endSeed)
	mh.WriteString(method)
	mh.WriteByte(0)
	mh.WriteString(route)
	mh.WriteByte(0)
	mh.WriteString(code)
	mh.WriteString(scheme)
	slot := &endCache[mh.Sum64()%uint64(len(endCache))]
	k := endKey{method, route, code, scheme}
	if e := slot.Load(); e != nil && e.k == k {
		return e.ctx
	}
	ctx, err := tag.New(context.Background(),
		tag.Upsert(Method, method), tag.Upsert(StatusCode, code), tag.Upsert(KeyServerRoute, route),
		tag.Upsert(KeyRequestMethod, method), tag.Upsert(KeyRoute, route), tag.Upsert(KeyStatusCode, code),
		tag.Upsert(KeyURLScheme, scheme), tag.Upsert(KeyErrorType, errType))
	if err != nil {
		return nil
	}
	// The key's strings may be the request's (a route from Options.Route):
	// keep copies, not the request's memory.
	slot.Store(&endEntry{k: endKey{strings.Clone(method), strings.Clone(route), code, scheme}, ctx: ctx})
	return ctx
}

// trackingWriter counts the status and body bytes of a response. Pooled:
// net/http forbids using a ResponseWriter after ServeHTTP returns.
type trackingWriter struct {
	w      http.ResponseWriter
	status int
	size   int64
}

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
	if t.status == 0 && code >= 200 { // 1xx informational headers do not end the response
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

// methodOf returns m if it is a standard method, else "_OTHER".
func methodOf(m string) string { return methods[methodIndex(m)] }

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
