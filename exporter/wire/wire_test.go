package wire_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/exprow"
	"github.com/zerostat/zerostat/internal/msgpack"
	"github.com/zerostat/zerostat/internal/wiretest"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// samplePayload exports a small registry and returns the payload.
func samplePayload(t testing.TB) []byte {
	t.Helper()
	return samplePayloadVersion(t, wire.Version)
}

// samplePayloadVersion is samplePayload in the given wire format version.
func samplePayloadVersion(t testing.TB, version int) []byte {
	t.Helper()
	k := tag.MustNewKey("k")
	m := stats.Float64("wire/sample", "Sample", stats.UnitMilliseconds)
	vs := []*view.View{
		{Name: "wire/count", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{k}},
		{Name: "wire/dist", Measure: m, Aggregation: view.Distribution(1, 10), TagKeys: []tag.Key{k}},
		{Name: "wire/last", Measure: m, Aggregation: view.LastValue()},
		{Name: "wire/sum", Measure: m, Aggregation: view.Sum()},
	}
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
	ctx, _ := tag.New(context.Background(), tag.Upsert(k, "a"))
	for _, v := range []float64{0.5, 5, 50, math.Inf(1)} {
		stats.Record(ctx, m.M(v))
	}
	out := wiretest.ExportVersion(t, version)
	if len(out) != 1 {
		t.Fatalf("%d payloads; want 1", len(out))
	}
	return out[0]
}

func TestDecodeSample(t *testing.T) {
	p, err := wire.Decode(samplePayload(t))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]wire.View{}
	for _, v := range p.Views {
		byName[v.Name] = v
	}
	d := byName["wire/dist"]
	if d.Unit != "ms" || d.Description != "Sample" || len(d.Rows) != 1 {
		t.Fatalf("dist view %+v", d)
	}
	r := d.Rows[0]
	if r.Count != 4 || r.Min != 0.5 || !math.IsInf(r.Max, 1) || len(r.Buckets) != 3 || r.Buckets[2] != 2 || r.Values[0] != "a" {
		t.Errorf("dist row %+v", r)
	}
	if byName["wire/last"].Rows[0].Value != math.Inf(1) || byName["wire/count"].Rows[0].Count != 4 {
		t.Errorf("last/count rows %+v %+v", byName["wire/last"].Rows, byName["wire/count"].Rows)
	}
	if js, err := p.MarshalJSON(); err != nil || !bytes.Contains(js, []byte(`"max":"+Inf"`)) {
		t.Errorf("JSON %s, %v", js, err)
	}
}

// build assembles a payload from parts, for hostile cases.
func build(version uint64, views func(b []byte) []byte, strs ...string) []byte {
	b := msgpack.AppendArrayHeader(nil, wire.EnvelopeLen)
	b = msgpack.AppendUint(b, version)
	b = msgpack.AppendArrayHeader(b, wire.HeaderLen)
	b = msgpack.AppendTime(b, time.Unix(1, 0))
	b = msgpack.AppendTime(b, time.Unix(2, 0))
	b = msgpack.AppendUint(b, 0)
	b = msgpack.AppendUint(b, 1)
	b = msgpack.AppendUint(b, 0)
	b = msgpack.AppendBool(b, true)
	b = msgpack.AppendArrayHeader(b, 0)
	b = views(b)
	b = msgpack.AppendArrayHeader(b, uint32(len(strs)))
	for _, s := range strs {
		b = msgpack.AppendString(b, s)
	}
	return b
}

// oneView writes a views array with one Count view of one key and rows.
func oneView(agg uint64, keyIdx uint64, rows func(b []byte) []byte) func([]byte) []byte {
	return func(b []byte) []byte {
		b = msgpack.AppendArrayHeader(b, 1)
		b = msgpack.AppendArrayHeader(b, wire.ViewLen)
		b = msgpack.AppendUint(b, 1) // name
		b = msgpack.AppendUint(b, 0)
		b = msgpack.AppendUint(b, 0)
		b = msgpack.AppendUint(b, agg)
		b = msgpack.AppendArrayHeader(b, 1)
		b = msgpack.AppendUint(b, keyIdx)
		b = msgpack.AppendArrayHeader(b, 0)
		b = msgpack.AppendTime(b, time.Unix(1, 0))
		return msgpack.AppendNil(rows(b)) // no overflow row
	}
}

func countRow(valIdx, count uint64) func([]byte) []byte {
	return func(b []byte) []byte {
		b = msgpack.AppendArrayHeader(b, 1) // rows
		b = msgpack.AppendArrayHeader(b, 2) // [value, count]
		b = msgpack.AppendUint(b, valIdx)
		return msgpack.AppendUint(b, count)
	}
}

// countColumns is a version-2 count view's rows (one key): n, the value
// refs, the counts and the flat starts, each appended as given.
func countColumns(n uint64, vals, counts []uint64, starts func([]byte) []byte) func([]byte) []byte {
	return func(b []byte) []byte {
		b = msgpack.AppendArrayHeader(b, wire.ColumnsLen)
		b = msgpack.AppendUint(b, n)
		b = msgpack.AppendArrayHeader(b, 1)
		b = msgpack.AppendArrayHeader(b, uint32(len(vals)))
		for _, v := range vals {
			b = msgpack.AppendUint(b, v)
		}
		b = msgpack.AppendArrayHeader(b, 1)
		b = msgpack.AppendArrayHeader(b, uint32(len(counts)))
		for _, c := range counts {
			b = msgpack.AppendUint(b, c)
		}
		return starts(b)
	}
}

func noStarts(b []byte) []byte { return msgpack.AppendArrayHeader(b, 0) }

// TestDecodeVersion2: a version-2 view's columns decode to the rows and
// row starts version 1 would give; malformed columns are refused, naming
// the column or row at fault.
func TestDecodeVersion2(t *testing.T) {
	at := time.Unix(5, 0)
	good := build(2, oneView(1, 2, countColumns(2, []uint64{3, 0}, []uint64{7, 8}, func(b []byte) []byte {
		b = msgpack.AppendArrayHeader(b, 2)
		b = msgpack.AppendUint(b, 1)
		return msgpack.AppendTime(b, at)
	})), "", "v", "k", "x")
	p, err := wire.Decode(good)
	if err != nil {
		t.Fatal(err)
	}
	rows := p.Views[0].Rows
	if p.Version != 2 || len(rows) != 2 || rows[0].Values[0] != "x" || rows[0].Count != 7 || rows[1].Values[0] != "" || rows[1].Count != 8 ||
		!p.Views[0].RowStart(1).Equal(at) || !p.Views[0].RowStart(0).Equal(p.Views[0].Start) {
		t.Fatalf("decoded %+v", p.Views[0])
	}
	for _, tc := range []struct{ name, want string }{
		{"short value column", "views[0].rows.values[0]: at offset"},
		{"short data column", "views[0].rows.data.count: at offset"},
		{"odd starts", "views[0].rows.starts: at offset"},
		{"start row out of range", "row index 2: want one above -1 and below 2 rows"},
		{"starts not increasing", "row index 0: want one above 1 and below 2 rows"},
		{"dangling value", "views[0].rows[1].values: at offset"},
		{"rows as version 1", "views[0].rows: at offset"},
	} {
		var in []byte
		switch tc.name {
		case "short value column":
			in = build(2, oneView(1, 2, countColumns(2, []uint64{3}, []uint64{7, 8}, noStarts)), "", "v", "k", "x")
		case "short data column":
			in = build(2, oneView(1, 2, countColumns(2, []uint64{3, 3}, []uint64{7}, noStarts)), "", "v", "k", "x")
		case "odd starts":
			in = build(2, oneView(1, 2, countColumns(2, []uint64{3, 3}, []uint64{7, 8}, func(b []byte) []byte {
				b = msgpack.AppendArrayHeader(b, 1)
				return msgpack.AppendUint(b, 0)
			})), "", "v", "k", "x")
		case "start row out of range", "starts not increasing":
			in = build(2, oneView(1, 2, countColumns(2, []uint64{3, 3}, []uint64{7, 8}, func(b []byte) []byte {
				if tc.name == "start row out of range" {
					b = msgpack.AppendArrayHeader(b, 2)
					b = msgpack.AppendUint(b, 2)
					return msgpack.AppendTime(b, at)
				}
				b = msgpack.AppendArrayHeader(b, 4)
				b = msgpack.AppendUint(b, 1)
				b = msgpack.AppendTime(b, at)
				b = msgpack.AppendUint(b, 0)
				return msgpack.AppendTime(b, at)
			})), "", "v", "k", "x")
		case "dangling value":
			in = build(2, oneView(1, 2, countColumns(2, []uint64{3, 9}, []uint64{7, 8}, noStarts)), "", "v", "k", "x")
		case "rows as version 1":
			in = build(2, oneView(1, 2, countRow(3, 7)), "", "v", "k", "x")
		}
		p, err := wire.Decode(in)
		if err == nil || p != nil || !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %+v, error %v; want one containing %q", tc.name, p, err, tc.want)
		}
	}
	// A distribution's bucket columns must add up to its count, row by row.
	dist := build(2, oneView(3, 2, func(b []byte) []byte {
		b = msgpack.AppendArrayHeader(b, wire.ColumnsLen)
		b = msgpack.AppendUint(b, 1)
		b = msgpack.AppendArrayHeader(b, 1)
		b = append(b, 0x91, 3)                // the value column
		b = msgpack.AppendArrayHeader(b, 5+1) // count, sum, min, max, sum_sq_dev, one bucket (no bounds)
		b = append(b, 0x91, 2, 0x91, 4, 0x91, 1, 0x91, 3, 0x91, 2)
		b = append(b, 0x91, 1) // bucket 0: 1, count 2
		return noStarts(b)
	}), "", "v", "k", "x")
	if _, err := wire.Decode(dist); err == nil || !strings.Contains(err.Error(), "views[0].rows[0].buckets: at offset") || !strings.Contains(err.Error(), "add up to 1; count is 2") {
		t.Errorf("distribution buckets not adding up: error %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := build(1, oneView(1, 2, countRow(3, 7)), "", "v", "k", "x")
	if p, err := wire.Decode(good); err != nil || p.Views[0].Rows[0].Count != 7 || p.Views[0].Rows[0].Values[0] != "x" {
		t.Fatalf("the well-formed case: %+v, %v", p, err)
	}
	// A row may end with its own start (a row re-created after eviction).
	at := time.Unix(1700000000, 5)
	withStart := build(1, oneView(1, 2, func(b []byte) []byte {
		b = msgpack.AppendArrayHeader(b, 1)
		b = msgpack.AppendArrayHeader(b, 3)
		b = msgpack.AppendUint(b, 3)
		b = msgpack.AppendUint(b, 7)
		return msgpack.AppendTime(b, at)
	}), "", "v", "k", "x")
	if p, err := wire.Decode(withStart); err != nil || p.Views[0].Rows[0].Count != 7 || !p.Views[0].RowStart(0).Equal(at) {
		t.Fatalf("a row with a start: %+v, %v", p, err)
	}
	if p, _ := wire.Decode(good); !p.Views[0].RowStart(0).Equal(p.Views[0].Start) {
		t.Errorf("a row without a start starts at %v; want the view's %v", p.Views[0].RowStart(0), p.Views[0].Start)
	}
	sample := samplePayload(t)
	for _, tc := range []struct {
		name    string
		in      []byte
		version bool
		want    string
	}{
		{"empty", nil, false, "unexpected end"},
		{"not an array", []byte{0xa1, 'x'}, false, "want array"},
		{"short envelope", msgpack.AppendArrayHeader(nil, 3), false, "want 5"},
		{"version 3", build(3, oneView(1, 2, countRow(3, 7)), "", "v", "k", "x"), true, "version 3"},
		{"truncated", sample[:len(sample)/2], false, "at offset"},
		{"truncated by one", sample[:len(sample)-1], false, "strings"},
		{"trailing bytes", append(bytes.Clone(sample), 0), false, "1 bytes after the payload"},
		{"dangling string index", build(1, oneView(1, 2, countRow(9, 7)), "", "v", "k", "x"), false, "dangling string index 9 (the table has 4 strings)"},
		{"dangling key index", build(1, oneView(1, 200, countRow(3, 7)), "", "v", "k", "x"), false, "views[0].keys: at offset"},
		{"bad aggregation", build(1, oneView(9, 2, countRow(3, 7)), "", "v", "k", "x"), false, "aggregation 9"},
		{"negative count", build(1, oneView(1, 2, func(b []byte) []byte {
			b = msgpack.AppendArrayHeader(b, 1)
			b = msgpack.AppendArrayHeader(b, 2)
			b = msgpack.AppendUint(b, 3)
			return msgpack.AppendInt(b, -1)
		}), "", "v", "k", "x"), false, "views[0].rows[0].count"},
		{"wrong row length", build(1, oneView(1, 2, func(b []byte) []byte {
			b = msgpack.AppendArrayHeader(b, 1)
			b = msgpack.AppendArrayHeader(b, 4)
			b = msgpack.AppendUint(b, 3)
			b = msgpack.AppendUint(b, 3)
			b = msgpack.AppendUint(b, 1)
			return msgpack.AppendUint(b, 1)
		}), "", "v", "k", "x"), false, "views[0].rows[0]: at offset 37: array of 4 elements; want 2, or 3 with a start"},
		{"row start not a timestamp", build(1, oneView(1, 2, func(b []byte) []byte {
			b = msgpack.AppendArrayHeader(b, 1)
			b = msgpack.AppendArrayHeader(b, 3)
			b = msgpack.AppendUint(b, 3)
			b = msgpack.AppendUint(b, 3)
			return msgpack.AppendUint(b, 1)
		}), "", "v", "k", "x"), false, "views[0].rows[0].start: "},
		{"row start past 2262", build(1, oneView(1, 2, func(b []byte) []byte {
			b = msgpack.AppendArrayHeader(b, 1)
			b = msgpack.AppendArrayHeader(b, 3)
			b = msgpack.AppendUint(b, 3)
			b = msgpack.AppendUint(b, 3)
			return msgpack.AppendTime(b, time.Unix(1<<40, 0)) // year 36812
		}), "", "v", "k", "x"), false, "views[0].rows[0].start: at offset 54: timestamp 1099511627776 s outside int64 nanoseconds of the Unix epoch"},
		{"huge rows count", build(1, oneView(1, 2, func(b []byte) []byte {
			return append(b, msgpack.Array32, 0x7f, 0xff, 0xff, 0xff)
		}), "", "v", "k", "x"), false, "views"},
	} {
		p, err := wire.Decode(tc.in)
		if err == nil || p != nil {
			t.Errorf("%s: decoded %+v; want an error", tc.name, p)
			continue
		}
		wantIs := wire.ErrMalformed
		if tc.version {
			wantIs = wire.ErrVersion
		}
		if !errors.Is(err, wantIs) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q; want %v containing %q", tc.name, err, wantIs, tc.want)
		}
	}
}

func TestDistributionBucketsMustAddUp(t *testing.T) {
	if p, err := wire.Decode(wiretest.Dist(5, 2, 3)); err != nil || p.Views[0].Rows[0].Buckets[1] != 3 {
		t.Fatalf("the well-formed case: %+v, %v", p, err)
	}
	for _, tc := range []struct {
		name          string
		count, b0, b1 uint64
		want          string
	}{
		{"short", 5, 1, 1, `view "d": bucket counts add up to 2; count is 5`},
		// Summed in a wrapping uint64, 2^63 + 2^63 is 0: the count 0 passed.
		{"overflow to the count", 0, 1 << 63, 1 << 63, `view "d": bucket counts overflow a uint64; count is 0`},
		{"overflow", math.MaxUint64, math.MaxUint64, 1, "overflow"},
	} {
		_, err := wire.Decode(wiretest.Dist(tc.count, tc.b0, tc.b1))
		if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v; want ErrMalformed containing %q", tc.name, err, tc.want)
		}
	}
}

// TestDecodeUpperInclusive: aggregation 6 is a distribution that counts
// a value on a bound in the bucket below it; Decode reports it as a
// Distribution with UpperInclusive; 7's views have no bounds.
func TestDecodeUpperInclusive(t *testing.T) {
	for _, tc := range []struct {
		agg   wire.Aggregation
		upper bool
	}{{wire.Distribution, false}, {wire.DistributionUpperInclusive, true}} {
		p, err := wire.Decode(wiretest.DistAgg(tc.agg, 5, 2, 3))
		if err != nil {
			t.Fatal(err)
		}
		v := p.Views[0]
		if v.Aggregation != wire.Distribution || v.UpperInclusive != tc.upper || v.Rows[0].Buckets[1] != 3 {
			t.Errorf("aggregation %d: decoded %v, UpperInclusive %v, rows %+v", tc.agg, v.Aggregation, v.UpperInclusive, v.Rows)
		}
		js, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(js), `"upper_inclusive":true`); got != tc.upper {
			t.Errorf("aggregation %d: JSON %s", tc.agg, js)
		}
		if m := v.Metric(); m.Type != wire.HistogramType {
			t.Errorf("aggregation %d: metric %+v", tc.agg, m)
		}
	}
	// 7 is the exponential distribution, whose row is not a
	// distribution's.
	_, err := wire.Decode(wiretest.DistAgg(wire.DistributionUpperInclusive+1, 5, 2, 3))
	if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), "1 bounds on a exponential_distribution view") {
		t.Errorf("aggregation 7 with a distribution's bounds: %v", err)
	}
}

// TestDecodeStrings: the string table holds "" first and valid UTF-8 only
// (docs/wire-format.md), so every reader sees the same strings: Python's
// msgpack.unpackb(raw=False), as the spec's recipe calls it, refuses a
// payload with invalid UTF-8 anywhere in it.
func TestDecodeStrings(t *testing.T) {
	for _, tc := range []struct {
		name string
		strs []string
		want string
	}{
		{"strings[0] not empty", []string{"x", "v", "k", "x"}, `strings[0]: at offset 41: strings[0] is "x"; it must be ""`},
		{"invalid UTF-8", []string{"", "v", "k\xff", "x"}, `strings[2]: at offset 44: invalid UTF-8 in "k\xff"`},
		{"a surrogate half", []string{"", "v", "k", "\xed\xa0\x80"}, "strings[3]: at offset 46: invalid UTF-8"},
		{"truncated rune", []string{"", "caf\xc3", "k", "x"}, "strings[1]: at offset 42: invalid UTF-8"},
	} {
		_, err := wire.Decode(build(1, oneView(1, 2, countRow(3, 7)), tc.strs...))
		if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v; want ErrMalformed containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := wire.Decode(build(1, func(b []byte) []byte { return msgpack.AppendArrayHeader(b, 0) })); !errors.Is(err, wire.ErrMalformed) ||
		!strings.Contains(err.Error(), `empty string table; strings[0] must be ""`) {
		t.Errorf("no string table: %v", err)
	}
	p, err := wire.Decode(build(1, oneView(1, 2, countRow(3, 7)), "", "v", "ключ", "値 ✓"))
	if err != nil || p.Views[0].Keys[0] != "ключ" || p.Views[0].Rows[0].Values[0] != "値 ✓" {
		t.Errorf("valid UTF-8: %+v, %v", p, err)
	}
}

// TestDecodeDenseCountRows: a count view's rows take 4 to 7 bytes on the
// wire and 128 decoded; the decoder's former budget of 16 times the
// payload refused this legitimate payload, which zerostat writes.
func TestDecodeDenseCountRows(t *testing.T) {
	b := wiretest.DenseCounts(t, 5000)
	p, err := wire.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Views[0].Rows); n != 5000 {
		t.Errorf("%d rows; want 5000", n)
	}
	if ratio := float64(p.MemSize()) / float64(len(b)); ratio < 16 || ratio > 48 {
		t.Errorf("decoded %d bytes from %d: %.1fx; want between 16x (the old budget) and 48x", p.MemSize(), len(b), ratio)
	}
}

// TestDecodeDenseColumns: version 2's densest payload, count rows of no
// keys at 1 byte each, decodes within DecodeBudget (96x).
func TestDecodeDenseColumns(t *testing.T) {
	b := wiretest.Columns(5000, "dense")
	p, err := wire.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Views[0].Rows); n != 5000 || p.Views[0].Rows[4999].Count != 1 || p.Version != wire.Version2 {
		t.Fatalf("%d rows, version %d; want 5000 of count 1, version 2", n, p.Version)
	}
	if ratio := float64(p.MemSize()) / float64(len(b)); ratio <= 48 || ratio > 96 {
		t.Errorf("decoded %d bytes from %d: %.1fx; want above 48x (version 1's densest) and at most 96x", p.MemSize(), len(b), ratio)
	}
}

// TestDecodeLimit: DecodeLimit refuses a payload whose decoded form would
// pass the limit, with ErrTooLarge before allocating it; MemSize counts
// what the decoded form holds, which is what decoding allocates.
func TestDecodeLimit(t *testing.T) {
	b := samplePayload(t)
	p, err := wire.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	size := p.MemSize()
	if size <= len(b) || size > wire.DecodeBudget(len(b)) {
		t.Fatalf("MemSize %d for a %d-byte payload", size, len(b))
	}
	if _, err := wire.DecodeLimit(b, size); err != nil {
		t.Errorf("at exactly its size: %v", err)
	}
	if _, err := wire.DecodeLimit(b, size-1); !errors.Is(err, wire.ErrTooLarge) ||
		!strings.Contains(err.Error(), "the decoded payload would take more than its limit of "+strconv.Itoa(size-1)+" bytes") {
		t.Errorf("one byte short: %v; want ErrTooLarge", err)
	}
	// Averaged over many decodes: the first pays one-time costs.
	const runs = 100
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		p, _ = wire.Decode(b)
	}
	runtime.ReadMemStats(&after)
	if grown := int(after.TotalAlloc-before.TotalAlloc) / runs; grown > size+size/2 {
		t.Errorf("decoding allocated %d bytes; MemSize says %d", grown, size)
	}
	runtime.KeepAlive(p)
}

func TestGunzipCap(t *testing.T) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(make([]byte, 10<<20)) // 10 MiB of zeros: ~10 KiB compressed
	zw.Close()
	if _, err := wire.Gunzip(z.Bytes(), 1<<20); !errors.Is(err, wire.ErrTooLarge) {
		t.Errorf("gzip bomb: %v; want ErrTooLarge", err)
	}
	if b, err := wire.Gunzip(z.Bytes(), 10<<20); err != nil || len(b) != 10<<20 {
		t.Errorf("within the cap: %d bytes, %v", len(b), err)
	}
	if _, err := wire.Gunzip([]byte{0x1f, 0x8b, 1, 2}, 100); !errors.Is(err, wire.ErrMalformed) {
		t.Errorf("bad gzip: %v; want ErrMalformed", err)
	}
}

func TestReadFrameErrors(t *testing.T) {
	if _, err := wire.ReadFrame(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff}), nil, 1<<20); !errors.Is(err, wire.ErrTooLarge) {
		t.Errorf("huge frame: %v", err)
	}
	if _, err := wire.ReadFrame(bytes.NewReader([]byte{0, 0, 0, 5, 1}), nil, 1<<20); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("cut frame: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(samplePayload(f))
	f.Add(build(1, oneView(1, 2, countRow(3, 7)), "", "v", "k", "x"))
	f.Add(build(1, oneView(1, 2, countRow(3, 7)), "", "v", "k\xff", "x"))
	f.Add(wiretest.Dist(0, 1<<63, 1<<63))
	f.Add(wiretest.Columns(3, "c"))
	f.Add(samplePayloadVersion(f, wire.Version2))
	for _, v := range wire.Versions {
		f.Add(expPayload(v, goodExp, exprow.Row{Min: math.Inf(1), Max: math.Inf(-1), PosOff: -3}))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := wire.Decode(b)
		if err != nil {
			if p != nil {
				t.Fatal("a payload and an error")
			}
			return
		}
		if p.MemSize() > wire.DecodeBudget(len(b)) {
			t.Fatalf("decoded %d bytes from %d; budget %d", p.MemSize(), len(b), wire.DecodeBudget(len(b)))
		}
		js, err := p.MarshalJSON()
		if err != nil {
			t.Fatalf("a decoded payload does not render: %v", err)
		}
		if !utf8.Valid(js) || bytes.Contains(js, []byte(`\ufffd`)) {
			t.Fatalf("a decoded payload holds invalid UTF-8: %s", js)
		}
	})
}

// TestDecodeMemoryBounded: a payload announcing millions of one-byte views
// (a few KB gzipped) is refused before its decoded form is allocated; a
// review measured 1.28 GB allocated for an 8 MB payload before the budget.
func TestDecodeMemoryBounded(t *testing.T) {
	n := 1 << 20
	b := []byte{0x95, 0x01, 0x96, 0xd6, 0xff, 0, 0, 0, 1, 0xd6, 0xff, 0, 0, 0, 1, 0, 1, 0, 0xc3, 0x90, 0xdd}
	b = append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	b = append(b, make([]byte, n)...) // n "views", each the integer 0
	b = append(b, 0x91, 0xa0)         // strings: [""]
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := wire.Decode(b)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, wire.ErrTooLarge) {
		t.Errorf("got %v; want ErrTooLarge", err)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 16*uint64(len(b)) {
		t.Errorf("decoding allocated %d bytes for a %d-byte payload", grown, len(b))
	}
	// Legitimate payloads stay well within the budget.
	if _, err := wire.Decode(samplePayload(t)); err != nil {
		t.Errorf("a real payload: %v", err)
	}
}

// TestIntegerValues: the msgpack exporter writes an Int64 measure's Sum
// and LastValue values as integers and a Float64 measure's as floats, even
// integral ones; Decode records the form in View.Int, which Metric and
// IntValue report, and reads the same numbers either way.
func TestIntegerValues(t *testing.T) {
	im := stats.Int64("wire/int", "", stats.UnitBytes)
	fm := stats.Float64("wire/float", "", stats.UnitBytes)
	vs := []*view.View{
		{Name: "wire/isum", Measure: im, Aggregation: view.Sum()},
		{Name: "wire/ilast", Measure: im, Aggregation: view.LastValue()},
		{Name: "wire/fsum", Measure: fm, Aggregation: view.Sum()},
		{Name: "wire/flast", Measure: fm, Aggregation: view.LastValue()},
		{Name: "wire/idist", Measure: im, Aggregation: view.Distribution(10)},
	}
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
	stats.Record(context.Background(), im.M(-7), fm.M(3)) // 3.0: integral, still a float
	out := wiretest.Export(t)
	p, err := wire.Decode(out[0])
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"wire/isum": true, "wire/ilast": true, "wire/fsum": false, "wire/flast": false, "wire/idist": false}
	for i := range p.Views {
		v := &p.Views[i]
		isInt, ok := want[v.Name]
		if !ok {
			continue
		}
		delete(want, v.Name)
		n, intOK := v.IntValue(&v.Rows[0])
		if v.Int != isInt || intOK != isInt || v.Metric().Int != isInt {
			t.Errorf("%s: Int %v, IntValue ok %v, Metric().Int %v; want %v", v.Name, v.Int, intOK, v.Metric().Int, isInt)
		}
		if isInt && (n != -7 || v.Rows[0].Sum+v.Rows[0].Value != -7) {
			t.Errorf("%s: %d (row %+v); want -7", v.Name, n, v.Rows[0])
		}
	}
	if len(want) != 0 {
		t.Errorf("views missing: %v", want)
	}
	// A Float64 measure's integral 3.0 is a float32 on the wire (ca
	// 40400000), never the integer 03.
	if !bytes.Contains(out[0], []byte{msgpack.Float32, 0x40, 0x40, 0, 0}) {
		t.Error("no float32 3.0 in the payload")
	}
}
