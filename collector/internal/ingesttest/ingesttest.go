// Package ingesttest makes the 10,000-series snapshot that the collector
// module's ingest benchmarks send, as msgpack and as OTLP. For tests only.
package ingesttest

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// Series is the size of the snapshot.
const Series = 10000

// Register registers four views (Count, Sum, LastValue, and a
// 10-bound Distribution, each over route and code tags) and records into
// n/4 series of each, with varied values.
func Register(b testing.TB, n int) {
	kRoute, kCode := tag.MustNewKey("route"), tag.MustNewKey("code")
	lat := stats.Float64("ingest/latency", "Latency", stats.UnitMilliseconds)
	size := stats.Int64("ingest/size", "Size", stats.UnitBytes)
	keys := []tag.Key{kRoute, kCode}
	views := []*view.View{
		{Name: "ingest/requests", Description: "Requests", Measure: lat, TagKeys: keys, Aggregation: view.Count()},
		{Name: "ingest/latency", Description: "Latency", Measure: lat, TagKeys: keys,
			Aggregation: view.Distribution(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)},
		{Name: "ingest/bytes", Description: "Bytes", Measure: size, TagKeys: keys, Aggregation: view.Sum()},
		{Name: "ingest/last_size", Description: "Last size", Measure: size, TagKeys: keys, Aggregation: view.LastValue()},
	}
	if err := view.Register(views...); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { view.Unregister(views...) })
	codes := []string{"200", "201", "204", "301", "400", "404", "429", "500", "503", "504"}
	for i := range n / len(views) {
		ctx, err := tag.New(context.Background(),
			tag.Upsert(kRoute, "/api/v1/resource"+strconv.Itoa(i/len(codes))), tag.Upsert(kCode, codes[i%len(codes)]))
		if err != nil {
			b.Fatal(err)
		}
		for r := range 3 {
			stats.Record(ctx, lat.M(float64((i*37+r*11)%1500)+0.5), size.M(int64(100+i*7+r)))
		}
	}
}

// Bodies returns the snapshot of the registered views as one msgpack
// payload in wire format version 1, one in version 2 (rows as columns)
// and one OTLP request, each plain and gzipped (level gzip.BestSpeed,
// the exporters' default), keyed "msgpack/plain", "msgpack/gzip",
// "msgpack2/plain", "msgpack2/gzip", "otlp/plain" and "otlp/gzip".
func Bodies(b testing.TB) map[string][]byte {
	export := func(version int) []byte {
		var msg []byte
		e, err := exporter.New(exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
			if msg != nil {
				return fmt.Errorf("the snapshot was split")
			}
			msg = bytes.Clone(p.Data)
			return nil
		}), exporter.Options{MaxPayloadBytes: 64 << 20, Resource: exporter.Resource{ServiceName: "ingest"}, WireVersion: version})
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Export(context.Background()); err != nil {
			b.Fatal(err)
		}
		return msg
	}
	msg, msg2 := export(wire.Version), export(wire.Version2)
	enc, err := otlp.NewEncoder(otlp.Cumulative, exporter.Resource{ServiceName: "ingest"})
	if err != nil {
		b.Fatal(err)
	}
	pb := bytes.Clone(enc.Encode(time.Now()))
	if enc.Points() != Series {
		b.Fatalf("OTLP request of %d points; want %d", enc.Points(), Series)
	}
	gz := func(p []byte) []byte {
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		w.Write(p)
		w.Close()
		return buf.Bytes()
	}
	return map[string][]byte{"msgpack/plain": msg, "msgpack/gzip": gz(msg), "msgpack2/plain": msg2, "msgpack2/gzip": gz(msg2),
		"otlp/plain": pb, "otlp/gzip": gz(pb)}
}
