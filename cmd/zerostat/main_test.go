package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/stats"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/view"
)

func TestDemoTotalsMatch(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"demo", "-duration", "1500ms", "-period", "500ms"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s\nstdout:\n%s", code, errOut.String(), out.String())
	}
	s := out.String()
	for _, want := range []string{"== snapshot 1 from zerostat-demo: cumulative values", "snapshot N, the N-th export",
		"demo/latency", "demo/requests", "http.route=/users", "~p50", "~p99", legend, "summary:"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	// Issue 44, item 8: lines of up to 222 columns; a start without
	// milliseconds; estimates not labelled so.
	checkWidth(t, s)
	if strings.Contains(s, "p99=") {
		t.Errorf("an estimate printed without its label:\n%s", s)
	}
	checkHeaders(t, s)
	if view.Find("demo/requests") != nil {
		t.Error("the demo left its views registered")
	}

	// The progress lines count requests as they are answered: never
	// decreasing, one final line ("load done") after which none follows,
	// and its count is the summary's.
	progress := regexp.MustCompile(`(?m)^\[ *[0-9.]+s/1.5s\] ([0-9]+) requests answered \([0-9]+/s\)(; load done)?$`)
	lines := progress.FindAllStringSubmatch(s, -1)
	if len(lines) == 0 {
		t.Fatalf("no progress line:\n%s", s)
	}
	prev := int64(-1)
	for i, l := range lines {
		n, _ := strconv.ParseInt(l[1], 10, 64)
		if n < prev {
			t.Errorf("progress went from %d down to %d", prev, n)
		}
		prev = n
		if final := l[2] != ""; final != (i == len(lines)-1) {
			t.Errorf("progress line %d of %d %q: want exactly the last one to say load done", i+1, len(lines), l[0])
		}
	}
	if want := fmt.Sprintf("summary: %d requests answered, %d counted by demo/requests,\n         %d in the last snapshot received", prev, prev, prev); prev <= 0 || !strings.Contains(s, want) {
		t.Errorf("the final progress line says %d requests; the summary should say %q:\n%s", prev, want, s)
	}
}

// TestDemoJSONAndInterrupt: with -format json stdout carries only JSON
// lines (progress and the summary go to stderr); an interrupt ends the load
// early and the totals still match.
func TestDemoJSONAndInterrupt(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"demo", "-duration", "1s", "-period", "500ms", "-format", "json"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("stdout line is not JSON: %q", l)
		}
	}
	if len(lines) < 2 || !strings.Contains(errOut.String(), "; load done") || !strings.Contains(errOut.String(), "summary: ") {
		t.Errorf("%d JSON lines; stderr:\n%s", len(lines), errOut.String())
	}
	checkWidth(t, errOut.String())

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Ctrl-C before the first tick
	out.Reset()
	errOut.Reset()
	if code := run(ctx, []string{"demo", "-duration", "1h"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "; interrupted, stopping") || !strings.Contains(out.String(), "summary: ") {
		t.Errorf("interrupted demo: exit %d, stdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	checkWidth(t, out.String())
	checkHeaders(t, out.String())
}

// TestExitCodes: -h and -help exit 0 with the usage on stdout for every
// command; bad usage exits 2 with a message on stderr; a failure of the
// work itself exits 1.
func TestExitCodes(t *testing.T) {
	for _, cmd := range [][]string{{}, {"demo"}, {"receive"}, {"decode"}, {"help"}} {
		for _, h := range []string{"-h", "-help", "--help"} {
			args := append(slices.Clone(cmd), h)
			var out, errOut bytes.Buffer
			if code := run(context.Background(), args, &out, &errOut); code != 0 || !strings.Contains(out.String(), "usage: zerostat") || errOut.Len() != 0 {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want 0 and the usage on stdout", args, code, out.String(), errOut.String())
			}
		}
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"help", "decode"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "usage: zerostat decode") {
		t.Errorf("help decode: exit %d, stdout %q", code, out.String())
	}
	if code := run(context.Background(), []string{"demo", "-h"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "-export-to URL\n") {
		t.Errorf("demo -h: exit %d; want its -export-to flag to take a URL:\n%s", code, out.String())
	}

	text := filepath.Join(t.TempDir(), "text")
	if err := os.WriteFile(text, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		args []string
		code int
		want string // on stderr
	}{
		{nil, 2, "usage: zerostat"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"demo", "-duration", "-1s"}, 2, "must be positive"},
		{[]string{"demo", "-bogus"}, 2, "-bogus"},
		{[]string{"demo", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"demo", "-format", "xml"}, 2, `unknown -format "xml"`},
		// Issue 44, item 6: 3 exited 1 without a usage hint; 0 was taken
		// silently, and sent version 1.
		{[]string{"demo", "-wire-version", "3"}, 2, "-wire-version 3: want 1 or 2"},
		{[]string{"demo", "-wire-version", "0"}, 2, "-wire-version 0: want 1 or 2"},
		{[]string{"demo", "-export-to", "not a url"}, 2, `-export-to: "not a url" is not an http:// or https:// URL`},
		{[]string{"demo", "-export-to", "ftp://127.0.0.1/"}, 2, "is not an http:// or https:// URL"},
		{[]string{"demo", "-export-to", "http:///receive"}, 2, "has no host"},
		{[]string{"demo", "-export-to", "http://%zz/"}, 2, "-export-to: parse"},
		{[]string{"receive", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"receive", "-format", "xml"}, 2, `unknown -format "xml"`},
		{[]string{"decode"}, 2, "want one FILE"},
		{[]string{"decode", "a", "b"}, 2, "want one FILE"},
		{[]string{"decode", "-format", "xml", text}, 2, `unknown -format "xml"`},
		{[]string{"decode", filepath.Join(t.TempDir(), "missing")}, 1, "no such file"},
		{[]string{"decode", text}, 1, "not a zerostat payload or frame stream (first bytes 68 65 6c 6c 6f 0a)"},
		{[]string{"receive", "-listen", busy.Addr().String()}, 1, "address already in use"},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, errOut.String(), tc.code, tc.want)
		}
		if tc.code == 2 && tc.args != nil && tc.args[0] == "demo" && out.Len() != 0 {
			t.Errorf("%q: the demo started before refusing its flags:\n%s", tc.args, out.String())
		}
	}
}

func TestQuantile(t *testing.T) {
	// 10 values in [10,20), 10 in [20,30); min 10, max 29.
	r := &wire.Row{Count: 20, Min: 10, Max: 29, Buckets: []uint64{0, 10, 10, 0}}
	bounds := []float64{10, 20, 30}
	for _, tc := range []struct{ q, want float64 }{
		{0.25, 15},   // halfway through [10,20)
		{0.5, 20},    // the boundary
		{0.75, 24.5}, // halfway through [20, max=29]
		{1, 29},
	} {
		if got := quantile(bounds, r, tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("quantile(%v) = %v; want %v", tc.q, got, tc.want)
		}
	}
	if got := formatFloat(216141824); got != "216141824" {
		t.Errorf("formatFloat = %q", got)
	}
}

func TestDecodeFramesAndPayload(t *testing.T) {
	m := stats.Int64("test/decode", "Decoded", stats.UnitBytes)
	v := &view.View{Measure: m, Aggregation: view.Sum()}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	stats.Record(context.Background(), m.M(1234))

	var frames bytes.Buffer
	e, err := exporter.New(&exporter.WriterSink{W: &frames}, exporter.Options{Compression: exporter.Gzip})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "frames.bin")
	if err := os.WriteFile(path, frames.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"decode", path}, &out, &errOut); code != 0 {
		t.Fatalf("decode exit %d: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d JSON lines; want 2:\n%s", len(lines), out.String())
	}
	var p struct {
		Sequence int `json:"sequence"`
		Views    []struct {
			Name string `json:"name"`
			Rows []struct {
				Sum float64 `json:"sum"`
			} `json:"rows"`
		} `json:"views"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &p); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range p.Views {
		if v.Name == "test/decode" && len(v.Rows) == 1 && v.Rows[0].Sum == 1234 {
			found = true
		}
	}
	if p.Sequence != 2 || !found {
		t.Errorf("second line %s", lines[1])
	}

	// A single payload (the first frame's bytes, un-framed) from stdin.
	fr, err := wire.ReadFrame(bytes.NewReader(frames.Bytes()), nil, wire.MaxFrameSize)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := runDecode([]string{"-format", "table", "-"}, bytes.NewReader(fr), &out, &errOut); code != 0 || !strings.Contains(out.String(), "test/decode") {
		t.Errorf("decode of one payload: exit %d, output %q, stderr %q", code, out.String(), errOut.String())
	}

	// Garbage: an error naming the frame, exit 1.
	errOut.Reset()
	if code := runDecode([]string{"-"}, bytes.NewReader([]byte{0, 0, 0, 3, 0x95, 1, 2}), &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "frame 0") {
		t.Errorf("decode of garbage: exit %d, stderr %q", code, errOut.String())
	}

	// Foreign input and damaged streams: what is wrong, where, exit 1.
	n0 := len(fr) + wire.FrameHeaderSize // the first frame's length
	text := []byte("hello world, this is not msgpack\n")
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"text", text, "zerostat decode: not a zerostat payload or frame stream (first bytes 68 65 6c 6c 6f 20 77 6f 72 6c 64 2c 20 74 68 69 ...)\n"},
		{"short", []byte("hi"), "not a zerostat payload or frame stream (first bytes 68 69)"},
		{"small length, foreign body", []byte{0, 0, 0, 4, 'a', 'b', 'c', 'd'}, "not a zerostat payload or frame stream (first bytes 00 00 00 04 61 62 63 64)"},
		{"empty frame", []byte{0, 0, 0, 0}, "not a zerostat payload"},
		{"frames, then text", append(slices.Clone(frames.Bytes()), text...), fmt.Sprintf("frame 2 at offset %d: not a zerostat payload or frame stream (first bytes 68 65", frames.Len())},
		{"cut in a frame", frames.Bytes()[:n0+10], fmt.Sprintf("frame 1 at offset %d: truncated: %d bytes declared, 6 present", n0, frames.Len()-n0-4)},
		{"cut in a header", frames.Bytes()[:n0+2], fmt.Sprintf("frame 1 at offset %d: truncated: 2 bytes, less than a frame header", n0)},
	} {
		out.Reset()
		errOut.Reset()
		code := runDecode([]string{"-"}, bytes.NewReader(tc.in), &out, &errOut)
		if code != 1 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", tc.name, code, errOut.String(), tc.want)
		}
	}
	// Random bytes: never a panic, never "unexpected EOF"; unless they
	// happen to start like a payload, "not a zerostat payload".
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		in := make([]byte, 1+rng.IntN(300))
		for j := range in {
			in[j] = byte(rng.Uint32())
		}
		errOut.Reset()
		code := runDecode([]string{"-"}, bytes.NewReader(in), &out, &errOut)
		want := "not a zerostat payload"
		if in[0] == 0x95 || in[0] == 0x1f && (len(in) == 1 || in[1] == 0x8b) {
			want = "payload: wire:"
		}
		if code != 1 || !strings.Contains(errOut.String(), want) {
			t.Errorf("random input %d (% x): exit %d, stderr %q; want %q", i, in[:min(8, len(in))], code, errOut.String(), want)
		}
	}
}

func TestReceivePrintsSnapshots(t *testing.T) {
	m := stats.Int64("test/receive", "", "")
	v := &view.View{Measure: m, Aggregation: view.Count()}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	stats.Record(context.Background(), m.M(1), m.M(1))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int)
	go func() { done <- run(ctx, []string{"receive", "-listen", addr, "-format", "json"}, &out, &errOut) }()
	e, _ := exporter.New(&exporter.HTTPSink{URL: "http://" + addr + "/"}, exporter.Options{})
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := e.Export(context.Background())
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("receive exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), `"name":"test/receive"`) || !strings.Contains(out.String(), `"count":2`) {
		t.Errorf("receive printed %s", out.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestDemoServesMetrics(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- run(context.Background(), []string{"demo", "-duration", "4s", "-period", "500ms", "-listen", addr}, &out, &errOut)
	}()
	var metrics, snapshot, page string
	deadline := time.Now().Add(30 * time.Second) // the pages are fetched while the demo serves (4 s)
	for (metrics == "" || snapshot == "" || page == "") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		if metrics == "" {
			metrics = get(t, "http://"+addr+"/metrics", "")
		}
		if snapshot == "" {
			snapshot = get(t, "http://"+addr+"/snapshot", "application/json")
		}
		if page == "" || !strings.Contains(page, "<svg") {
			page = get(t, "http://"+addr+"/debug/stats", "")
		}
	}
	// The plug-ins: zhttp's views, runmetrics' and the callback counter.
	for _, want := range []string{"zerostat demo", "demo/latency", "demo/requests", "<svg", "msgpack over HTTP",
		"http.server.request.duration", "opencensus.io/http/server/latency", "go_sched_latencies_seconds", "demo/answered"} {
		if !strings.Contains(page, want) {
			t.Errorf("/debug/stats lacks %q", want)
		}
	}
	if code := <-done; code != 0 {
		t.Fatalf("demo exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"# TYPE demo_requests_total counter", "demo_latency_milliseconds_bucket{", `http_route="/users"`,
		"# TYPE go_goroutines gauge", "# TYPE demo_answered_total counter", `http_server_request_duration_seconds_bucket{http_request_method="GET"`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q:\n%.2000s", want, metrics)
		}
	}
	if !strings.Contains(snapshot, `"name":"demo/requests"`) {
		t.Errorf("/snapshot as JSON lacks demo/requests: %.500s", snapshot)
	}
	// /snapshot describes the process as the exported snapshots do.
	if !strings.Contains(snapshot, `"service.name":"zerostat-demo"`) || !strings.Contains(out.String(), " from zerostat-demo: ") {
		t.Errorf("/snapshot and the exported snapshots name different services: %.300s", snapshot)
	}
}

// get returns the body of a 200 answer, or "".
func get(t *testing.T, url, accept string) string {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	return string(b)
}
