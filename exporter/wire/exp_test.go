package wire_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/exprow"
	"github.com/zerostat/zerostat/internal/msgpack"
	"github.com/zerostat/zerostat/internal/wiretest"
)

// expPayload is a payload of one exponential distribution view "e" (no
// keys) with the given rows, in version 1's rows or version 2's columns.
func expPayload(version int, rows ...exprow.Row) []byte {
	return wiretest.OneViewVersion(version, wire.ExponentialDistribution, nil, func(b []byte) []byte {
		return exprow.AppendRows(b, version, rows)
	}, "", "e")
}

// goodExp: 0, 0.75, 3, 3 and -2 at scale 0 (the worked example's row).
var goodExp = exprow.Row{Count: 5, Sum: 4.75, Min: -2, Max: 3, Scale: 0, Zero: 1, PosOff: -1, Pos: []int64{1, 0, 2}, NegOff: 0, Neg: []int64{1}}

// TestDecodeExponential: an exponential distribution's row decodes, in
// both versions, into its Row (count, sum, min, max) and View.Exp (scale,
// zero count, the two ranges), and renders in JSON with its ranges.
func TestDecodeExponential(t *testing.T) {
	empty := exprow.Row{Min: math.Inf(1), Max: math.Inf(-1)}
	wide := exprow.Row{Count: 3, Sum: 1, Min: -1e-300, Max: 1e300, Scale: -10, PosOff: math.MaxInt32 - 1, Pos: []int64{1, 1},
		NegOff: math.MinInt32, Neg: []int64{1}}
	for _, version := range wire.Versions {
		p, err := wire.Decode(expPayload(version, goodExp, empty, wide))
		if err != nil {
			t.Fatalf("version %d: %v", version, err)
		}
		v := p.Views[0]
		if v.Aggregation != wire.ExponentialDistribution || len(v.Rows) != 3 || len(v.Exp) != 3 || len(v.Bounds) != 0 {
			t.Fatalf("version %d: view %+v", version, v)
		}
		r, e := v.Rows[0], v.Exp[0]
		if r.Count != 5 || r.Sum != 4.75 || r.Min != -2 || r.Max != 3 ||
			fmt.Sprint(e) != "{0 1 {-1 [1 0 2]} {0 [1]}}" {
			t.Errorf("version %d: row %+v, exp %v", version, r, e)
		}
		if lo, hi := e.Bounds(-1); lo != 0.5 || hi != 1 || e.Base() != 2 {
			t.Errorf("bucket -1 at scale 0: (%v, %v], base %v; want (0.5, 1], 2", lo, hi, e.Base())
		}
		if r, e := v.Rows[1], v.Exp[1]; r.Count != 0 || !(r.Min > r.Max) || len(e.Positive.Counts)+len(e.Negative.Counts) != 0 {
			t.Errorf("version %d: empty row %+v %+v", version, r, e)
		}
		if e := v.Exp[2]; e.Scale != -10 || e.Positive.Offset != math.MaxInt32-1 || e.Negative.Offset != math.MinInt32 {
			t.Errorf("version %d: extreme offsets %+v", version, e)
		}
		if m := v.Metric(); m.Type != wire.ExponentialHistogramType || m.Type.String() != "exponential_histogram" {
			t.Errorf("metric %+v", m)
		}
		js, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"aggregation":"exponential_distribution"`,
			`"count":5,"sum":4.75,"min":-2,"max":3,"scale":0,"zero_count":1,"positive":{"offset":-1,"counts":[1,0,2],"low":0.5,"high":4},"negative":{"offset":0,"counts":[1],"low":-2,"high":-1}`,
			`"count":0,"sum":0,"min":"+Inf","max":"-Inf","scale":0,"zero_count":0,"positive":{"offset":0,"counts":[]},"negative":{"offset":0,"counts":[]}`,
		} {
			if !strings.Contains(string(js), want) {
				t.Errorf("version %d: JSON %s\nwants %s", version, js, want)
			}
		}
	}
}

// TestDecodeExponentialOverflowRow: the overflow row of an exponential
// view (a row without tag values) has its buckets in OverflowExp.
func TestDecodeExponentialOverflowRow(t *testing.T) {
	for _, version := range wire.Versions {
		b := expPayload(version, goodExp)
		// Replace the nil overflow slot (after the rows, before the
		// string table ["", "e"]) with goodExp as a row.
		tail := []byte{msgpack.Nil, 0x92, 0xa0, 0xa1, 'e'}
		i := len(b) - len(tail)
		if string(b[i:]) != string(tail) {
			t.Fatalf("unexpected payload tail % x", b[i:])
		}
		over := msgpack.AppendArrayHeader(nil, wire.ExpDataLen)
		for c := range wire.ExpDataLen {
			over = goodExp.Field(over, c)
		}
		b = append(append(b[:i:i], over...), tail[1:]...)
		p, err := wire.Decode(b)
		if err != nil {
			t.Fatalf("version %d: %v", version, err)
		}
		v := p.Views[0]
		if v.Overflow == nil || v.OverflowExp == nil || v.Overflow.Count != 5 || fmt.Sprint(*v.OverflowExp) != "{0 1 {-1 [1 0 2]} {0 [1]}}" {
			t.Fatalf("version %d: overflow %+v %+v", version, v.Overflow, v.OverflowExp)
		}
		js, _ := p.MarshalJSON()
		if !strings.Contains(string(js), `"overflow":{"tags":{"otel.metric.overflow":"true"},"count":5`) ||
			!strings.Contains(string(js), `"positive":{"offset":-1,"counts":[1,0,2]`) {
			t.Errorf("version %d: JSON %s", version, js)
		}
	}
}

// TestDecodeExponentialMalformed: each fault of an exponential row is an
// error wrapping ErrMalformed that names the field and what is wrong, in
// both versions, never a panic.
func TestDecodeExponentialMalformed(t *testing.T) {
	with := func(f func(r *exprow.Row)) exprow.Row {
		r := goodExp
		r.Pos = append([]int64(nil), goodExp.Pos...)
		f(&r)
		return r
	}
	for _, tc := range []struct {
		name string
		row  exprow.Row
		want string
	}{
		{"count above the buckets", with(func(r *exprow.Row) { r.Count = 6 }), `view "e": zero count 1 and bucket counts add up to 5; count is 6`},
		{"count below the buckets", with(func(r *exprow.Row) { r.Count = 4 }), "add up to 5; count is 4"},
		{"zero count off", with(func(r *exprow.Row) { r.Zero = 0 }), "zero count 0 and bucket counts add up to 4; count is 5"},
		{"counts overflow", with(func(r *exprow.Row) {
			r.Zero, r.Pos, r.Neg, r.Count = 1, []int64{math.MaxInt64, math.MaxInt64}, []int64{1}, 0
		}),
			"zero count and bucket counts overflow a uint64"},
		{"negative bucket count", with(func(r *exprow.Row) { r.Pos[1] = -1 }), ".positive_counts: msgpack: at offset"},
		{"scale 21", with(func(r *exprow.Row) { r.Scale = 21 }), `.scale: at offset`},
		{"scale -11", with(func(r *exprow.Row) { r.Scale = -11 }), "scale -11; want -10 to 20"},
		{"offset beyond int32", with(func(r *exprow.Row) { r.PosOff = math.MaxInt32 + 1 }), ".positive_offset: at offset"},
		{"offset below int32", with(func(r *exprow.Row) { r.NegOff = math.MinInt32 - 1 }), "offset -2147483649; want an int32"},
		{"last index beyond int32", with(func(r *exprow.Row) { r.PosOff = math.MaxInt32 - 1 }),
			"3 buckets from offset 2147483646 pass the largest index, 2^31-1"},
	} {
		for _, version := range wire.Versions {
			_, err := wire.Decode(expPayload(version, goodExp, tc.row))
			if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "rows[1]") {
				t.Errorf("%s, version %d: %v; want ErrMalformed at rows[1] saying %q", tc.name, version, err, tc.want)
			}
		}
	}
	// The scale's message, for the large side too.
	if _, err := wire.Decode(expPayload(1, with(func(r *exprow.Row) { r.Scale = 21 }))); err == nil || !strings.Contains(err.Error(), "scale 21; want -10 to 20") {
		t.Errorf("scale 21: %v", err)
	}
	// Structural faults: a row of the wrong length, bounds on the view,
	// a counts field that is not an array, a count column short of n.
	row := func(n int, f func(b []byte) []byte) func([]byte) []byte {
		return func(b []byte) []byte {
			b = msgpack.AppendArrayHeader(b, 1)
			b = msgpack.AppendArrayHeader(b, uint32(n))
			return f(b)
		}
	}
	fields := func(upto int, b []byte) []byte {
		for c := range upto {
			b = goodExp.Field(b, c)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"a distribution's row", wiretest.OneView(wire.ExponentialDistribution, nil, row(6, func(b []byte) []byte { return fields(6, b) }), "", "e"),
			"array of 6 elements; want 10, or 11 with a start"},
		{"bounds", wiretest.OneView(wire.ExponentialDistribution, []float64{1}, noRows, "", "e"), "1 bounds on a exponential_distribution view"},
		{"counts not an array", wiretest.OneView(wire.ExponentialDistribution, nil, row(10, func(b []byte) []byte {
			return append(fields(7, b), 1, 0, 0x90)
		}), "", "e"), ".positive_counts: msgpack"},
		{"counts array cut short", wiretest.OneView(wire.ExponentialDistribution, nil, row(10, func(b []byte) []byte {
			return append(fields(7, b), 0xdd, 0x7f, 0xff, 0xff, 0xff)
		}), "", "e"), "header announces 2147483647 elements, more than the 5 bytes left can hold"},
		{"column short of n", wiretest.OneViewVersion(wire.Version2, wire.ExponentialDistribution, nil, func(b []byte) []byte {
			b = append(b, 0x94, 2, 0x90, 0x9a)
			for c := range wire.ExpDataLen {
				if c == 4 { // the scales column: 1 element
					b = goodExp.Field(msgpack.AppendArrayHeader(b, 1), c)
					continue
				}
				b = msgpack.AppendArrayHeader(b, 2)
				b = goodExp.Field(goodExp.Field(b, c), c)
			}
			return append(b, 0x90)
		}, "", "e"), "views[0].rows.data.scale: at offset 75: array of 1 elements; want 2"},
		{"too few data columns", wiretest.OneViewVersion(wire.Version2, wire.ExponentialDistribution, nil, func(b []byte) []byte {
			return append(b, 0x94, 0, 0x90, 0x96, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90)
		}, "", "e"), "array of 6 elements; want 10"},
	} {
		_, err := wire.Decode(tc.b)
		if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want ErrMalformed saying %q", tc.name, err, tc.want)
		}
	}
}

// TestDecodeRefusesAggregation9: the numbers stop at 8 (a summary).
func TestDecodeRefusesAggregation9(t *testing.T) {
	_, err := wire.Decode(wiretest.OneView(wire.Summary+1, nil, noRows, "", "x"))
	if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), "aggregation 9; want 1 to 8") {
		t.Errorf("aggregation 9: %v", err)
	}
}

// TestDocExampleExponential decodes the exponential distribution example
// of docs/wire-format.md, and its version-2 form as the page gives its
// rows, so that the page's bytes stay true.
func TestDocExampleExponential(t *testing.T) {
	doc, err := os.ReadFile("../../docs/wire-format.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "<!-- exp-example-hex")
	j := strings.Index(s, "<!-- end exp-example-hex -->")
	if i < 0 || j < i {
		t.Fatal("no exp-example-hex block in docs/wire-format.md")
	}
	block := s[i:j]
	block = block[strings.Index(block, "```")+3:]
	hex1 := strings.TrimSpace(block[:strings.Index(block, "```")])
	b1, err := hex.DecodeString(hex1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, fmt.Sprintf("The %d-byte\npayload", len(b1))) {
		t.Errorf("the document does not say the payload is %d bytes", len(b1))
	}
	// Version 2: "starts `95 02` and its `rows` is `...`".
	k := strings.Index(s, "its `rows` is\n`")
	if k < 0 {
		t.Fatal("no version-2 rows in the example")
	}
	frag := s[k+len("its `rows` is\n`"):]
	frag = strings.NewReplacer(" ", "", "\n", "").Replace(frag[:strings.Index(frag, "`")])
	const rowsV1 = "dd000000019b0605ca40980000cac0000000ca404000000001ff93010002009101"
	if !strings.Contains(hex1, rowsV1) {
		t.Fatalf("the example's rows are not %s", rowsV1)
	}
	hex2 := "9502" + strings.Replace(hex1[4:], rowsV1, frag, 1)
	b2, err := hex.DecodeString(hex2)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, fmt.Sprintf("%d bytes in all", len(b2))) {
		t.Errorf("the document does not say version 2's payload is %d bytes", len(b2))
	}
	for version, b := range map[int][]byte{1: b1, 2: b2} {
		p, err := wire.Decode(b)
		if err != nil {
			t.Fatalf("version %d: %v", version, err)
		}
		v := p.Views[0]
		if p.Version != version || v.Name != "latency" || v.Unit != "ms" || v.Aggregation != wire.ExponentialDistribution ||
			fmt.Sprint(v.Keys, v.Rows[0].Values) != "[route] [/a]" {
			t.Fatalf("version %d: %+v", version, p)
		}
		r, e := v.Rows[0], v.Exp[0]
		if r.Count != 5 || r.Sum != 4.75 || r.Min != -2 || r.Max != 3 || fmt.Sprint(e) != "{0 1 {-1 [1 0 2]} {0 [1]}}" {
			t.Errorf("version %d: row %+v %v", version, r, e)
		}
	}
}
