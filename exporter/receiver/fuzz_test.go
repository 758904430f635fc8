package receiver_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/zerostat/zerostat/exporter/receiver"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/wiretest"
)

// FuzzHandler: whatever the body and encoding, the handler answers
// without panicking, stores a payload exactly when it decodes, and never
// answers 204 for one it did not store; every reservation is given back.
func FuzzHandler(f *testing.F) {
	f.Add(payload(f), false)
	f.Add(gz(payload(f)), true)
	f.Add([]byte{0x95, 1}, false)
	f.Add(gz(make([]byte, 1<<12)), true)
	f.Add(wiretest.Rows(3, "v\xff"), false)                                                            // invalid UTF-8
	f.Add(gz(wiretest.Rows(2000, "v")), true)                                                          // decoded over its cap
	f.Add(wiretest.Dist(0, 1<<63, 1<<63), false)                                                       // bucket counts overflow
	f.Add(wiretest.OneView(1, nil, func(b []byte) []byte { return append(b, 0x90) }, "x", "v"), false) // strings[0] not ""
	f.Fuzz(func(t *testing.T, body []byte, gzipped bool) {
		stored := 0
		h := &receiver.Handler{MaxBodyBytes: 1 << 16, MaxDecompressedBytes: 1 << 16, MaxDecodedBytes: 1 << 17,
			OnPayload: func(*wire.Payload) { stored++ }}
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header.Set("Content-Type", wire.ContentType)
		if gzipped {
			req.Header.Set("Content-Encoding", "gzip")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusNoContent:
			if stored != 1 {
				t.Fatalf("204 with %d payloads stored", stored)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			if stored != 0 {
				t.Fatalf("%d with a payload stored", rec.Code)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Fatalf("error answered as %q", ct)
			}
		default:
			t.Fatalf("status %d", rec.Code)
		}
		if n := h.Inflight(); n != 0 {
			t.Fatalf("%d bytes still reserved", n)
		}
	})
}
