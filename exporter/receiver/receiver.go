// Package receiver accepts zerostat payloads over HTTP: the other end of
// exporter.HTTPSink. A payload is decoded completely before it is handed
// on, so a bad one is refused whole (400, with a message naming the fault)
// and nothing of it is stored.
package receiver

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/zerostat/zerostat/exporter/wire"
)

// Defaults of Handler's caps.
const (
	DefaultMaxBodyBytes         = 8 << 20
	DefaultMaxDecompressedBytes = 64 << 20
)

// Handler is an http.Handler for POSTed payloads. Its fields must not
// change once it serves; it is safe for concurrent use if OnPayload is.
type Handler struct {
	// MaxBodyBytes caps the request body as sent (default 8 MiB);
	// MaxDecompressedBytes caps a gzip body once decompressed (default
	// 64 MiB), so a gzip bomb costs at most that much memory.
	MaxBodyBytes         int64
	MaxDecompressedBytes int
	// OnPayload receives each payload that decoded completely. It runs on
	// the request's goroutine before the response is written.
	OnPayload func(*wire.Payload)
}

var _ http.Handler = (*Handler)(nil)

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		fail(w, http.StatusMethodNotAllowed, "POST a payload")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil ||
		(mt != wire.ContentType && mt != "application/x-msgpack") {
		fail(w, http.StatusUnsupportedMediaType, "Content-Type must be "+wire.ContentType)
		return
	}
	maxBody := h.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = DefaultMaxBodyBytes
	}
	maxDec := h.MaxDecompressedBytes
	if maxDec <= 0 {
		maxDec = DefaultMaxDecompressedBytes
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		fail(w, http.StatusBadRequest, "reading body: "+err.Error())
		return
	}
	if int64(len(body)) > maxBody {
		fail(w, http.StatusRequestEntityTooLarge, "body over "+strconv.FormatInt(maxBody, 10)+" bytes")
		return
	}
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		if body, err = wire.Gunzip(body, maxDec); err != nil {
			status := http.StatusBadRequest
			if errors.Is(err, wire.ErrTooLarge) {
				status = http.StatusRequestEntityTooLarge
			}
			fail(w, status, err.Error())
			return
		}
	default:
		fail(w, http.StatusUnsupportedMediaType, "unsupported Content-Encoding "+strconv.Quote(enc))
		return
	}
	p, err := wire.Decode(body)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	if h.OnPayload != nil {
		h.OnPayload(p)
	}
	w.WriteHeader(http.StatusNoContent)
}

// fail answers with a plain-text message: never HTML, so nothing echoed
// from the input can be interpreted by a browser.
func fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}
