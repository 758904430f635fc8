package debugstats

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/accept"
	"github.com/zerostat/zerostat/internal/msgpack"
)

// snapshotHandler serves one view's (or every view's) snapshot. It takes
// the cumulative snapshot that exporter.NewSnapshotHandler encodes, decodes
// it with package wire, keeps the asked view, sorts the rows by their tag
// values, and writes it as JSON (wire's MarshalJSON, indented) or as a
// msgpack payload re-encoded from the decoded one: the same format
// (docs/wire-format.md), decodable by wire.Decode and any MessagePack
// library.
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
// Cost: a snapshot of every view (atomic reads of every series) encoded,
// decoded and re-encoded: it allocates in proportion to the snapshot. Not a
// hot path. Safe for concurrent use; recorders are never blocked.
func NewSnapshotHandler(opts Options) http.Handler { return newSnapshotHandler(opts) }

func newSnapshotHandler(opts Options) *snapshotHandler {
	return &snapshotHandler{
		full: exporter.NewSnapshotHandler(exporter.SnapshotOptions{Resource: opts.Resource, DisableCompression: true}),
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
	p, err := h.take()
	if err != nil {
		http.Error(w, "zerostat: snapshot: "+err.Error(), http.StatusInternalServerError) // a bug
		return
	}
	name := q.Get("view")
	if q.Has("view") {
		i := slices.IndexFunc(p.Views, func(v wire.View) bool { return v.Name == name })
		if i < 0 {
			http.Error(w, "view "+strconv.Quote(name)+" is not registered", http.StatusNotFound)
			return
		}
		p.Views = p.Views[i : i+1]
	}
	for i := range p.Views {
		rows := p.Views[i].Rows
		slices.SortFunc(rows, func(a, b wire.Row) int { return slices.Compare(a.Values, b.Values) })
	}
	if format == "msgpack" {
		file := "snapshot.msgpack"
		if name != "" {
			file = fileName(name) + ".msgpack"
		}
		w.Header().Set("Content-Disposition", `attachment; filename="`+file+`"`)
		accept.WriteBody(w, r, appendPayload(nil, p), wire.ContentType, true)
		return
	}
	js, err := p.MarshalJSON()
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

// take encodes a snapshot of every view with the exporter's snapshot
// handler, into a pooled buffer, and decodes it.
func (h *snapshotHandler) take() (*wire.Payload, error) {
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
	req := &http.Request{
		Method: http.MethodGet,
		URL:    &url.URL{Path: "/"},
		Header: http.Header{"Accept": {wire.ContentType}},
	}
	h.full.ServeHTTP(c, req)
	if c.status != http.StatusOK {
		return nil, &statusError{c.status, string(c.body)}
	}
	// Decode copies every string and number out of c.body.
	return wire.Decode(c.body)
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

// appendPayload appends p in zerostat's wire format (docs/wire-format.md,
// version 1) to dst: the envelope, header, resource and views, then the
// string table, with string ids given in order of first use and id 0 the
// empty string. Arrays have their smallest header (the exporter writes the
// views and rows arrays with array32 headers; readers accept any form).
func appendPayload(dst []byte, p *wire.Payload) []byte {
	var t strTable
	t.id("")
	b := msgpack.AppendArrayHeader(dst, wire.EnvelopeLen)
	b = msgpack.AppendUint(b, wire.Version)
	b = msgpack.AppendArrayHeader(b, wire.HeaderLen)
	b = msgpack.AppendTime(b, p.Start)
	b = msgpack.AppendTime(b, p.End)
	b = msgpack.AppendUint(b, uint64(p.Temporality))
	b = msgpack.AppendUint(b, p.Sequence)
	b = msgpack.AppendUint(b, p.Part)
	b = msgpack.AppendBool(b, p.Last)
	b = msgpack.AppendArrayHeader(b, uint32(len(p.Resource)))
	for _, a := range p.Resource {
		b = msgpack.AppendArrayHeader(b, wire.AttrLen)
		b = msgpack.AppendUint(b, t.id(a.Key))
		b = msgpack.AppendUint(b, t.id(a.Value))
	}
	b = msgpack.AppendArrayHeader(b, uint32(len(p.Views)))
	for i := range p.Views {
		v := &p.Views[i]
		b = msgpack.AppendArrayHeader(b, wire.ViewLen)
		b = msgpack.AppendUint(b, t.id(v.Name))
		b = msgpack.AppendUint(b, t.id(v.Description))
		b = msgpack.AppendUint(b, t.id(v.Unit))
		b = msgpack.AppendUint(b, uint64(v.Aggregation))
		b = msgpack.AppendArrayHeader(b, uint32(len(v.Keys)))
		for _, k := range v.Keys {
			b = msgpack.AppendUint(b, t.id(k))
		}
		b = msgpack.AppendArrayHeader(b, uint32(len(v.Bounds)))
		for _, x := range v.Bounds {
			b = msgpack.AppendFloat(b, x)
		}
		b = msgpack.AppendTime(b, v.Start)
		b = msgpack.AppendArrayHeader(b, uint32(len(v.Rows)))
		for j := range v.Rows {
			b = appendRow(b, &t, v, &v.Rows[j], v.Rows[j].Values)
		}
		if v.Overflow == nil {
			b = msgpack.AppendNil(b)
		} else {
			b = appendRow(b, &t, v, v.Overflow, nil) // no tag values
		}
	}
	b = msgpack.AppendArrayHeader(b, uint32(len(t.order)))
	for _, s := range t.order {
		b = msgpack.AppendString(b, s)
	}
	return b
}

func appendRow(b []byte, t *strTable, v *wire.View, r *wire.Row, values []string) []byte {
	b = msgpack.AppendArrayHeader(b, uint32(wire.RowLen(v.Aggregation, len(values))))
	for _, s := range values {
		b = msgpack.AppendUint(b, t.id(s))
	}
	switch v.Aggregation {
	case wire.Count:
		return msgpack.AppendUint(b, r.Count)
	case wire.Sum:
		return msgpack.AppendFloat(b, r.Sum)
	case wire.LastValue:
		return msgpack.AppendFloat(b, r.Value)
	}
	b = msgpack.AppendUint(b, r.Count)
	b = msgpack.AppendFloat(b, r.Sum)
	b = msgpack.AppendFloat(b, r.Min)
	b = msgpack.AppendFloat(b, r.Max)
	b = msgpack.AppendFloat(b, r.SumOfSquaredDev)
	b = msgpack.AppendArrayHeader(b, uint32(len(r.Buckets)))
	for _, c := range r.Buckets {
		b = msgpack.AppendUint(b, c)
	}
	return b
}

// strTable gives strings payload ids in order of first use.
type strTable struct {
	ids   map[string]uint64
	order []string
}

func (t *strTable) id(s string) uint64 {
	if t.ids == nil {
		t.ids = map[string]uint64{}
	}
	if id, ok := t.ids[s]; ok {
		return id
	}
	id := uint64(len(t.order))
	t.ids[s] = id
	t.order = append(t.order, s)
	return id
}
