package exporter

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/accept"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/delta"
)

// SnapshotOptions configure NewSnapshotHandler. The zero value is usable.
type SnapshotOptions struct {
	// Resource describes the process in the msgpack and JSON forms (empty
	// fields get Options.Resource's defaults).
	Resource Resource
	// Prometheus names the series of the Prometheus forms (namespace,
	// constant labels); its Format field is ignored.
	Prometheus prometheus.Options
	// DisableCompression turns off gzip, otherwise used when the request's
	// Accept-Encoding allows it.
	DisableCompression bool
	// SortRows orders each view's rows by their tag values in the msgpack
	// and JSON forms, for people reading them (a sort per request; the
	// Exporter's payloads keep the order of the series).
	SortRows bool
}

// The media types the snapshot handler offers, in its order of
// preference: JSON answers "*/*" and requests without Accept.
const (
	ContentTypeJSON = "application/json"
)

var snapshotOffers = []accept.Offer{
	{Type: ContentTypeJSON},
	{Type: wire.ContentType}, // application/msgpack
	{Type: "application/x-msgpack"},
	{Type: "application/vnd.msgpack"},
	{Type: "text/plain", Version: "0.0.4"},
	{Type: "application/openmetrics-text", Version: "1.0.0"},
	{Type: "application/openmetrics-text", Version: "0.0.1"},
}

const snapshotNotAcceptable = "acceptable: application/json, application/msgpack, text/plain; version=0.0.4, application/openmetrics-text; version=1.0.0\n"

// snapshotHandler serves the current cumulative snapshot. Its encoders
// are pooled: concurrent requests encode in parallel, each with buffers
// reused from earlier requests.
type snapshotHandler struct {
	resource    []wire.Attribute
	resourceErr error // SnapshotOptions.Resource's, answered to every request
	prom        *prometheus.Handler
	compress    bool
	sortRows    bool
	encoders    sync.Pool // *encoder
	bufs        sync.Pool // *[]byte, for the Prometheus forms
}

var _ http.Handler = (*snapshotHandler)(nil)

// NewSnapshotHandler returns a handler serving a snapshot of every
// registered view (those with no rows yet included, unlike the Exporter's
// payloads), with cumulative values, in the form the request's Accept
// header prefers:
//
//   - application/msgpack (also application/x-msgpack and
//     application/vnd.msgpack): zerostat's wire format (docs/wire-format.md),
//     one payload, as the Exporter sends it;
//   - application/json (the default, for "*/*" or no Accept): the same
//     payload as package wire's MarshalJSON renders it;
//   - text/plain; version=0.0.4 or application/openmetrics-text: the
//     Prometheus exposition of package exporter/prometheus.
//
// Anything else gets 406 Not Acceptable; methods other than GET and HEAD
// get 405. The query parameter view=NAME restricts the msgpack and JSON
// forms to the registered view named NAME (404 when there is none). An
// invalid Resource (see Resource.Normalize) is answered with 500 and the
// error to every request. The body is built in a buffer first and written in one Write
// with its Content-Length (gzip-compressed when the request accepts it):
// a slow client never holds an encoder's lock, and the encoder never
// writes to the socket in small pieces.
//
// Cost: a snapshot (atomic reads of every series) and its encoding. In
// steady state the msgpack and Prometheus forms allocate only the response
// headers (3 allocations, tested), besides what net/http allocates per
// request; the JSON form decodes the payload and marshals it with
// encoding/json (it allocates in proportion to the snapshot). Safe for
// concurrent use; recorders are never blocked.
func NewSnapshotHandler(opts SnapshotOptions) http.Handler {
	popts := opts.Prometheus
	popts.Format = 0
	popts.DisableCompression = true // compression is decided here
	resource, err := opts.Resource.attributes()
	return &snapshotHandler{
		resource:    resource,
		resourceErr: err,
		prom:        prometheus.NewHandler(popts),
		compress:    !opts.DisableCompression,
		sortRows:    opts.SortRows,
	}
}

func (h *snapshotHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if h.resourceErr != nil {
		http.Error(w, "exporter: snapshot handler: "+h.resourceErr.Error(), http.StatusInternalServerError)
		return
	}
	choice := accept.Negotiate(r.Header.Get("Accept"), snapshotOffers)
	only := ""
	if r.URL.RawQuery != "" && r.URL.Query().Has("view") {
		only = r.URL.Query().Get("view")
		if !registered(only) {
			http.Error(w, "view "+strconv.Quote(only)+" is not registered", http.StatusNotFound)
			return
		}
	}
	switch choice {
	case -1:
		http.Error(w, "406 not acceptable; "+snapshotNotAcceptable, http.StatusNotAcceptable)
	case 0, 1, 2, 3:
		h.serveWire(w, r, choice == 0, only)
	default:
		f := prometheus.FormatText
		if choice >= 5 {
			f = prometheus.FormatOpenMetrics
		}
		bp, _ := h.bufs.Get().(*[]byte)
		if bp == nil {
			bp = new([]byte)
		}
		*bp = h.prom.AppendFormat((*bp)[:0], f)
		accept.WriteBody(w, r, *bp, f.ContentType(), h.compress)
		h.bufs.Put(bp)
	}
}

// registered reports whether a view named name is registered.
func registered(name string) bool {
	for _, v := range core.Views() {
		if v.Name == name {
			return true
		}
	}
	return false
}

// serveWire encodes the snapshot with a pooled encoder and writes it from
// the encoder's own buffer (the payload is valid until the encoder's next
// use), as msgpack, or as JSON.
func (h *snapshotHandler) serveWire(w http.ResponseWriter, r *http.Request, asJSON bool, only string) {
	e, _ := h.encoders.Get().(*encoder)
	if e == nil {
		// No size cap: a snapshot is one payload.
		e = newEncoder(math.MaxInt, delta.Kinds{}, 0, h.resource)
		e.allViews = true // registered views with no rows yet too
		e.sortRows = h.sortRows
	}
	defer h.encoders.Put(e)
	e.only = only
	core.Collect() // callback gauges and counters (metric, runtime) read now
	now := time.Now()
	var payload []byte
	_ = e.encode(now, now, func(p []byte, last bool) error { // emit never fails
		payload = p
		return nil
	})
	if !asJSON {
		accept.WriteBody(w, r, payload, wire.ContentType, h.compress)
		return
	}
	p, err := wire.Decode(payload)
	var js []byte
	if err == nil {
		js, err = p.MarshalJSON()
	}
	if err != nil { // a bug: the encoder's output must decode
		http.Error(w, "zerostat: snapshot: "+err.Error(), http.StatusInternalServerError)
		return
	}
	accept.WriteBody(w, r, append(js, '\n'), ContentTypeJSON, h.compress)
}
