package otlp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"mime"
	"net/http"
)

const (
	userAgent = "zerostat-otlp"
	// maxErrorBody caps the answer quoted in an HTTPError.
	maxErrorBody = 512
)

func isProtobuf(h http.Header) bool {
	ct := h.Get("Content-Type")
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == ContentType
}

// errorMessage returns what to quote of an error answer: a protobuf
// google.rpc.Status's message (what OTLP/HTTP receivers send), else the
// start of the body.
func errorMessage(h http.Header, data []byte) string {
	if isProtobuf(h) {
		if msg, ok := parseStatusMessage(data); ok {
			data = []byte(msg)
		}
	}
	data = bytes.TrimSpace(data)
	if len(data) > maxErrorBody {
		data = data[:maxErrorBody]
	}
	return string(data)
}

var errMalformed = errors.New("otlp: malformed protobuf")

// field is one field read by nextField.
type field struct {
	num  uint64
	typ  uint8
	v    uint64 // varint and fixed values
	data []byte // length-delimited content
}

// nextField reads the field at the start of b and returns the rest.
func nextField(b []byte) (f field, rest []byte, err error) {
	key, n := binary.Uvarint(b)
	if n <= 0 {
		return f, nil, errMalformed
	}
	b = b[n:]
	f.num, f.typ = key>>3, uint8(key&7)
	switch f.typ {
	case wireVarint:
		if f.v, n = binary.Uvarint(b); n <= 0 {
			return f, nil, errMalformed
		}
		return f, b[n:], nil
	case wireFixed64:
		if len(b) < 8 {
			return f, nil, errMalformed
		}
		f.v = binary.LittleEndian.Uint64(b)
		return f, b[8:], nil
	case wireBytes:
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return f, nil, errMalformed
		}
		f.data = b[n : n+int(l)]
		return f, b[n+int(l):], nil
	case 5: // fixed32
		if len(b) < 4 {
			return f, nil, errMalformed
		}
		return f, b[4:], nil
	}
	return f, nil, errMalformed
}

// parsePartialSuccess decodes an ExportMetricsServiceResponse. It returns
// nil when the response reports no partial success.
func parsePartialSuccess(b []byte) (*PartialSuccess, error) {
	var ps *PartialSuccess
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, err
		}
		b = rest
		if f.num != tagResponsePartialSuccess>>3 || f.typ != wireBytes {
			continue
		}
		p := PartialSuccess{}
		for d := f.data; len(d) > 0; {
			g, rest, err := nextField(d)
			if err != nil {
				return nil, err
			}
			d = rest
			switch {
			case g.num == tagPSRejected>>3 && g.typ == wireVarint:
				p.RejectedDataPoints = int64(g.v)
			case g.num == tagPSMessage>>3 && g.typ == wireBytes:
				p.ErrorMessage = string(g.data)
			}
		}
		// "If the request is only partially accepted [...] the server
		// MUST initialize the partial_success field"; an empty one means
		// full success.
		if p.RejectedDataPoints != 0 || p.ErrorMessage != "" {
			ps = &p
		}
	}
	return ps, nil
}

// parseStatusMessage returns the message of a google.rpc.Status.
func parseStatusMessage(b []byte) (string, bool) {
	msg, found := "", false
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return "", false
		}
		b = rest
		if f.num == tagStatusMessage>>3 && f.typ == wireBytes {
			msg, found = string(f.data), true
		}
	}
	return msg, found
}
