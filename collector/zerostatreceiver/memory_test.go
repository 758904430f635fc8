package zerostatreceiver

import (
	"net/http"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/peakheap"
	"github.com/zerostat/zerostat/internal/wiretest"
)

// shape builds a payload of one view of n rows, k tag values each, nb
// bounds (a distribution when nb > 0, else agg), with an overflow row.
func shape(agg wire.Aggregation, k, nb, n int) *wire.Payload {
	v := wire.View{Name: "v", Aggregation: agg, Start: time.Unix(1, 0), Overflow: &wire.Row{Count: 1}}
	for i := range k {
		v.Keys = append(v.Keys, "k"+strconv.Itoa(i))
	}
	for i := range nb {
		v.Bounds = append(v.Bounds, float64(i+1))
	}
	if nb > 0 {
		v.Aggregation = wire.Distribution
		v.Overflow.Buckets = make([]uint64, nb+1)
		v.Overflow.Buckets[0] = 1
	}
	vals := make([]string, k)
	for i := range vals {
		vals[i] = "x"
	}
	for range n {
		r := wire.Row{Values: vals, Count: 1, Sum: 1.5, Value: 1.5}
		if nb > 0 {
			r.Buckets = make([]uint64, nb+1)
			r.Buckets[0] = 1
		}
		v.Rows = append(v.Rows, r)
	}
	return &wire.Payload{Version: wire.Version2, Start: time.Unix(1, 0), End: time.Unix(2, 0), Views: []wire.View{v},
		Resource: []wire.Attribute{{Key: "service.name", Value: "s"}, {Key: "process.pid", Value: "1"}}}
}

// TestConvertBytesBound: what Convert allocates, read from
// runtime.MemStats, is within convertBytes, the bound the receiver
// reserves, for every kind of point, 0 to 20 tag values, 0 to 40 bounds,
// and 1 to 50,000 rows; and the bound is not loose by more than 2x for
// large payloads (the budget would refuse what fits).
func TestConvertBytesBound(t *testing.T) {
	for _, agg := range []wire.Aggregation{wire.Count, wire.Sum, wire.LastValue, wire.UpDownSum, wire.Distribution} {
		for _, k := range []int{0, 1, 2, 5, 8, 20} {
			for _, nb := range []int{0, 1, 15, 40} {
				if (agg == wire.Distribution) != (nb > 0) {
					continue
				}
				for _, n := range []int{1, 100, 50000} {
					p := shape(agg, k, nb, n)
					var before, after runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&before)
					Convert(p, pmetric.NewMetrics())
					runtime.ReadMemStats(&after)
					alloc, bound := int64(after.TotalAlloc-before.TotalAlloc), convertBytes(p)
					if alloc > bound {
						t.Errorf("%v, %d tags, %d bounds, %d rows: Convert allocated %d bytes; bound %d", agg, k, nb, n, alloc, bound)
					}
					if n == 50000 && bound > 2*alloc {
						t.Errorf("%v, %d tags, %d bounds, %d rows: bound %d over twice the %d allocated", agg, k, nb, n, bound, alloc)
					}
				}
			}
		}
	}
}

// TestPeakHeapAtCaps: the receiver's heap, read from the Go runtime's
// own statistics in a process of its own (peakheap), stays within
// max_inflight_bytes while it serves the densest valid payloads at the
// default caps, one and two at once (63.2 MiB decoded, 74 MiB of pdata
// each: the second is answered 503), into a pipeline that keeps nothing;
// garbage the GC has not collected included. The slack, 8 MiB, is the
// runtime's own (HTTP, goroutines).
func TestPeakHeapAtCaps(t *testing.T) {
	const slack = 8 << 20
	for _, n := range []int{1, 2} {
		r := peakheap.Measure(t, "TestPeakHeapChild", "PEAK_REQUESTS="+strconv.Itoa(n))
		t.Logf("%d concurrent requests: heap grew %s (allocated %s); max_inflight_bytes %s",
			n, peakheap.MiB(r.HeapGrowth), peakheap.MiB(r.Alloc), peakheap.MiB(DefaultMaxInflightBytes))
		if r.HeapGrowth > DefaultMaxInflightBytes+slack {
			t.Errorf("%d requests: heap grew %s; budget %s + %s", n, peakheap.MiB(r.HeapGrowth), peakheap.MiB(DefaultMaxInflightBytes), peakheap.MiB(slack))
		}
	}
}

// TestPeakHeapChild serves PEAK_REQUESTS concurrent densest payloads
// through the receiver's handler and conversion (run by
// TestPeakHeapAtCaps in a child process).
func TestPeakHeapChild(t *testing.T) {
	var body []byte
	var h http.Handler
	peakheap.Child(t, func() {
		body = wiretest.Columns(690000, "v")
		cfg := createDefaultConfig().(*Config)
		r, err := newReceiver(cfg, receivertest.NewNopSettings(Type), consumertest.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		h = r.handler
	}, func() {
		n, _ := strconv.Atoi(os.Getenv("PEAK_REQUESTS"))
		codes := wiretest.ServeConcurrently(h, body, n)
		if codes[http.StatusNoContent] == 0 || codes[http.StatusNoContent]+codes[http.StatusServiceUnavailable] != n {
			t.Errorf("answers %v; want 204s (and 503s for what did not fit)", codes)
		}
	})
}

// expShape is shape for an exponential view: n rows of nb buckets per
// sign, k tag values each, with an overflow row.
func expShape(k, nb, n int) *wire.Payload {
	p := shape(wire.Count, k, 0, n)
	v := &p.Views[0]
	v.Aggregation = wire.ExponentialDistribution
	hist := func() wire.ExpHistogram {
		e := wire.ExpHistogram{Scale: 3, ZeroCount: 1,
			Positive: wire.ExpBuckets{Offset: -5, Counts: make([]uint64, nb)},
			Negative: wire.ExpBuckets{Offset: 7, Counts: make([]uint64, nb)}}
		for i := range nb {
			e.Positive.Counts[i], e.Negative.Counts[i] = 1, 2
		}
		return e
	}
	for i := range v.Rows {
		v.Rows[i].Min, v.Rows[i].Max = -1, 1
		v.Exp = append(v.Exp, hist())
	}
	o := hist()
	v.OverflowExp = &o
	return p
}

// TestConvertBytesBoundExponential is TestConvertBytesBound for
// exponential points: 0 to 160 buckets per sign.
func TestConvertBytesBoundExponential(t *testing.T) {
	for _, k := range []int{0, 1, 5, 20} {
		for _, nb := range []int{0, 1, 15, 160} {
			for _, n := range []int{1, 100, 20000} {
				p := expShape(k, nb, n)
				// Warm: the first conversion of a shape makes pdata's lazily
				// built state (seen once, about 700 bytes), not the payload's.
				Convert(expShape(k, nb, 1), pmetric.NewMetrics())
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				Convert(p, pmetric.NewMetrics())
				runtime.ReadMemStats(&after)
				alloc, bound := int64(after.TotalAlloc-before.TotalAlloc), convertBytes(p)
				if alloc > bound {
					t.Errorf("%d tags, %d buckets per sign, %d rows: Convert allocated %d bytes; bound %d", k, nb, n, alloc, bound)
				}
				if n == 20000 && bound > 2*alloc {
					t.Errorf("%d tags, %d buckets per sign, %d rows: bound %d over twice the %d allocated", k, nb, n, bound, alloc)
				}
			}
		}
	}
}
