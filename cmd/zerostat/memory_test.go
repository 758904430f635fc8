package main

import (
	"io"
	"net/http"
	"os"
	"strconv"
	"testing"

	"github.com/zerostat/zerostat/exporter/receiver"
	"github.com/zerostat/zerostat/internal/peakheap"
	"github.com/zerostat/zerostat/internal/wiretest"
)

// TestReceivePeakHeap: zerostat receive's heap, read from the Go
// runtime's own statistics in a process of its own (peakheap), stays
// within its soft memory limit (receiveMemoryLimit: the receiver's
// in-flight budget, 128 MiB, and 48 MiB for printing and the runtime)
// while it serves and prints the densest valid payloads at the default
// caps (690,000 rows, 63.2 MiB decoded each), one, two and four at once,
// in both formats, garbage included. Before, one such payload took the
// heap to 300 MiB as a table and 400 MiB as JSON; two, 540 MiB.
func TestReceivePeakHeap(t *testing.T) {
	for _, format := range []string{"table", "json"} {
		for _, n := range []int{1, 2, 4} {
			r := peakheap.Measure(t, "TestReceivePeakHeapChild", "PEAK_REQUESTS="+strconv.Itoa(n), "PEAK_FORMAT="+format)
			t.Logf("%s, %d concurrent requests: heap grew %s (allocated %s); limit %s", format, n,
				peakheap.MiB(r.HeapGrowth), peakheap.MiB(r.Alloc), peakheap.MiB(receiveMemoryLimit))
			if r.HeapGrowth > receiveMemoryLimit {
				t.Errorf("%s, %d requests: heap grew %s; limit %s", format, n, peakheap.MiB(r.HeapGrowth), peakheap.MiB(receiveMemoryLimit))
			}
		}
	}
}

// TestReceivePeakHeapChild serves and prints PEAK_REQUESTS concurrent
// densest payloads with receive's handler (run by TestReceivePeakHeap in
// a child process).
func TestReceivePeakHeapChild(t *testing.T) {
	var body []byte
	var h http.Handler
	peakheap.Child(t, func() {
		body = wiretest.Columns(690000, "v")
		pr, err := newPrinter(io.Discard, os.Getenv("PEAK_FORMAT"))
		if err != nil {
			t.Fatal(err)
		}
		h = receiveHandler(pr, os.Stderr, receiver.DefaultMaxBodyBytes, receiver.DefaultMaxDecompressedBytes)
		limitMemory() // as runReceive does
	}, func() {
		n, _ := strconv.Atoi(os.Getenv("PEAK_REQUESTS"))
		for code, k := range wiretest.ServeConcurrently(h, body, n) {
			if code != http.StatusNoContent && code != http.StatusServiceUnavailable {
				t.Errorf("%d requests answered %d", k, code)
			}
		}
	})
}
