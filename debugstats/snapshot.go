package debugstats

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/accept"
)

// snapshotHandler serves one view's (or every view's) snapshot: the
// cumulative snapshot exporter.NewSnapshotHandler encodes (restricted to
// the asked view, rows sorted by their tag values), as it is for msgpack
// (the one wire encoder, docs/wire-format.md), or decoded with package
// wire and written as indented JSON.
type snapshotHandler struct {
	full http.Handler // exporter.NewSnapshotHandler
	bufs sync.Pool    // *capture
}

var _ http.Handler = (*snapshotHandler)(nil)

// NewSnapshotHandler returns the handler of the page's snapshot links,
// for Options.SnapshotURL. Query parameters:
//
//   - view=NAME: the registered view named NAME (404 when there is none);
//     without it, every view;
//   - format=json (the default) or format=msgpack (400 for anything else).
//
// JSON is package wire's rendering of a payload (tags as objects,
// aggregations by name), indented for people; msgpack is one payload of
// zerostat's wire format (Content-Type application/msgpack, served as an
// attachment named after the view). Values are cumulative; rows are sorted
// by their tag values; the body is gzip-compressed when the request
// accepts it. Only opts.Resource is used.
//
// Cost: a snapshot of the asked views (atomic reads of every series),
// sorted and encoded; JSON also decodes it and allocates in proportion to
// it. Not a hot path. Safe for concurrent use; recorders are never
// blocked.
func NewSnapshotHandler(opts Options) http.Handler { return newSnapshotHandler(opts) }

func newSnapshotHandler(opts Options) *snapshotHandler {
	return &snapshotHandler{
		full: exporter.NewSnapshotHandler(exporter.SnapshotOptions{Resource: opts.Resource, DisableCompression: true, SortRows: true}),
	}
}

func (h *snapshotHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	format := q.Get("format")
	if format != "" && format != "json" && format != "msgpack" {
		http.Error(w, "format must be json or msgpack", http.StatusBadRequest)
		return
	}
	name := q.Get("view")
	c, _ := h.bufs.Get().(*capture)
	if c == nil {
		c = &capture{}
	}
	defer func() {
		if cap(c.body) <= maxPooledPage {
			h.bufs.Put(c)
		}
	}()
	c.reset()
	u := &url.URL{Path: "/"}
	if q.Has("view") {
		u.RawQuery = url.Values{"view": {name}}.Encode()
	}
	h.full.ServeHTTP(c, &http.Request{Method: http.MethodGet, URL: u, Header: http.Header{"Accept": {wire.ContentType}}})
	switch {
	case c.status == http.StatusNotFound:
		http.Error(w, strings.TrimSpace(string(c.body)), http.StatusNotFound)
		return
	case c.status != http.StatusOK:
		http.Error(w, "zerostat: snapshot: "+(&statusError{c.status, string(c.body)}).Error(), http.StatusInternalServerError) // a bug
		return
	}
	if format == "msgpack" {
		file := "snapshot.msgpack"
		if name != "" {
			file = fileName(name) + ".msgpack"
		}
		w.Header().Set("Content-Disposition", `attachment; filename="`+file+`"`)
		accept.WriteBody(w, r, c.body, wire.ContentType, true)
		return
	}
	p, err := wire.Decode(c.body)
	var js []byte
	if err == nil {
		js, err = p.MarshalJSON()
	}
	var out bytes.Buffer
	if err == nil {
		err = json.Indent(&out, js, "", "  ")
	}
	if err != nil {
		http.Error(w, "zerostat: snapshot: "+err.Error(), http.StatusInternalServerError) // a bug
		return
	}
	out.WriteByte('\n')
	accept.WriteBody(w, r, out.Bytes(), "application/json", true)
}

// capture is an http.ResponseWriter that keeps the response in memory.
type capture struct {
	header http.Header
	status int
	body   []byte
}

func (c *capture) reset() {
	c.header = http.Header{}
	c.status = 0
	c.body = c.body[:0]
}

func (c *capture) Header() http.Header { return c.header }

func (c *capture) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}

func (c *capture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.body = append(c.body, p...)
	return len(p), nil
}

type statusError struct {
	status int
	body   string
}

func (e *statusError) Error() string {
	return "snapshot handler answered " + http.StatusText(e.status) + ": " + strings.TrimSpace(e.body)
}

// fileName keeps the characters of a view name that are safe in a
// Content-Disposition file name and replaces the others with '_'.
func fileName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
