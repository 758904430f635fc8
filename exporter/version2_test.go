package exporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestVersion2SameContent: a version-2 payload (rows as columns) decodes
// to the same views, rows, row starts, overflow rows and integer hints as
// version 1's of the same snapshot, cumulative and delta, whole and split
// (but for the delta overflow row's start, which only version 2 carries);
// and gzip makes it much smaller.
func TestVersion2SameContent(t *testing.T) {
	restart := restartedRow(t) // a cumulative row with its own start
	f := newFixture(t, 200)
	m := stats.Int64("exp/v2/overflow", "", "By")
	ov := &view.View{Name: "exp/v2/overflow", Measure: m, Aggregation: view.Distribution(10, 100), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 3}
	if err := view.Register(ov); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(ov) })
	for i := range 8 {
		ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, fmt.Sprint("/ov", i)))
		stats.Record(ctx, m.M(int64(3+40*i)))
	}
	names := append([]string{restart.name, ov.Name}, f.names...)
	for _, temporality := range []wire.Temporality{Cumulative, Delta} {
		for _, maxBytes := range []int{DefaultMaxPayloadBytes, 3000} {
			t.Run(fmt.Sprintf("%v/max=%d", temporality, maxBytes), func(t *testing.T) {
				var got [3]string
				var sizes [3][2]int
				for _, version := range wire.Versions {
					var c collect
					e, err := New(c.sink(t), Options{Temporality: temporality, MaxPayloadBytes: maxBytes, WireVersion: version})
					if err != nil {
						t.Fatal(err)
					}
					if err := e.Export(context.Background()); err != nil {
						t.Fatal(err)
					}
					got[version] = contentOf(t, &c, names)
					overflowStart := false
					for _, p := range c.payloads {
						for _, v := range p.Views {
							overflowStart = overflowStart || !v.OverflowStart.IsZero()
						}
					}
					if want := version == wire.Version2 && temporality == Delta; overflowStart != want {
						t.Errorf("version %d: an overflow row with a start: %v; want %v", version, overflowStart, want)
					}
					for i, p := range c.payloads {
						if p.Version != version {
							t.Errorf("version %d: payload %d says version %d", version, i, p.Version)
						}
						sizes[version][0] += len(c.raw[i])
						var buf bytes.Buffer
						w, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
						w.Write(c.raw[i])
						w.Close()
						sizes[version][1] += buf.Len()
					}
				}
				if got[1] != got[2] {
					t.Errorf("version 2 decodes to other content:\nversion 1: %s\nversion 2: %s", got[1], got[2])
				}
				t.Logf("bytes, plain and gzip: version 1 %v, version 2 %v", sizes[1], sizes[2])
				if maxBytes == DefaultMaxPayloadBytes && 4*sizes[2][1] > 3*sizes[1][1] {
					t.Errorf("gzip: version 2 %d bytes, version 1 %d; want under 0.75 of it", sizes[2][1], sizes[1][1])
				}
			})
		}
	}
}

// eachVersion runs f as a subtest per wire format version.
func eachVersion(t *testing.T, f func(t *testing.T, version int)) {
	for _, version := range wire.Versions {
		t.Run(fmt.Sprint("version=", version), func(t *testing.T) { f(t, version) })
	}
}

// contentOf renders what the collected payloads say of the named views:
// every row by its tags (parts merged), with its start, the overflow row,
// the integer hint.
func contentOf(t *testing.T, c *collect, names []string) string {
	t.Helper()
	type rowOut struct {
		Row   wire.Row
		Start string
	}
	out := map[string]map[string]rowOut{}
	ints := map[string]bool{}
	for _, p := range c.payloads {
		for _, v := range p.Views {
			if out[v.Name] == nil {
				out[v.Name] = map[string]rowOut{}
			}
			ints[v.Name] = ints[v.Name] || v.Int
			for i, r := range v.Rows {
				out[v.Name][fmt.Sprint(r.Values)] = rowOut{r, v.RowStart(i).String()}
			}
			if v.Overflow != nil {
				// Its own start only in version 2 (checked apart).
				out[v.Name]["overflow"] = rowOut{*v.Overflow, ""}
			}
		}
	}
	keep := map[string]any{}
	for _, n := range names {
		if out[n] == nil {
			t.Fatalf("view %s not exported", n)
		}
		keep[n] = map[string]any{"rows": out[n], "int": ints[n]}
	}
	b, err := json.Marshal(keep)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
