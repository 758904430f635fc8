// Package accept serves the HTTP handlers of package exporter and
// exporter/prometheus: it chooses a response's media type from the Accept
// header (RFC 9110 section 12.5.1) and its compression from
// Accept-Encoding, parsing them in place (Negotiate and AcceptsGzip do not
// allocate), and writes a buffered body with its Content-Length.
package accept

import (
	"iter"
	"net/http"
	"strconv"
	"strings"

	"github.com/zerostat/zerostat/internal/gzipbuf"
)

// Offer is a media type a handler can produce. When Version is set, a
// media range that names a version (";version=...") matches the offer
// only if it names this one, as Prometheus's scrapers and client_golang
// use the parameter.
type Offer struct {
	Type    string // "type/subtype", lower case
	Version string
}

// Negotiate returns the index in offers of the one header prefers: the
// highest quality ("q"), the most specific matching range deciding an
// offer's quality, the earlier offer among equals. An empty header accepts
// anything and gets offers[0]. It returns -1 when no offer is acceptable.
func Negotiate(header string, offers []Offer) int {
	if strings.TrimSpace(header) == "" {
		if len(offers) == 0 {
			return -1
		}
		return 0
	}
	best, bestQ := -1, 0.0
	for i, o := range offers {
		if q := quality(header, o); q > bestQ {
			best, bestQ = i, q
		}
	}
	return best
}

// quality returns the q of the most specific range of header matching o
// (0 if none).
func quality(header string, o Offer) float64 {
	q, spec := 0.0, -1
	for mt, params := range Ranges(header) {
		rq, version := 1.0, ""
		for k, v := range Params(params) {
			switch {
			case strings.EqualFold(k, "q"):
				if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f <= 1 {
					rq = f
				}
			case strings.EqualFold(k, "version"):
				version = v
			}
		}
		s := -1
		typ, sub, _ := strings.Cut(mt, "/")
		otyp, osub, _ := strings.Cut(o.Type, "/")
		switch {
		case typ == "*" && sub == "*":
			s = 0
		case strings.EqualFold(typ, otyp) && sub == "*":
			s = 1
		case strings.EqualFold(typ, otyp) && strings.EqualFold(sub, osub):
			s = 2
			if version != "" && o.Version != "" {
				if version != o.Version {
					continue
				}
				s = 3
			}
		}
		if s > spec {
			spec, q = s, rq
		}
	}
	return q
}

// Ranges yields the media ranges of an Accept header: each range's media
// type (trimmed) and its parameters (the text after the first ';', for
// Params). No allocation.
func Ranges(header string) iter.Seq2[string, string] {
	return func(yield func(mediaType, params string) bool) {
		for rest := header; rest != ""; {
			var r string
			r, rest, _ = strings.Cut(rest, ",")
			mt, params, _ := strings.Cut(r, ";")
			if !yield(strings.TrimSpace(mt), params) {
				return
			}
		}
	}
}

// Params yields the parameters of a media range (from Ranges): each name
// and value, trimmed, the value unquoted. No allocation.
func Params(params string) iter.Seq2[string, string] {
	return func(yield func(name, value string) bool) {
		for params != "" {
			var p string
			p, params, _ = strings.Cut(params, ";")
			k, v, _ := strings.Cut(p, "=")
			if !yield(strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"`)) {
				return
			}
		}
	}
}

// WriteBody writes body as the complete response (status 200) with its
// Content-Type and Content-Length, gzip-compressed (at gzip.BestSpeed,
// into a pooled buffer) when compress is set and the request's
// Accept-Encoding allows gzip. A HEAD request gets the headers only.
func WriteBody(w http.ResponseWriter, r *http.Request, body []byte, contentType string, compress bool) {
	hdr := w.Header()
	hdr.Set("Content-Type", contentType)
	if compress {
		hdr.Add("Vary", "Accept-Encoding")
	}
	if compress && AcceptsGzip(r.Header.Get("Accept-Encoding")) {
		zc := gzipPool.Get()
		defer gzipPool.Put(zc)
		body = zc.Compress(body)
		hdr.Set("Content-Encoding", "gzip")
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// AcceptsGzip reports whether an Accept-Encoding header allows gzip with
// a non-zero quality, named or through "*" (a named gzip decides).
func AcceptsGzip(header string) bool {
	star := false
	for rest := header; rest != ""; {
		var e string
		e, rest, _ = strings.Cut(rest, ",")
		name, params, _ := strings.Cut(e, ";")
		name = strings.TrimSpace(name)
		ok := true
		k, v, _ := strings.Cut(params, "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && q == 0 {
				ok = false
			}
		}
		switch {
		case strings.EqualFold(name, "gzip"):
			return ok
		case name == "*":
			star = ok
		}
	}
	return star
}

// gzipPool lends the compressors of the handlers' bodies (package
// gzipbuf: the one gzip compressor the exporters use too).
var gzipPool gzipbuf.Pool
