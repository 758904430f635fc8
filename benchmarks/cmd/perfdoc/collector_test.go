package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCollectorSection: the Collector section renders from the collector
// module's benchmark output, ratios and targets included, and splices
// into a document in place of an older one.
func TestCollectorSection(t *testing.T) {
	out := `goos: linux
goarch: amd64
cpu: test
BenchmarkCollectorIngest/msgpack2/plain-2 50 5000000 ns/op 7000000 collector-ns/op 100000 wire-bytes/op
BenchmarkCollectorIngest/msgpack2/gzip-2 50 6000000 ns/op 8000000 collector-ns/op 25000 wire-bytes/op
BenchmarkCollectorIngest/msgpack/plain-2 50 7000000 ns/op 10000000 collector-ns/op 140000 wire-bytes/op
BenchmarkCollectorIngest/msgpack/gzip-2 50 8000000 ns/op 11000000 collector-ns/op 70000 wire-bytes/op
BenchmarkCollectorIngest/otlp/plain-2 50 9000000 ns/op 12000000 collector-ns/op 1000000 wire-bytes/op
BenchmarkCollectorIngest/otlp/gzip-2 50 9500000 ns/op 16000000 collector-ns/op 40000 wire-bytes/op
BenchmarkDecode/msgpack2-2 50 6000000 ns/op 4000000 B/op 50000 allocs/op
BenchmarkDecode/otlp-2 50 7000000 ns/op 3000000 B/op 100000 allocs/op
`
	path := filepath.Join(t.TempDir(), "collector.txt")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := read([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	var sec bytes.Buffer
	writeCollector(&sec, r)
	s := sec.String()
	for _, want := range []string{
		"| bytes on the wire, plain | 97.7 KiB | 136.7 KiB | 976.6 KiB | 0.10 | ≤ 0.5 |",
		"| bytes on the wire, gzip | 24.4 KiB | 68.4 KiB | 39.1 KiB | 0.62 | ≤ 0.5 (missed) |",
		"| Collector CPU, gzip body | 8 ms | 11 ms | 16 ms | 0.50 | ≤ 1 |",
		"| msgpack version 2, decoded and converted | 6 ms | 3.81 MiB | 50000 |",
		collectorBegin, collectorEnd,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("section lacks %q:\n%s", want, s)
		}
	}
	doc := []byte("# Performance\n\n" + scaleBegin + "\nscale\n" + scaleEnd + "\n")
	once := spliceSection(doc, sec.Bytes(), collectorBegin, collectorEnd, scaleBegin)
	twice := spliceSection(once, sec.Bytes(), collectorBegin, collectorEnd, scaleBegin)
	if !bytes.Equal(once, twice) || bytes.Index(once, []byte(collectorBegin)) > bytes.Index(once, []byte(scaleBegin)) {
		t.Errorf("splice: once %q, twice %q", once, twice)
	}
	var none bytes.Buffer
	writeCollector(&none, &results{vals: map[string]map[string][]float64{}})
	if !strings.Contains(none.String(), "make bench-collector") {
		t.Errorf("without results: %q", none.String())
	}
}

// TestKeepSummary: a full run keeps the hand-written summary of the file
// it replaces, in its place before the generated tables.
func TestKeepSummary(t *testing.T) {
	old := []byte("# Performance\n\nold intro\n\n<!-- summary:begin (hand) -->\n## Summary\n\nfigures\n<!-- summary:end -->\n\n## Record path, ns/op\n\nold\n")
	doc := []byte("# Performance\n\nnew intro\n\n## Record path, ns/op\n\nnew\n")
	got := string(keepSummary(old, doc))
	want := "# Performance\n\nnew intro\n\n<!-- summary:begin (hand) -->\n## Summary\n\nfigures\n<!-- summary:end -->\n\n## Record path, ns/op\n\nnew\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := string(keepSummary([]byte("no summary"), doc)); got != string(doc) {
		t.Errorf("without a summary: %q", got)
	}
}
