package wire_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/msgpack"
	"github.com/zerostat/zerostat/internal/wiretest"
)

// sumRow is a summary row to write by hand: count (an int64, so that a
// test can write a negative one), sum and the quantile values.
type sumRow struct {
	count int64
	sum   float64
	vals  []float64
}

// summaryPayload is a payload of one summary view "s" of quantiles qs
// and no keys, rows in version 1's arrays or version 2's columns (as
// docs/wire-format.md says, not as the encoder writes them); ncols, when
// not 0, overrides version 2's data column count.
func summaryPayload(version int, qs []float64, ncols int, rows ...sumRow) []byte {
	return wiretest.OneViewVersion(version, wire.Summary, qs, func(b []byte) []byte {
		if version == wire.Version {
			b = msgpack.AppendArrayHeader(b, uint32(len(rows)))
			for _, r := range rows {
				b = msgpack.AppendArrayHeader(b, 3)
				b = msgpack.AppendInt(b, r.count)
				b = msgpack.AppendFloat(b, r.sum)
				b = msgpack.AppendArrayHeader(b, uint32(len(r.vals)))
				for _, x := range r.vals {
					b = msgpack.AppendFloat(b, x)
				}
			}
			return b
		}
		if ncols == 0 {
			ncols = 2 + len(qs)
		}
		b = msgpack.AppendArrayHeader(b, wire.ColumnsLen)
		b = msgpack.AppendUint(b, uint64(len(rows)))
		b = msgpack.AppendArrayHeader(b, 0)
		b = msgpack.AppendArrayHeader(b, uint32(ncols))
		for c := range ncols {
			b = msgpack.AppendArrayHeader(b, uint32(len(rows)))
			for _, r := range rows {
				switch c {
				case 0:
					b = msgpack.AppendInt(b, r.count)
				case 1:
					b = msgpack.AppendFloat(b, r.sum)
				default:
					b = msgpack.AppendFloat(b, r.vals[c-2])
				}
			}
		}
		return msgpack.AppendArrayHeader(b, 0) // no starts
	}, "", "s")
}

// TestDecodeSummary: aggregation 8's rows, written by hand, decode in both
// versions to their count, sum and quantile values (NaN and negative
// values kept), the quantiles as the view's bounds; its Metric is a
// Summary of float points; its JSON lists each quantile with its value.
func TestDecodeSummary(t *testing.T) {
	qs := []float64{0, 0.25, 0.5, 0.75, 1}
	rows := []sumRow{
		{2, 0.000912084, []float64{0.000212333, 0.000212333, 0.000699751, 0.000699751, 0.000699751}},
		{0, 0, []float64{math.NaN(), -1, 0, 1e300, math.Inf(1)}},
	}
	for _, version := range wire.Versions {
		p, err := wire.Decode(summaryPayload(version, qs, 0, rows...))
		if err != nil {
			t.Fatalf("version %d: %v", version, err)
		}
		v := &p.Views[0]
		if v.Aggregation != wire.Summary || !slices.Equal(v.Bounds, qs) || len(v.Rows) != 2 || v.Overflow != nil {
			t.Fatalf("version %d: view %+v", version, v)
		}
		for i, want := range rows {
			r := &v.Rows[i]
			got := v.RowQuantiles(i)
			if int64(r.Count) != want.count || r.Sum != want.sum || len(got) != len(qs) {
				t.Fatalf("version %d, row %d: %+v %v", version, i, r, got)
			}
			for j := range got {
				if got[j] != want.vals[j] && !(math.IsNaN(got[j]) && math.IsNaN(want.vals[j])) {
					t.Errorf("version %d, row %d: quantile %v = %v; want %v", version, i, qs[j], got[j], want.vals[j])
				}
			}
		}
		if m := v.Metric(); m.Type != wire.SummaryType || m.Int || m.Monotonic || m.Type.String() != "summary" {
			t.Errorf("version %d: Metric %+v", version, m)
		}
		if wire.Summary.String() != "summary" {
			t.Errorf("String: %q", wire.Summary.String())
		}
		var buf bytes.Buffer
		if err := p.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		var j struct {
			Views []struct {
				Aggregation string
				Bounds      []float64
				Rows        []struct {
					Count     uint64
					Sum       float64
					Quantiles []struct {
						Quantile float64
						Value    any
					}
				}
			}
		}
		if err := json.Unmarshal(buf.Bytes(), &j); err != nil {
			t.Fatalf("JSON: %v\n%s", err, buf.Bytes())
		}
		jr := j.Views[0].Rows
		if j.Views[0].Aggregation != "summary" || len(jr) != 2 || jr[0].Count != 2 || jr[0].Sum != 0.000912084 ||
			len(jr[0].Quantiles) != 5 || jr[0].Quantiles[2].Quantile != 0.5 || jr[0].Quantiles[2].Value != 0.000699751 ||
			jr[1].Quantiles[0].Value != "NaN" || jr[1].Quantiles[4].Value != "+Inf" {
			t.Errorf("version %d: JSON %s", version, buf.Bytes())
		}
	}
	// A summary of count and sum only.
	p, err := wire.Decode(summaryPayload(wire.Version, nil, 0, sumRow{count: 3, sum: 1.5}))
	if err != nil || p.Views[0].Rows[0].Count != 3 || len(p.Views[0].RowQuantiles(0)) != 0 {
		t.Errorf("no quantiles: %v %+v", err, p)
	}
}

// TestDecodeRefusesBadSummary: each malformed summary is refused with
// ErrMalformed naming the fault, never a panic.
func TestDecodeRefusesBadSummary(t *testing.T) {
	good := sumRow{1, 0.5, []float64{0.1, 0.5}}
	qs := []float64{0.5, 0.9}
	withOverflow := func(version int) []byte {
		b := summaryPayload(version, qs, 0, good)
		// The view's overflow slot is the nil before the string table
		// (two strings, "" and "s").
		i := bytes.LastIndex(b, []byte{0xc0, 0x92}) // nil, fixarray(2)
		if i < 0 {
			t.Fatal("no overflow slot")
		}
		row := msgpack.AppendArrayHeader(nil, 3)
		row = append(msgpack.AppendFloat(msgpack.AppendUint(row, 1), 0.5), 0x92, 0, 0)
		return append(append(append([]byte{}, b[:i]...), row...), b[i+1:]...)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"quantile above 1", summaryPayload(wire.Version, []float64{0.5, 1.5}, 0, sumRow{1, 1, []float64{1, 2}}), "quantile 1.5 outside 0..1"},
		{"negative quantile", summaryPayload(wire.Version, []float64{-0.5}, 0, sumRow{1, 1, []float64{1}}), "quantile -0.5 outside 0..1"},
		{"NaN quantile", summaryPayload(wire.Version, []float64{math.NaN()}, 0, sumRow{1, 1, []float64{1}}), "bound 0 is NaN"},
		{"unsorted quantiles", summaryPayload(wire.Version, []float64{0.9, 0.5}, 0, sumRow{1, 1, []float64{1, 2}}), "bounds not increasing: 0.5 after 0.9"},
		{"repeated quantile", summaryPayload(wire.Version, []float64{0.5, 0.5}, 0, sumRow{1, 1, []float64{1, 2}}), "bounds not increasing: 0.5 after 0.5"},
		{"too few values", summaryPayload(wire.Version, qs, 0, sumRow{1, 1, []float64{1}}), ".quantile_values: at offset"},
		{"too many values", summaryPayload(wire.Version, qs, 0, sumRow{1, 1, []float64{1, 2, 3}}), "array of 3 elements; want 2"},
		{"negative count", summaryPayload(wire.Version, qs, 0, sumRow{-1, 1, []float64{1, 2}}), ".count"},
		{"v2 too few columns", summaryPayload(wire.Version2, qs, 3, sumRow{1, 1, []float64{1, 2}}), "array of 3 elements; want 4"},
		{"v2 too many columns", summaryPayload(wire.Version2, qs, 5, sumRow{1, 1, []float64{1, 2, 3}}), "array of 5 elements; want 4"},
		{"overflow row v1", withOverflow(wire.Version), "a summary view has no overflow row"},
		{"overflow row v2", withOverflow(wire.Version2), "a summary view has no overflow row"},
	} {
		_, err := wire.Decode(tc.b)
		if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want ErrMalformed saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := wire.Decode(summaryPayload(wire.Version, qs, 0, good)); err != nil {
		t.Errorf("the good row: %v", err)
	}
}

// TestDocExampleSummary decodes the summary example of
// docs/wire-format.md, and its version-2 form as the page gives its rows,
// so that the page's bytes stay true.
func TestDocExampleSummary(t *testing.T) {
	doc, err := os.ReadFile("../../docs/wire-format.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "<!-- summary-example-hex")
	j := strings.Index(s, "<!-- end summary-example-hex -->")
	if i < 0 || j < i {
		t.Fatal("no summary-example-hex block in docs/wire-format.md")
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
	rest := s[j:]
	k := strings.Index(rest, "its `rows` is\n`")
	if k < 0 {
		t.Fatal("no version-2 rows in the summary example")
	}
	frag := rest[k+len("its `rows` is\n`"):]
	frag = strings.NewReplacer(" ", "", "\n", "").Replace(frag[:strings.Index(frag, "`")])
	const rowsV1 = "dd000000019302cb3f4de31d79c114bb93cb3f2bd4b694ebceb4cb3f2bd4b694ebceb4cb3f46edefd486210e"
	if !strings.Contains(hex1, rowsV1) {
		t.Fatalf("the example's rows are not %s", rowsV1)
	}
	b2, err := hex.DecodeString("9502" + strings.Replace(hex1[4:], rowsV1, frag, 1))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rest, fmt.Sprintf("%d bytes in all", len(b2))) {
		t.Errorf("the document does not say version 2's payload is %d bytes", len(b2))
	}
	for version, b := range map[int][]byte{1: b1, 2: b2} {
		p, err := wire.Decode(b)
		if err != nil {
			t.Fatalf("version %d: %v", version, err)
		}
		v := p.Views[0]
		if p.Version != version || v.Name != "gc_pause" || v.Unit != "s" || v.Aggregation != wire.Summary ||
			!slices.Equal(v.Bounds, []float64{0, 0.5, 1}) || len(v.Rows) != 1 || v.Overflow != nil {
			t.Fatalf("version %d: %+v", version, p)
		}
		r := v.Rows[0]
		if r.Count != 2 || r.Sum != 0.000912084 || !slices.Equal(v.RowQuantiles(0), []float64{0.000212333, 0.000212333, 0.000699751}) {
			t.Errorf("version %d: row %+v %v", version, r, v.RowQuantiles(0))
		}
	}
}
