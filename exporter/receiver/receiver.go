package receiver

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
)

// Defaults of Handler's limits.
const (
	DefaultMaxBodyBytes         = 8 << 20
	DefaultMaxDecompressedBytes = 8 << 20
	DefaultMaxDecodedBytes      = 64 << 20
	DefaultMaxInflightBytes     = 128 << 20
	DefaultReadTimeout          = 30 * time.Second
)

// RetryAfter is the Retry-After of a 503 answered when MaxInflightBytes
// is reached, in seconds: zerostat's exporter waits that long and retries
// within its export's deadline.
const RetryAfter = 1

// Handler is an http.Handler for POSTed payloads. Its exported fields must
// not change once it serves, nor may a Handler be copied then; it is safe
// for concurrent use if OnPayload is. Zero fields take the defaults.
//
// A request holds, reserved from the Handler's MaxInflightBytes before it
// allocates them: its body, its decompressed body, and the decoded
// payload, each within its own cap (see the package doc).
type Handler struct {
	// MaxBodyBytes caps the request body as sent (default 8 MiB).
	MaxBodyBytes int64
	// MaxDecompressedBytes caps a gzip body once decompressed (default
	// 8 MiB): a gzip bomb costs at most that much memory.
	MaxDecompressedBytes int
	// MaxDecodedBytes caps the memory of the decoded payload (default
	// 64 MiB; wire.DecodeLimit): a payload of tiny rows decodes to up to
	// 96 times its bytes, one zerostat writes to 10-32 times (version 2's
	// columns: up to 56, so a 1 MiB payload, the exporter's default cap,
	// fits).
	MaxDecodedBytes int
	// MaxInflightBytes caps what all requests being served hold together
	// (default 128 MiB; never less than one request's caps together). A
	// request that would pass it is answered 503 with Retry-After.
	MaxInflightBytes int64
	// ReadTimeout bounds reading a request's body, from when the handler
	// starts (default 30 s); a body not read by then is answered 408 and
	// its connection closed. The server's ReadHeaderTimeout bounds the
	// headers.
	ReadTimeout time.Duration
	// OnPayload receives each payload that decoded completely. It runs on
	// the request's goroutine before the response is written, and the
	// payload's memory counts against MaxInflightBytes until it returns.
	OnPayload func(*wire.Payload)
	// Consume, when set, receives each payload that decoded completely
	// instead of OnPayload, and may refuse it: a nil error is answered
	// 204; a *Refused its Status (with Retry-After on a 429 or 503);
	// any other error 503 with Retry-After, so the sender retries (the
	// pipeline behind the receiver is busy or down). It runs as OnPayload
	// does; r is the request (for its context).
	Consume func(r *http.Request, p *wire.Payload) error
	// ConsumeBytes, when set, returns an upper bound of the memory
	// Consume (or OnPayload) allocates for p and holds until it returns,
	// such as the pdata a Collector receiver converts p into. It is
	// reserved from MaxInflightBytes, beside the decoded payload, before
	// the call: a payload whose bound could never fit (with the decoded
	// payload, over MaxInflightBytes alone) is answered 413 naming both,
	// one that does not fit now 503 with Retry-After. Nil: nothing is
	// reserved for the call.
	ConsumeBytes func(p *wire.Payload) int64

	inflight atomic.Int64 // bytes reserved by the requests being served
}

var _ http.Handler = (*Handler)(nil)

// limits are a Handler's caps with the defaults applied.
type limits struct {
	body, decompressed, decoded, inflight int64
	timeout                               time.Duration
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func (h *Handler) limits() limits {
	l := limits{
		body:         orDefault(h.MaxBodyBytes, DefaultMaxBodyBytes),
		decompressed: int64(orDefault(h.MaxDecompressedBytes, DefaultMaxDecompressedBytes)),
		decoded:      int64(orDefault(h.MaxDecodedBytes, DefaultMaxDecodedBytes)),
		inflight:     orDefault(h.MaxInflightBytes, DefaultMaxInflightBytes),
		timeout:      orDefault(h.ReadTimeout, DefaultReadTimeout),
	}
	// A request alone within its caps is always admitted.
	l.inflight = max(l.inflight, l.body+l.decompressed+l.decoded)
	return l
}

// Inflight returns the bytes reserved by the requests being served (for
// tests and monitoring). Cost: one atomic load.
func (h *Handler) Inflight() int64 { return h.inflight.Load() }

// errBusy: a reservation would pass MaxInflightBytes.
var errBusy = errors.New("receiver busy: try again later")

// reservation is what one request holds of its Handler's inflight bytes.
// Not safe for concurrent use (one request's goroutine).
type reservation struct {
	h     *Handler
	limit int64
	held  int64
}

// take reserves n more bytes, or returns errBusy if that would pass the
// limit. Lock-free: a CAS loop on the Handler's counter.
func (q *reservation) take(n int64) error {
	for {
		cur := q.h.inflight.Load()
		if cur+n > q.limit {
			return errBusy
		}
		if q.h.inflight.CompareAndSwap(cur, cur+n) {
			q.held += n
			return nil
		}
	}
}

// give returns n bytes of the reservation.
func (q *reservation) give(n int64) {
	q.held -= n
	q.h.inflight.Add(-n)
}

// tooLarge is the error of a body over its cap.
type tooLarge struct{ msg string }

func (e tooLarge) Error() string { return e.msg }

// readAll reads r to its end, into a buffer reserved before it is
// allocated: hint+1 bytes when the size is announced (Content-Length, the
// gzip trailer), so an honest body is read without growing; else 64 KiB,
// doubled as needed (the old buffer's reservation given back once copied).
// More than max bytes is a tooLarge error naming what with max.
func (q *reservation) readAll(r io.Reader, hint, max int64, what string) ([]byte, error) {
	c := min(max+1, 64<<10)
	if hint > 0 {
		c = min(max, hint) + 1 // the +1 lets Read report EOF without growing
	}
	if err := q.take(c); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, c)
	for {
		if len(buf) == cap(buf) {
			if int64(cap(buf)) > max {
				return nil, tooLarge{what + " more than " + strconv.FormatInt(max, 10) + " bytes"}
			}
			n := min(2*int64(cap(buf)), max+1)
			if err := q.take(n); err != nil {
				return nil, err
			}
			grown := make([]byte, len(buf), n)
			copy(grown, buf)
			q.give(int64(cap(buf)))
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if int64(len(buf)) > max {
				return nil, tooLarge{what + " more than " + strconv.FormatInt(max, 10) + " bytes"}
			}
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// maxDeflateRatio is deflate's largest compression ratio (about 1032:1,
// https://zlib.net/zlib_tech.html): the gzip trailer's size, which a
// hostile sender may inflate, is trusted only up to it.
const maxDeflateRatio = 1032

// gzipSize returns the decompressed size a gzip stream announces in its
// trailer (ISIZE, RFC 1952 section 2.3.1), bounded by what its length can
// decompress to; 0 if it has none.
func gzipSize(b []byte) int64 {
	if len(b) < 18 { // header 10 + trailer 8
		return 0
	}
	return min(int64(binary.LittleEndian.Uint32(b[len(b)-4:])), int64(len(b))*maxDeflateRatio)
}

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
	gzipped := false
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		gzipped = true
	default:
		fail(w, http.StatusUnsupportedMediaType, "unsupported Content-Encoding "+strconv.Quote(enc))
		return
	}
	l := h.limits()
	if r.ContentLength > l.body {
		fail(w, http.StatusRequestEntityTooLarge, "body over "+strconv.FormatInt(l.body, 10)+" bytes")
		return
	}
	// Unsupported by some writers (httptest.ResponseRecorder): then the
	// server's own timeouts are all there is.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(l.timeout))

	q := &reservation{h: h, limit: l.inflight}
	defer func() { q.give(q.held) }()
	body, err := q.readAll(r.Body, r.ContentLength, l.body, "body of")
	if err != nil {
		var tl tooLarge
		switch {
		case errors.As(err, &tl):
			fail(w, http.StatusRequestEntityTooLarge, "body over "+strconv.FormatInt(l.body, 10)+" bytes")
		case errors.Is(err, errBusy):
			busy(w)
		case errors.Is(err, os.ErrDeadlineExceeded):
			fail(w, http.StatusRequestTimeout, "reading body: not done within "+l.timeout.String())
		default:
			fail(w, http.StatusBadRequest, "reading body: "+err.Error())
		}
		return
	}
	// Read: lift the deadline, which would otherwise end the server's
	// background read of the connection while OnPayload runs.
	_ = rc.SetReadDeadline(time.Time{})
	held := int64(cap(body))
	if gzipped {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err == nil {
			body, err = q.readAll(zr, gzipSize(body), l.decompressed, "decompresses to")
		}
		if err != nil {
			var tl tooLarge
			switch {
			case errors.As(err, &tl):
				fail(w, http.StatusRequestEntityTooLarge, tl.msg)
			case errors.Is(err, errBusy):
				busy(w)
			default:
				fail(w, http.StatusBadRequest, "gzip: "+err.Error())
			}
			return
		}
		q.give(held) // the compressed body is garbage now
		held = int64(cap(body))
	}
	limit := min(l.decoded, int64(wire.DecodeBudget(len(body))))
	if err := q.take(limit); err != nil {
		busy(w)
		return
	}
	p, err := wire.DecodeLimit(body, int(limit))
	q.give(held) // the payload does not alias the body
	if err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, wire.ErrTooLarge) {
			status = http.StatusRequestEntityTooLarge
		}
		fail(w, status, err.Error())
		return
	}
	q.give(limit - int64(p.MemSize())) // reserved but not taken
	if h.ConsumeBytes != nil {
		n := h.ConsumeBytes(p)
		if q.held+n > l.inflight {
			fail(w, http.StatusRequestEntityTooLarge, "payload of "+strconv.FormatInt(int64(p.MemSize()), 10)+
				" bytes decoded needs "+strconv.FormatInt(n, 10)+" more to consume; together over the "+
				strconv.FormatInt(l.inflight, 10)+"-byte in-flight budget")
			return
		}
		if err := q.take(n); err != nil {
			busy(w)
			return
		}
	}
	if h.Consume != nil {
		if err := h.Consume(r, p); err != nil {
			refuse(w, err)
			return
		}
	} else if h.OnPayload != nil {
		h.OnPayload(p)
	}
	w.WriteHeader(http.StatusNoContent)
}

// Refused is an error of Consume that says how to answer: Status (a 4xx
// or 5xx code; 429 and 503 get Retry-After: RetryAfter) with Err's text.
type Refused struct {
	Status int
	Err    error
}

func (e *Refused) Error() string { return e.Err.Error() }
func (e *Refused) Unwrap() error { return e.Err }

// refuse answers Consume's error err.
func refuse(w http.ResponseWriter, err error) {
	status := http.StatusServiceUnavailable
	var rf *Refused
	if errors.As(err, &rf) && rf.Status >= 400 && rf.Status <= 599 {
		status = rf.Status
	}
	if status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
	}
	fail(w, status, "not stored: "+err.Error())
}

// busy answers 503 with Retry-After, which zerostat's exporter (and OTLP
// and remote-write senders) honour.
func busy(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
	fail(w, http.StatusServiceUnavailable, errBusy.Error())
}

// fail answers with a plain-text message: never HTML, so nothing echoed
// from the input can be interpreted by a browser.
func fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}
