package exporter

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/exprow"
	"github.com/zerostat/zerostat/internal/msgpack"
)

// handExpPayload is a payload of one exponential distribution view "e"
// (no keys) with the given rows, in version 1's rows or version 2's
// columns, written as docs/wire-format.md says and not by the encoder.
func handExpPayload(version int, rows ...exprow.Row) []byte {
	return handPayload(version, wire.ExponentialDistribution, func(b []byte) []byte {
		return exprow.AppendRows(b, version, rows)
	})
}

// handPayload is a payload of one view "e" of aggregation agg, no keys and
// no bounds, whose rows rows appends (internal/wiretest's OneViewVersion,
// which this package's tests cannot import).
func handPayload(version int, agg wire.Aggregation, rows func([]byte) []byte) []byte {
	b := msgpack.AppendArrayHeader(nil, wire.EnvelopeLen)
	b = msgpack.AppendUint(b, uint64(version))
	b = msgpack.AppendArrayHeader(b, wire.HeaderLen)
	b = msgpack.AppendTime(b, time.Unix(1, 0))
	b = msgpack.AppendTime(b, time.Unix(2, 0))
	b = append(b, 0, 1, 0, msgpack.True) // cumulative, sequence 1, part 0, last
	b = msgpack.AppendArrayHeader(b, 0)  // resource
	b = msgpack.AppendArrayHeader(b, 1)  // views
	b = msgpack.AppendArrayHeader(b, wire.ViewLen)
	b = append(b, 1, 0, 0, byte(agg), 0x90, 0x90) // name "e", description, unit, aggregation, keys, bounds
	b = msgpack.AppendTime(b, time.Unix(1, 0))
	b = msgpack.AppendNil(rows(b)) // no overflow row
	b = msgpack.AppendArrayHeader(b, 2)
	return msgpack.AppendString(msgpack.AppendString(b, ""), "e")
}

// frame writes payloads as WriterSink's frames (4-byte big-endian length).
func frame(payloads ...[]byte) []byte {
	var out []byte
	for _, p := range payloads {
		out = binary.BigEndian.AppendUint32(out, uint32(len(p)))
		out = append(out, p...)
	}
	return out
}

// TestCrossLanguageExponentialHandBuilt: the Python and Ruby readers
// decode aggregation 7's rows, written by hand from docs/wire-format.md
// (versions 1 and 2: negative offsets, an empty range, the extreme
// scales and int32 offsets), to what Go's reader decodes; and refuse,
// naming the fault, the malformed rows Go's reader refuses.
func TestCrossLanguageExponentialHandBuilt(t *testing.T) {
	good := []exprow.Row{
		{Count: 5, Sum: 4.75, Min: -2, Max: 3, Scale: 0, Zero: 1, PosOff: -1, Pos: []int64{1, 0, 2}, NegOff: 0, Neg: []int64{1}},
		{Count: 2, Sum: 1.5, Min: 0.5, Max: 1, Scale: 20, PosOff: -1 << 20, Pos: []int64{1, 1}},
		{Count: 3, Sum: -1, Min: -1e300, Max: 1e-300, Scale: -10, PosOff: math.MinInt32, Pos: []int64{2}, NegOff: math.MaxInt32, Neg: []int64{1}},
	}
	for _, version := range wire.Versions {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			b := handExpPayload(version, good...)
			goP, err := wire.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "exp.bin")
			if err := os.WriteFile(path, frame(b), 0o600); err != nil {
				t.Fatal(err)
			}
			crossDecode(t, path, func(t *testing.T, lang string, got *crossOut) {
				v, ok := got.Views["e"]
				if !ok || v.Aggregation != 7 || len(v.Rows) != len(good) {
					t.Fatalf("%s: view %+v", lang, v)
				}
				for i, r := range v.Rows {
					if d := expRowDiff(&goP.Views[0].Rows[i], &goP.Views[0].Exp[i], &r); d != "" {
						t.Errorf("%s: row %d: %s", lang, i, d)
					}
				}
			})
		})
	}
	bad := []struct {
		name string
		row  exprow.Row
		want string // what each reader's error says
	}{
		{"counts not adding up", exprow.Row{Count: 6, Min: 1, Max: 1, Pos: []int64{5}}, "add up to"},
		{"negative bucket count", exprow.Row{Count: 1, Min: 1, Max: 1, Pos: []int64{2, -1}}, "not unsigned"},
		{"offset overflow", exprow.Row{Count: 2, Min: 1, Max: 1, PosOff: math.MaxInt32, Pos: []int64{1, 1}}, "pass index 2^31-1"},
		{"offset beyond int32", exprow.Row{Count: 1, Min: 1, Max: 1, NegOff: math.MaxInt32 + 1, Neg: []int64{1}}, "not an int32"},
		{"scale 21", exprow.Row{Count: 0, Min: 1, Max: 1, Scale: 21}, "scale 21"},
	}
	for _, tc := range bad {
		for _, version := range wire.Versions {
			b := handExpPayload(version, tc.row)
			if _, err := wire.Decode(b); err == nil {
				t.Errorf("%s, version %d: Go decoded it", tc.name, version)
			}
			path := filepath.Join(t.TempDir(), "bad.bin")
			if err := os.WriteFile(path, frame(b), 0o600); err != nil {
				t.Fatal(err)
			}
			crossRefuse(t, path, tc.want, fmt.Sprintf("%s, version %d", tc.name, version))
		}
	}
}

// expRowDiff compares a row as Python or Ruby printed it with Go's
// decoding of the same row; "" when they agree.
func expRowDiff(r *wire.Row, e *wire.ExpHistogram, g *crossRow) string {
	got := fmt.Sprintf("%v %v %v %v %v %v %v %v", deref(g.Count), deref(g.Sum), deref(g.Min), deref(g.Max),
		deref(g.Scale), deref(g.ZeroCount), g.Positive, g.Negative)
	want := fmt.Sprintf("%v %v %v %v %v %v %v %v", r.Count, r.Sum, r.Min, r.Max, e.Scale, e.ZeroCount,
		&crossExpBuckets{e.Positive.Offset, nilEmpty(e.Positive.Counts)}, &crossExpBuckets{e.Negative.Offset, nilEmpty(e.Negative.Counts)})
	if got != want {
		return "got " + got + "; want " + want
	}
	return ""
}

func nilEmpty(c []uint64) []uint64 {
	if c == nil {
		return []uint64{}
	}
	return c
}

func deref[T any](p *T) any {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// crossRefuse runs the Python and Ruby decoders on path and wants each
// to fail saying want (where an interpreter is missing, as crossDecode).
func crossRefuse(t *testing.T, path, want, name string) {
	t.Helper()
	for _, tc := range []struct{ lang, interp, script string }{
		{"python", "/usr/bin/python3", "decode.py"},
		{"ruby", "ruby", "decode.rb"},
	} {
		if !crossAvailable(t, tc.lang, tc.interp) {
			continue
		}
		cmd := exec.Command(tc.interp, filepath.Join("testdata", "crosslang", tc.script), path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err == nil || !strings.Contains(stderr.String(), want) {
			t.Errorf("%s: %s: %v, output %s, stderr %s; want a failure saying %q", name, tc.lang, err, out, stderr.String(), want)
		}
	}
}

// crossAvailable reports whether lang's interpreter and its msgpack are
// there; without them it skips (fails with ZEROSTAT_REQUIRE_CROSSLANG=1),
// as crossDecode does.
func crossAvailable(t *testing.T, lang, interp string) bool {
	t.Helper()
	flag, check := "-c", "import msgpack"
	if lang == "ruby" {
		flag, check = "-e", `require "msgpack"`
	}
	if out, err := exec.Command(interp, flag, check).CombinedOutput(); err != nil {
		msg := fmt.Sprintf("%s with msgpack is not available (%v: %s); run scripts/test-deps.sh", lang, err, strings.TrimSpace(string(out)))
		if os.Getenv("ZEROSTAT_REQUIRE_CROSSLANG") == "1" {
			t.Fatal(msg)
		}
		t.Log("SKIPPED: " + msg)
		return false
	}
	return true
}

// crossExpString renders a row as Python or Ruby printed it as
// expRowString renders a decoded one ("" for a row lacking a field).
func crossExpString(g *crossRow) string {
	if g.Count == nil || g.Sum == nil || g.Min == nil || g.Max == nil || g.Scale == nil || g.ZeroCount == nil || g.Positive == nil || g.Negative == nil {
		return fmt.Sprintf("a row lacking fields: %+v", g)
	}
	r := wire.Row{Count: *g.Count, Sum: *g.Sum, Min: *g.Min, Max: *g.Max}
	if route, ok := g.Tags["route"]; ok {
		r.Values = []string{route}
	}
	e := wire.ExpHistogram{Scale: *g.Scale, ZeroCount: *g.ZeroCount,
		Positive: wire.ExpBuckets{Offset: g.Positive.Offset, Counts: g.Positive.Counts},
		Negative: wire.ExpBuckets{Offset: g.Negative.Offset, Counts: g.Negative.Counts}}
	return expRowString(&r, &e)
}

// crossExpRows renders the rows of the view name as the Python or Ruby
// reader printed them, by route (the overflow row as "overflow").
func crossExpRows(t *testing.T, lang string, got *crossOut, name string) map[string]string {
	t.Helper()
	v, ok := got.Views[name]
	if !ok {
		t.Fatalf("%s: no view %s", lang, name)
	}
	if v.Aggregation != int(wire.ExponentialDistribution) || len(v.Bounds) != 0 {
		t.Errorf("%s: %s: aggregation %d, bounds %v", lang, name, v.Aggregation, v.Bounds)
	}
	out := map[string]string{}
	for i := range v.Rows {
		key := v.Rows[i].Tags["route"]
		if v.Rows[i].Tags["otel.metric.overflow"] == "true" {
			key = "overflow"
		}
		out[key] = crossExpString(&v.Rows[i])
	}
	return out
}

// TestCrossLanguageExponential: the exporter's exponential rows
// (positive, negative and zero values; an overflow row; cumulative, split
// by a small cap, and delta over two exports) decode with Python's and
// Ruby's stock msgpack, following docs/wire-format.md only, to what
// view.RetrieveData reads (cumulative) and Go's reader decodes (delta),
// in both versions.
func TestCrossLanguageExponential(t *testing.T) {
	eachVersion(t, testCrossLanguageExponential)
}

func testCrossLanguageExponential(t *testing.T, version int) {
	m, vs := expViews(t)
	recordWorkload(t, m)
	for i := range 10 {
		x := float64(i + 1)
		recordExp(t, m, fmt.Sprint("/w", i), x, -x*x, x/1000, 0)
	}
	t.Run("cumulative", func(t *testing.T) {
		var buf bytes.Buffer
		e, err := New(&WriterSink{W: &buf}, Options{MaxPayloadBytes: MinMaxPayloadBytes, Compression: Gzip, WireVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "cumulative.bin")
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		crossDecode(t, path, func(t *testing.T, lang string, got *crossOut) {
			if got.Parts < 2 {
				t.Errorf("%s saw %d parts; the cap should have split the snapshot", lang, got.Parts)
			}
			for _, v := range vs {
				sameMaps(t, lang+" "+v.Name, crossExpRows(t, lang, got, v.Name), retrievedExp(t, v))
			}
		})
	})
	t.Run("delta", func(t *testing.T) {
		var buf bytes.Buffer
		e, err := New(&WriterSink{W: &buf}, Options{Temporality: Delta, WireVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		for _, values := range [][]float64{{1, 1e6, -3}, {0, 1, 1.001, -2.5}} {
			recordExp(t, m, "/d", values...)
			if err := e.Export(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		var last []*wire.Payload // the second export's
		for r := bytes.NewReader(buf.Bytes()); r.Len() > 0; {
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
		want := decodedExp(t, last, vs[0].Name)
		// Its own scale, 16 (1 and 1.001 in 96 buckets), -2.5 in bucket
		// 86633 (log2(2.5)·2^16 = 86633.6), the interval's min and max.
		if want["/d"] != fmt.Sprintf("[/d] count=4 sum=-0.4990000000000001 min=-2.5 max=1.001 scale=16 zero=1 pos=-1%v neg=86633[1]", ends(96)) {
			t.Errorf("Go: the second interval's row %s", want["/d"])
		}
		path := filepath.Join(t.TempDir(), "delta.bin")
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		crossDecode(t, path, func(t *testing.T, lang string, got *crossOut) {
			sameMaps(t, lang+" delta", crossExpRows(t, lang, got, vs[0].Name), want)
		})
	})
}
