package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
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
	for _, want := range []string{"== snapshot 1.0", "demo/latency", "demo/requests", "http.route=/users", "p99=", "summary:"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if view.Find("demo/requests") != nil {
		t.Error("the demo left its views registered")
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"nope"}, {"demo", "-duration", "-1s"}, {"demo", "-bogus"}} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 2 {
			t.Errorf("%q: exit %d; want 2", args, code)
		}
		if errOut.Len() == 0 {
			t.Errorf("%q: no message on stderr", args)
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
	deadline := time.Now().Add(5 * time.Second)
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
		done <- run(context.Background(), []string{"demo", "-duration", "2s", "-period", "500ms", "-listen", addr}, &out, &errOut)
	}()
	var metrics, snapshot, page string
	deadline := time.Now().Add(5 * time.Second)
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
	for _, want := range []string{"zerostat demo", "demo/latency", "demo/requests", "<svg", "msgpack over HTTP"} {
		if !strings.Contains(page, want) {
			t.Errorf("/debug/stats lacks %q", want)
		}
	}
	if code := <-done; code != 0 {
		t.Fatalf("demo exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"# TYPE demo_requests_total counter", "demo_latency_milliseconds_bucket{", `http_route="/users"`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q:\n%.2000s", want, metrics)
		}
	}
	if !strings.Contains(snapshot, `"name":"demo/requests"`) {
		t.Errorf("/snapshot as JSON lacks demo/requests: %.500s", snapshot)
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
