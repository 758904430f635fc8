package receiver_test

import (
	"net/http"
	"os"
	"strconv"
	"testing"

	"github.com/zerostat/zerostat/exporter/receiver"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/peakheap"
	"github.com/zerostat/zerostat/internal/wiretest"
)

// densestRows is the row count of the densest valid payload at the
// default caps: version 2's 1-byte count rows, 96 bytes each decoded,
// 63.2 MiB in all, just within the 64 MiB decoded cap (690 KB sent).
const densestRows = 690000

// TestPeakHeapAtCaps: the heap's peak while the Handler serves the
// densest valid payloads, read from the Go runtime's own statistics in a
// process of its own (peakheap), stays within the documented budget: one
// request within one request's peak (the decompressed body and the
// decoded payload, 72 MiB by default), two concurrent ones within
// MaxInflightBytes (128 MiB), garbage the GC has not collected included.
// The slack, 8 MiB, is the runtime's own (HTTP, goroutines, gzip state).
func TestPeakHeapAtCaps(t *testing.T) {
	const slack = 8 << 20
	for _, tc := range []struct {
		n      int
		budget uint64
	}{
		{1, receiver.DefaultMaxDecompressedBytes + receiver.DefaultMaxDecodedBytes},
		{2, receiver.DefaultMaxInflightBytes},
	} {
		r := peakheap.Measure(t, "TestPeakHeapChild", "PEAK_REQUESTS="+strconv.Itoa(tc.n))
		t.Logf("%d concurrent requests of %d rows: heap grew %s (allocated %s); budget %s",
			tc.n, densestRows, peakheap.MiB(r.HeapGrowth), peakheap.MiB(r.Alloc), peakheap.MiB(tc.budget))
		if r.HeapGrowth > tc.budget+slack {
			t.Errorf("%d requests: heap grew %s; budget %s + %s", tc.n, peakheap.MiB(r.HeapGrowth), peakheap.MiB(tc.budget), peakheap.MiB(slack))
		}
	}
}

// TestPeakHeapChild serves PEAK_REQUESTS concurrent densest payloads (run
// by TestPeakHeapAtCaps in a child process).
func TestPeakHeapChild(t *testing.T) {
	var body []byte
	peakheap.Child(t, func() { body = wiretest.Columns(densestRows, "v") }, func() {
		n, _ := strconv.Atoi(os.Getenv("PEAK_REQUESTS"))
		codes := wiretest.ServeConcurrently(&receiver.Handler{OnPayload: func(*wire.Payload) {}}, body, n)
		if codes[http.StatusNoContent] == 0 || codes[http.StatusNoContent]+codes[http.StatusServiceUnavailable] != n {
			t.Errorf("answers %v; want 204s (and 503s for what did not fit)", codes)
		}
	})
}
