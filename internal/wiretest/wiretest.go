// Package wiretest builds payloads for the tests of the wire decoder and
// the receiver: real ones, exported by zerostat, and hostile ones, written
// byte by byte. Not for production use; safe for concurrent use except
// where a function registers views (DenseCounts).
package wiretest

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/msgpack"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// Export exports the registered views once, cumulatively, and returns the
// payloads (copies).
func Export(t testing.TB) [][]byte { return ExportVersion(t, wire.Version) }

// ExportVersion is Export in the given wire format version.
func ExportVersion(t testing.TB, version int) [][]byte {
	t.Helper()
	var out [][]byte
	e, err := exporter.New(exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
		out = append(out, bytes.Clone(p.Data))
		return nil
	}), exporter.Options{WireVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out
}

// DenseCounts exports a count view of two keys and n rows (n at most
// 100 * 127 keeps every index a 1-byte fixint) in one payload: about 4
// bytes a row on the wire, 128 decoded. The view is unregistered after.
func DenseCounts(t testing.TB, n int) []byte { return DenseCountsVersion(t, n, wire.Version) }

// DenseCountsVersion is DenseCounts in the given wire format version
// (version 2: about 3 bytes a row).
func DenseCountsVersion(t testing.TB, n, version int) []byte {
	t.Helper()
	k1, k2 := tag.MustNewKey("k1"), tag.MustNewKey("k2")
	m := stats.Int64("wiretest/dense", "", "")
	v := &view.View{Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{k1, k2}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	for i := range n {
		ctx, _ := tag.New(context.Background(), tag.Upsert(k1, strconv.Itoa(i%100)), tag.Upsert(k2, strconv.Itoa(i/100)))
		stats.Record(ctx, m.M(1))
	}
	out := ExportVersion(t, version)
	if len(out) != 1 {
		t.Fatalf("%d payloads; want 1", len(out))
	}
	return out[0]
}

// Rows is a payload of one count view named name with no keys and n rows
// of count 1: 2 bytes each on the wire, a 96-byte Row each decoded, the
// version 1's densest (48x).
func Rows(n int, name string) []byte {
	return OneView(wire.Count, nil, func(b []byte) []byte {
		b = msgpack.AppendArrayHeader(b, uint32(n))
		for range n {
			b = append(b, 0x91, 0x01) // [count 1]
		}
		return b
	}, "", name)
}

// Dist is a payload of one distribution view "d" (bound 10) with one row
// of the given count and buckets.
func Dist(count, b0, b1 uint64) []byte {
	return DistAgg(wire.Distribution, count, b0, b1)
}

// DistAgg is Dist with the view's wire aggregation agg
// (wire.DistributionUpperInclusive, or another to test a refusal).
func DistAgg(agg wire.Aggregation, count, b0, b1 uint64) []byte {
	return OneView(agg, []float64{10}, func(b []byte) []byte {
		b = msgpack.AppendArrayHeader(b, 1)
		b = msgpack.AppendArrayHeader(b, 6) // count, sum, min, max, ssd, buckets
		b = msgpack.AppendUint(b, count)
		for range 4 {
			b = msgpack.AppendFloat(b, 1)
		}
		b = msgpack.AppendArrayHeader(b, 2)
		b = msgpack.AppendUint(b, b0)
		return msgpack.AppendUint(b, b1)
	}, "", "d")
}

// Columns is Rows in version 2: one count view with no keys and n rows of
// count 1, as columns: 1 byte each on the wire, a 96-byte Row each
// decoded, the format's densest (96x).
func Columns(n int, name string) []byte {
	return OneViewVersion(wire.Version2, wire.Count, nil, func(b []byte) []byte {
		b = msgpack.AppendArrayHeader(b, wire.ColumnsLen)
		b = msgpack.AppendUint(b, uint64(n))
		b = msgpack.AppendArrayHeader(b, 0) // no tag value columns
		b = msgpack.AppendArrayHeader(b, 1) // one data column
		b = msgpack.AppendArrayHeader(b, uint32(n))
		for range n {
			b = append(b, 0x01)
		}
		return msgpack.AppendArrayHeader(b, 0) // no row starts
	}, "", name)
}

// OneView assembles a payload of one view of no keys, named strs[1]
// (description and unit strs[0]), whose rows array rows appends, and the
// string table strs.
func OneView(agg wire.Aggregation, bounds []float64, rows func([]byte) []byte, strs ...string) []byte {
	return OneViewVersion(wire.Version, agg, bounds, rows, strs...)
}

// OneViewVersion is OneView in the given wire format version (rows then
// appends that version's rows).
func OneViewVersion(version int, agg wire.Aggregation, bounds []float64, rows func([]byte) []byte, strs ...string) []byte {
	b := msgpack.AppendArrayHeader(nil, wire.EnvelopeLen)
	b = msgpack.AppendUint(b, uint64(version))
	b = msgpack.AppendArrayHeader(b, wire.HeaderLen)
	b = msgpack.AppendTime(b, time.Unix(1, 0))
	b = msgpack.AppendTime(b, time.Unix(2, 0))
	b = append(b, 0, 1, 0, msgpack.True) // cumulative, sequence 1, part 0, last
	b = msgpack.AppendArrayHeader(b, 0)  // resource
	b = msgpack.AppendArrayHeader(b, 1)  // views
	b = msgpack.AppendArrayHeader(b, wire.ViewLen)
	b = append(b, 1, 0, 0, byte(agg))   // name, description, unit, aggregation
	b = msgpack.AppendArrayHeader(b, 0) // keys
	b = msgpack.AppendArrayHeader(b, uint32(len(bounds)))
	for _, x := range bounds {
		b = msgpack.AppendFloat(b, x)
	}
	b = msgpack.AppendTime(b, time.Unix(1, 0))
	b = msgpack.AppendNil(rows(b)) // no overflow row
	b = msgpack.AppendArrayHeader(b, uint32(len(strs)))
	for _, s := range strs {
		b = msgpack.AppendString(b, s)
	}
	return b
}

// ServeConcurrently POSTs body (a payload, identity encoding) to h from
// n goroutines at once and returns how many requests got each status.
func ServeConcurrently(h http.Handler, body []byte, n int) map[int]int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range n {
		wg.Go(func() {
			req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
			req.Header.Set("Content-Type", wire.ContentType)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			mu.Lock()
			codes[rec.Code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return codes
}
