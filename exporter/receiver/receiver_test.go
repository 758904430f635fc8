package receiver_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/receiver"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/wiretest"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

func payload(t testing.TB) []byte {
	t.Helper()
	m := stats.Int64("receiver/m", "", "")
	v := &view.View{Measure: m, Aggregation: view.Count()}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	stats.Record(context.Background(), m.M(1))
	var out []byte
	e, _ := exporter.New(exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
		out = bytes.Clone(p.Data)
		return nil
	}), exporter.Options{})
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out
}

func gz(b []byte) []byte {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(b)
	w.Close()
	return z.Bytes()
}

func TestHandler(t *testing.T) {
	good := payload(t)
	wrongVersion := bytes.Clone(good)
	wrongVersion[1] = 3 // [envelope fixarray, version fixint]
	dangling := bytes.Clone(good)
	// The string table is last: make it one string shorter by cutting the
	// final string and lowering the table's count; every index pointing at
	// the last string now dangles.
	bomb := gz(make([]byte, 4<<20))
	badUTF8 := bytes.Clone(good)
	badUTF8[len(badUTF8)-1] = 0xff // in the last string of the table

	var stored []*wire.Payload
	h := &receiver.Handler{MaxBodyBytes: 1 << 20, MaxDecompressedBytes: 1 << 20, MaxDecodedBytes: 1 << 20,
		OnPayload: func(p *wire.Payload) { stored = append(stored, p) }}
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, tc := range []struct {
		name     string
		method   string
		ctype    string
		encoding string
		body     []byte
		status   int
		want     string
		chunked  bool // no Content-Length
	}{
		{"good", "POST", wire.ContentType, "", good, 204, "", false},
		{"good gzip", "POST", wire.ContentType, "gzip", gz(good), 204, "", false},
		{"GET", "GET", "", "", nil, 405, "POST a payload", false},
		{"wrong type", "POST", "text/html", "", good, 415, "Content-Type must be application/msgpack", false},
		{"unknown encoding", "POST", wire.ContentType, "br", good, 415, `unsupported Content-Encoding "br"`, false},
		{"truncated", "POST", wire.ContentType, "", good[:len(good)/2], 400, "malformed payload", false},
		{"wrong version", "POST", wire.ContentType, "", wrongVersion, 400, "unsupported version 3", false},
		{"dangling string index", "POST", wire.ContentType, "", dropLastString(t, dangling), 400, "dangling string index", false},
		{"oversized", "POST", wire.ContentType, "", make([]byte, 1<<20+1), 413, "body over 1048576 bytes", false},
		{"gzip bomb", "POST", wire.ContentType, "gzip", bomb, 413, "decompresses to more than 1048576 bytes", false},
		{"bad gzip", "POST", wire.ContentType, "gzip", []byte("not gzip"), 400, "gzip", false},
		{"html in payload is not echoed as html", "POST", wire.ContentType, "", []byte("<script>"), 400, "malformed", false},
		{"good chunked", "POST", wire.ContentType, "", good, 204, "", true},
		{"good gzip chunked", "POST", wire.ContentType, "gzip", gz(good), 204, "", true},
		{"oversized chunked", "POST", wire.ContentType, "", make([]byte, 1<<20+1), 413, "body over 1048576 bytes", true},
		{"gzip bomb chunked", "POST", wire.ContentType, "gzip", bomb, 413, "decompresses to more than 1048576 bytes", true},
		// 40 KB of 2-byte rows that decode to 1.9 MB: was 400.
		{"decoded over its cap", "POST", wire.ContentType, "", wiretest.Rows(20000, "v"), 413,
			"payload too large: views[0].rows: the decoded payload would take more than its limit of 1048576 bytes (the payload is 40042 bytes)", false},
		{"decoded over its cap gzip", "POST", wire.ContentType, "gzip", gz(wiretest.Rows(20000, "v")), 413, "the decoded payload would take more than its limit", false},
		{"invalid UTF-8", "POST", wire.ContentType, "", badUTF8, 400, "invalid UTF-8", false},
		{"strings[0] not empty", "POST", wire.ContentType, "", wiretest.OneView(wire.Count, nil, func(b []byte) []byte { return append(b, 0x90) }, "x", "v"), 400,
			`strings[0] is "x"; it must be ""`, false},
		{"bucket counts overflow", "POST", wire.ContentType, "", wiretest.Dist(0, 1<<63, 1<<63), 400, `view "d": bucket counts overflow a uint64`, false},
		{"bucket counts short", "POST", wire.ContentType, "", wiretest.Dist(5, 1, 1), 400, `view "d": bucket counts add up to 2; count is 5`, false},
		{"wrong encoding", "POST", wire.ContentType, "zstd", good, 415, `unsupported Content-Encoding "zstd"`, false},
		{"wrong type, gzip", "POST", "application/json", "gzip", gz(good), 415, "Content-Type must be", false},
	} {
		stored = nil
		var in io.Reader = bytes.NewReader(tc.body)
		if tc.chunked {
			in = io.MultiReader(in) // hides the length: sent chunked
		}
		req, _ := http.NewRequest(tc.method, srv.URL, in)
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		if tc.encoding != "" {
			req.Header.Set("Content-Encoding", tc.encoding)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %q; want %d containing %q", tc.name, resp.StatusCode, body, tc.status, tc.want)
		}
		if tc.status != 204 {
			if len(stored) != 0 {
				t.Errorf("%s: a refused payload was stored", tc.name)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("%s: error answered as %q; want text/plain", tc.name, ct)
			}
		} else if len(stored) != 1 {
			t.Errorf("%s: stored %d payloads; want 1", tc.name, len(stored))
		}
		if n := h.Inflight(); n != 0 {
			t.Errorf("%s: %d bytes still reserved after the request", tc.name, n)
		}
	}
}

// dropLastString removes the string table's last entry, leaving the
// references to it dangling.
func dropLastString(t *testing.T, b []byte) []byte {
	t.Helper()
	p, err := wire.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	_ = p
	// Find the table: the envelope's last element. Walk with the reader.
	// The table here is small (< 16 strings): a fixarray header byte
	// followed by fixstr strings.
	for i := len(b) - 1; i >= 0; i-- {
		if b[i]&0xf0 == 0x90 { // a fixarray header candidate
			n := int(b[i] & 0x0f)
			j, ok := i+1, true
			for k := 0; k < n && ok; k++ {
				if j >= len(b) || b[j]&0xe0 != 0xa0 {
					ok = false
					break
				}
				j += 1 + int(b[j]&0x1f)
			}
			if ok && j == len(b) && n > 1 {
				// Cut the last string and decrement the count.
				last := i + 1
				for k := 0; k < n-1; k++ {
					last += 1 + int(b[last]&0x1f)
				}
				out := bytes.Clone(b[:last])
				out[i]--
				return out
			}
		}
	}
	t.Fatal("string table not found")
	return nil
}

// TestHandlerConsume: a payload Consume refuses is answered as its error
// says (503 with Retry-After by default, so the sender retries), and its
// reservation is given back.
func TestHandlerConsume(t *testing.T) {
	good := payload(t)
	errFull := errors.New("pipeline full")
	for _, tc := range []struct {
		name       string
		err        error
		status     int
		retryAfter string
	}{
		{"stored", nil, 204, ""},
		{"busy", errFull, 503, "1"},
		{"wrapped busy", fmt.Errorf("exporter: %w", errFull), 503, "1"},
		{"too many requests", &receiver.Refused{Status: 429, Err: errFull}, 429, "1"},
		{"permanent", &receiver.Refused{Status: 400, Err: errors.New("bad data")}, 400, ""},
		{"no status", &receiver.Refused{Err: errFull}, 503, "1"},
	} {
		calls := 0
		h := &receiver.Handler{Consume: func(r *http.Request, p *wire.Payload) error {
			calls++
			if len(p.Views) != 1 || r.Method != http.MethodPost {
				t.Errorf("%s: Consume got %d views, method %s", tc.name, len(p.Views), r.Method)
			}
			return tc.err
		}}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/", bytes.NewReader(good))
		req.Header.Set("Content-Type", wire.ContentType)
		h.ServeHTTP(rec, req)
		if rec.Code != tc.status || rec.Header().Get("Retry-After") != tc.retryAfter || calls != 1 {
			t.Errorf("%s: %d, Retry-After %q, %d calls; want %d, %q, 1 call", tc.name,
				rec.Code, rec.Header().Get("Retry-After"), calls, tc.status, tc.retryAfter)
		}
		if tc.err != nil && !strings.Contains(rec.Body.String(), tc.err.Error()) {
			t.Errorf("%s: body %q does not name the error %q", tc.name, rec.Body.String(), tc.err)
		}
		if n := h.Inflight(); n != 0 {
			t.Errorf("%s: %d bytes still reserved", tc.name, n)
		}
	}
}
