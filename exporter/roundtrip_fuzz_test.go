package exporter

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"testing"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var fuzzKeys = []tag.Key{tag.MustNewKey("fa"), tag.MustNewKey("fb"), tag.MustNewKey("fc")}

// FuzzSnapshotRoundTrip builds a registry from the fuzzer's bytes (views of
// every aggregation, 0-3 keys, values, a cardinality limit, a payload cap),
// exports it in the wire version the fuzzer picks, decodes every payload
// and checks it against RetrieveData: the rows of every view, and every
// value of an exponential distribution's rows (count, sum, min, max,
// scale, zero count, both ranges; sizes 2, 4 and 160, the small ones
// downscaling as values arrive).
func FuzzSnapshotRoundTrip(f *testing.F) {
	f.Add([]byte("seed: a few views and values"), uint16(2048))
	f.Add([]byte{3, 1, 2, 250, 0, 0, 0x80, 0x7f, 0xff, 0xff, 9, 9, 9}, uint16(1024))
	// Exponential views (aggregation bytes 4 to 6), positive, negative and
	// tiny values, in version 2 (the cap's bit 15).
	f.Add([]byte{3, 4, 2, 1, 5, 1, 3, 6, 3, 1, 0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 1, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0x10, 0xc0,
		2, 0, 1, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 9, 0, 0, 0, 0, 0, 0, 0x30, 0x40}, uint16(0x8000|2048))
	f.Fuzz(func(t *testing.T, data []byte, capBytes uint16) {
		next := fuzzReader(&data)
		nViews := int(next()%4) + 1
		var vs []*view.View
		var ms []*stats.Float64Measure
		for i := range nViews {
			fuzzSeq++
			name := fmt.Sprintf("fuzz/%d/%d", fuzzSeq, i)
			m := stats.Float64(name, "d", "ms")
			agg := []*view.Aggregation{view.Count(), view.Sum(), view.Distribution(1, 10, 100), view.LastValue(),
				view.ExponentialDistribution(2, 20), view.ExponentialDistribution(4, 3), view.ExponentialDistribution(160, 20)}[next()%7]
			v := &view.View{Name: name, Measure: m, Aggregation: agg, TagKeys: fuzzKeys[:next()%4], CardinalityLimit: int(next()%8) + 1}
			vs = append(vs, v)
			ms = append(ms, m)
		}
		if err := view.Register(vs...); err != nil {
			t.Fatal(err)
		}
		defer view.Unregister(vs...)
		for len(data) >= 12 { // 1 view byte, 3 tag bytes, 8 value bytes
			i := int(next()) % nViews
			var muts []tag.Mutator
			for _, k := range fuzzKeys {
				muts = append(muts, tag.Upsert(k, string(rune('a'+next()%5))))
			}
			bits := binary.LittleEndian.Uint64(data[:8])
			data = data[8:]
			x := math.Float64frombits(bits)
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e100 {
				x = float64(bits % 1000)
			}
			if err := stats.RecordWithTags(context.Background(), muts, ms[i].M(x)); err != nil {
				t.Fatal(err)
			}
		}
		var got []*wire.Payload
		e, err := New(FuncSink(func(_ context.Context, p Payload) error {
			pl, err := wire.Decode(p.Data)
			if err != nil {
				return fmt.Errorf("payload %d.%d does not decode: %w", p.Sequence, p.Part, err)
			}
			got = append(got, pl)
			return nil
		}), Options{MaxPayloadBytes: int(capBytes&0x7fff)%8192 + MinMaxPayloadBytes, WireVersion: 1 + int(capBytes>>15),
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			want, err := view.RetrieveData(v.Name)
			if err != nil {
				t.Fatal(err)
			}
			var rows, overflows int
			for _, p := range got {
				for _, pv := range p.Views {
					if pv.Name == v.Name {
						rows += len(pv.Rows)
						if pv.Overflow != nil {
							overflows++
						}
					}
				}
			}
			if rows+overflows != len(want) || overflows > 1 {
				t.Fatalf("%s: %d rows and %d overflow rows exported; RetrieveData has %d rows", v.Name, rows, overflows, len(want))
			}
			if len(want) > 0 && isExp(want[0].Data) {
				sameMaps(t, v.Name, decodedExp(t, got, v.Name), retrievedExp(t, v))
			}
		}
	})
}

var fuzzSeq int

func isExp(d view.AggregationData) bool {
	_, ok := d.(*view.ExponentialDistributionData)
	return ok
}

// fuzzReader returns a function that consumes the fuzzer's bytes one at a
// time, then returns zeros.
func fuzzReader(data *[]byte) func() byte {
	return func() byte {
		if len(*data) == 0 {
			return 0
		}
		b := (*data)[0]
		*data = (*data)[1:]
		return b
	}
}

// FuzzDeltaEvictTotals records random tag combinations into views
// (counts, distributions, exponential distributions) with small
// cardinality limits, exporting in delta with EvictIdleAfter at
// random points, so that series are evicted, revived, freed and
// re-created, and the overflow row fills and empties, in the fuzzer's
// order. The counts received, rows and overflow rows together, equal the
// records made, and once everything has been idle only overflow rows are
// left.
func FuzzDeltaEvictTotals(f *testing.F) {
	f.Add([]byte("seed: a few views, values and exports"), uint8(1))
	f.Add([]byte{2, 1, 2, 0, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(2))
	// Exponential views (aggregation byte 2), evicted and revived.
	f.Add([]byte{2, 2, 1, 0, 2, 0, 1, 2, 5, 6, 7, 4, 9, 1, 2, 3, 8, 5, 6, 7, 0, 0, 0, 4, 1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, evictAfter uint8) {
		next := fuzzReader(&data)
		nViews := int(next()%3) + 1
		var vs []*view.View
		var ms []*stats.Int64Measure
		for i := range nViews {
			fuzzSeq++
			name := fmt.Sprintf("fuzzevict/%d/%d", fuzzSeq, i)
			m := stats.Int64(name, "", "")
			agg := []*view.Aggregation{view.Count(), view.Distribution(1, 10), view.ExponentialDistribution(4, 20)}[next()%3]
			vs = append(vs, &view.View{Name: name, Measure: m, Aggregation: agg, TagKeys: fuzzKeys[:next()%3+1], CardinalityLimit: int(next()%4) + 1})
			ms = append(ms, m)
		}
		if err := view.Register(vs...); err != nil {
			t.Fatal(err)
		}
		defer view.Unregister(vs...)
		received := map[string]uint64{}
		e, err := New(FuncSink(func(_ context.Context, p Payload) error {
			pl, err := wire.Decode(p.Data)
			if err != nil {
				return fmt.Errorf("payload does not decode: %w", err)
			}
			for _, pv := range pl.Views {
				for _, r := range pv.Rows {
					received[pv.Name] += r.Count
				}
				if pv.Overflow != nil {
					received[pv.Name] += pv.Overflow.Count
				}
			}
			return nil
		}), Options{Temporality: Delta, EvictIdleAfter: int(evictAfter%3) + 1, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		recorded := map[string]uint64{}
		export := func() {
			if err := e.Export(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		for len(data) >= 3 {
			op := next()
			if op%4 == 0 {
				export()
				continue
			}
			i := int(op) % nViews
			var muts []tag.Mutator
			for _, k := range fuzzKeys {
				muts = append(muts, tag.Upsert(k, string(rune('a'+next()%4))))
			}
			if err := stats.RecordWithTags(context.Background(), muts, ms[i].M(int64(op))); err != nil {
				t.Fatal(err)
			}
			recorded[vs[i].Name]++
		}
		for range int(evictAfter%3) + 3 { // everything goes idle, is sealed, read and freed
			export()
		}
		for _, v := range vs {
			if received[v.Name] != recorded[v.Name] {
				t.Fatalf("%s: received %d records; %d were recorded", v.Name, received[v.Name], recorded[v.Name])
			}
			rows, err := view.RetrieveData(v.Name)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) > 1 || len(rows) == 1 && !rows[0].IsOverflow() {
				t.Fatalf("%s: %d rows left after everything was idle: %v", v.Name, len(rows), rows)
			}
		}
	})
}
