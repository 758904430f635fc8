package exporter

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/msgpack"
	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var summarySeq atomic.Int64

// summaryFixture registers a callback summary of quantiles 0, 0.5 and 1
// with n rows (route=/r<i>: count i, sum i/2, values i, i+0.25, i+1) and
// one without tags (count 0, sum 0, values 0); it returns its name.
func summaryFixture(t *testing.T, n int) string {
	t.Helper()
	name := fmt.Sprintf("msgsum%d/pause", summarySeq.Add(1))
	k := tag.MustNewKey("route")
	s, err := metric.NewSummary(name, "Pauses", "s", []float64{0, 0.5, 1}, []tag.Key{k}, func(o *metric.SummaryObserver) {
		for i := range n {
			x := float64(i)
			o.Observe(uint64(i), x/2, []float64{x, x + 0.25, x + 1}, fmt.Sprint("/r", i))
		}
		o.Observe(0, 0, []float64{0, 0, 0})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Unregister)
	return name
}

// retrievedSummary renders a summary view's rows, by tags, as the
// payload's rows are rendered (decodedSummary).
func retrievedSummary(t *testing.T, name string) map[string]string {
	t.Helper()
	metric.Collect()
	rows, err := view.RetrieveData(name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		d := r.Data.(*view.SummaryData)
		route := ""
		if len(r.Tags) > 0 {
			route = r.Tags[0].Value
		}
		out[route] = fmt.Sprint(d.Count, " ", d.Sum, " ", d.Quantiles, " ", d.Values)
	}
	return out
}

// decodedSummary renders the rows of the summary view name in payloads
// (parts merged) by their route.
func decodedSummary(t *testing.T, payloads []*wire.Payload, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range payloads {
		for i := range p.Views {
			v := &p.Views[i]
			if v.Name != name {
				continue
			}
			if v.Aggregation != wire.Summary || v.Overflow != nil || v.Unit != "s" || v.Description != "Pauses" {
				t.Fatalf("%s: %+v", name, v)
			}
			for j := range v.Rows {
				r := &v.Rows[j]
				if _, dup := out[r.Values[0]]; dup {
					t.Errorf("%s: row %q sent twice in a cycle", name, r.Values[0])
				}
				out[r.Values[0]] = fmt.Sprint(r.Count, " ", r.Sum, " ", v.Bounds, " ", v.RowQuantiles(j))
			}
			if len(v.RowStarts) != 0 {
				t.Errorf("%s: row starts %v; a summary's rows start with the view", name, v.RowStarts)
			}
		}
	}
	return out
}

// crossSummary renders the summary rows the Python or Ruby reader
// printed, by route.
func crossSummary(t *testing.T, lang string, got *crossOut, name string) map[string]string {
	t.Helper()
	v, ok := got.Views[name]
	if !ok || v.Aggregation != int(wire.Summary) || !slices.Equal(v.Bounds, []float64{0, 0.5, 1}) {
		t.Fatalf("%s: view %s %+v", lang, name, v)
	}
	out := map[string]string{}
	for _, r := range v.Rows {
		var qs, vals []float64
		for _, q := range r.Quantiles {
			qs, vals = append(qs, q[0]), append(vals, q[1])
		}
		out[r.Tags["route"]] = fmt.Sprint(deref(r.Count), " ", deref(r.Sum), " ", qs, " ", vals)
	}
	return out
}

// readFrames decodes WriterSink's frames into the last cycle's payloads.
func lastCycle(t *testing.T, b []byte) []*wire.Payload {
	t.Helper()
	var last []*wire.Payload
	for r := bytes.NewReader(b); r.Len() > 0; {
		fr, err := wire.ReadFrame(r, nil, wire.MaxFrameSize)
		if err != nil {
			t.Fatal(err)
		}
		p, err := wire.Decode(fr)
		if err != nil {
			t.Fatal(err)
		}
		if len(last) > 0 && last[0].Sequence != p.Sequence {
			last = last[:0]
		}
		last = append(last, p)
	}
	return last
}

// TestSummaryPayloads: a callback summary is aggregation 8 (its
// quantiles as the view's bounds, a row's count, sum and quantile values),
// in both versions, cumulative and delta (a summary's rows are their
// current values, sent every export, unchanged too), split over parts by
// a small cap; Go's reader decodes what view.RetrieveData reads, and so
// do the Python and Ruby readers following docs/wire-format.md.
func TestSummaryPayloads(t *testing.T) { eachVersion(t, testSummaryPayloads) }

func testSummaryPayloads(t *testing.T, version int) {
	name := summaryFixture(t, 60)
	want := retrievedSummary(t, name)
	if len(want) != 61 || want["/r3"] != "3 1.5 [0 0.5 1] [3 3.25 4]" || want[""] != "0 0 [0 0.5 1] [0 0 0]" {
		t.Fatalf("retrieved %v", want)
	}
	for _, temp := range []wire.Temporality{Cumulative, Delta} {
		t.Run(fmt.Sprint(temp), func(t *testing.T) {
			var buf bytes.Buffer
			e, err := New(&WriterSink{W: &buf}, Options{Temporality: temp, MaxPayloadBytes: MinMaxPayloadBytes, WireVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second export: nothing changed
				if err := e.Export(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			last := lastCycle(t, buf.Bytes())
			if len(last) < 2 {
				t.Errorf("%d parts; the cap should have split the snapshot", len(last))
			}
			if got := decodedSummary(t, last, name); !mapsEqual(got, want) {
				t.Errorf("decoded %v\nwant %v", got, want)
			}
			path := filepath.Join(t.TempDir(), "summary.bin")
			if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			crossDecode(t, path, func(t *testing.T, lang string, got *crossOut) {
				if g := crossSummary(t, lang, got, name); !mapsEqual(g, want) {
					t.Errorf("%s: %v\nwant %v", lang, g, want)
				}
			})
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestCrossLanguageSummaryRefused: the Python and Ruby readers refuse,
// naming the fault, the malformed summaries Go's reader refuses: a
// quantile outside 0..1, quantiles out of order, values not one per
// quantile, an overflow row.
func TestCrossLanguageSummaryRefused(t *testing.T) {
	row := func(qvals ...float64) func(b []byte) []byte {
		return func(b []byte) []byte {
			b = append(b, 0x91, 0x93, 0x01) // rows: [[count 1,
			b = msgpack.AppendFloat(b, 0.5) // sum,
			b = msgpack.AppendArrayHeader(b, uint32(len(qvals)))
			for _, x := range qvals { // [values]]]
				b = msgpack.AppendFloat(b, x)
			}
			return b
		}
	}
	for _, tc := range []struct {
		name   string
		bounds []float64
		rows   func([]byte) []byte
		want   string
	}{
		{"quantile 1.5", []float64{0.5, 1.5}, row(1, 2), "quantile outside 0..1"},
		{"unsorted", []float64{0.9, 0.5}, row(1, 2), "quantiles not increasing"},
		{"short values", []float64{0.5, 0.9}, row(1), "not one per quantile"},
	} {
		b := summaryPayloadOf(tc.bounds, tc.rows)
		if _, err := wire.Decode(b); err == nil {
			t.Errorf("%s: Go decoded it", tc.name)
		}
		path := filepath.Join(t.TempDir(), "bad.bin")
		if err := os.WriteFile(path, frame(b), 0o600); err != nil {
			t.Fatal(err)
		}
		crossRefuse(t, path, tc.want, tc.name)
	}
	// An overflow row: replace the nil after the rows.
	b := summaryPayloadOf([]float64{0.5}, row(1))
	i := bytes.LastIndex(b, []byte{0xc0, 0x92})
	b = append(append(append([]byte{}, b[:i]...), 0x93, 0x01, 0x00, 0x91, 0x00), b[i+1:]...)
	if _, err := wire.Decode(b); err == nil || !strings.Contains(err.Error(), "no overflow row") {
		t.Errorf("overflow row: Go: %v", err)
	}
	path := filepath.Join(t.TempDir(), "overflow.bin")
	if err := os.WriteFile(path, frame(b), 0o600); err != nil {
		t.Fatal(err)
	}
	crossRefuse(t, path, "summary overflow row", "overflow row")
}

// summaryPayloadOf is handPayload for a summary view "e" of bounds
// (quantiles), whose version-1 rows rows appends.
func summaryPayloadOf(bounds []float64, rows func([]byte) []byte) []byte {
	b := msgpack.AppendArrayHeader(nil, wire.EnvelopeLen)
	b = msgpack.AppendUint(b, wire.Version)
	b = msgpack.AppendArrayHeader(b, wire.HeaderLen)
	b = msgpack.AppendTime(b, time.Unix(1, 0))
	b = msgpack.AppendTime(b, time.Unix(2, 0))
	b = append(b, 0, 1, 0, msgpack.True) // cumulative, sequence 1, part 0, last
	b = msgpack.AppendArrayHeader(b, 0)  // resource
	b = msgpack.AppendArrayHeader(b, 1)  // views
	b = msgpack.AppendArrayHeader(b, wire.ViewLen)
	b = append(b, 1, 0, 0, byte(wire.Summary), 0x90) // name "e", description, unit, aggregation, keys
	b = msgpack.AppendArrayHeader(b, uint32(len(bounds)))
	for _, x := range bounds {
		b = msgpack.AppendFloat(b, x)
	}
	b = msgpack.AppendTime(b, time.Unix(1, 0))
	b = msgpack.AppendNil(rows(b)) // no overflow row
	b = msgpack.AppendArrayHeader(b, 2)
	return msgpack.AppendString(msgpack.AppendString(b, ""), "e")
}

// TestSummaryDocExampleBytes: the summary example of docs/wire-format.md
// (2 pauses, quantiles 0, 0.5 and 1) is what the exporter writes: the
// view's bounds, its row in version 1 and its five columns in version 2
// are the bytes the page gives.
func TestSummaryDocExampleBytes(t *testing.T) {
	doc, err := os.ReadFile("../docs/wire-format.md")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.NewReplacer(" ", "", "\n", "").Replace(string(doc))
	const bounds = "08" + "90" + "93ca00000000ca3f000000ca3f800000" // aggregation 8, no keys, the quantiles
	const v1 = "9302cb3f4de31d79c114bb93cb3f2bd4b694ebceb4cb3f2bd4b694ebceb4cb3f46edefd486210e"
	const v2 = "94019095" + "9102" + "91cb3f4de31d79c114bb91cb3f2bd4b694ebceb491cb3f2bd4b694ebceb491cb3f46edefd486210e" + "90"
	for _, want := range []string{bounds, v1, v2} {
		if !strings.Contains(flat, want) {
			t.Fatalf("the page does not hold %s", want)
		}
	}
	name := fmt.Sprintf("msgsum%d/gc_pause", summarySeq.Add(1))
	s, err := metric.NewSummary(name, "", "s", []float64{0, 0.5, 1}, nil, func(o *metric.SummaryObserver) {
		o.Observe(2, 0.000912084, []float64{0.000212333, 0.000212333, 0.000699751})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Unregister)
	for version, rows := range map[int]string{wire.Version: v1, wire.Version2: v2} {
		var c collect
		e, err := New(c.sink(t), Options{WireVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{bounds, rows} {
			b, err := hex.DecodeString(want)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, raw := range c.raw {
				found = found || bytes.Contains(raw, b)
			}
			if !found {
				t.Errorf("version %d: the exporter's payload lacks the page's bytes %s", version, want)
			}
		}
	}
}
