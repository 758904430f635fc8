package exporter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/zerostat/zerostat/internal/attrval"
	"github.com/zerostat/zerostat/internal/core"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// crossRow is a row as the Python and Ruby decoders print it.
type crossRow struct {
	Tags     map[string]string `json:"tags"`
	Typed    map[string]any    `json:"typed"` // the values of typed keys, as their type
	Count    *uint64           `json:"count"`
	Sum      *float64          `json:"sum"`
	Value    *float64          `json:"value"`
	Min      *float64          `json:"min"`
	Max      *float64          `json:"max"`
	SumSqDev *float64          `json:"sum_sq_dev"`
	Buckets  []uint64          `json:"buckets"`
	Start    *string           `json:"start"`
	// An exponential distribution's (aggregation 7).
	Scale     *int32           `json:"scale"`
	ZeroCount *uint64          `json:"zero_count"`
	Positive  *crossExpBuckets `json:"positive"`
	Negative  *crossExpBuckets `json:"negative"`
	// A summary's (aggregation 8): [quantile, value] pairs.
	Quantiles [][2]float64 `json:"quantiles"`
}

// crossExpBuckets is one sign's buckets as the decoders print them.
type crossExpBuckets struct {
	Offset int32    `json:"offset"`
	Counts []uint64 `json:"counts"`
}

type crossOut struct {
	Sequence int               `json:"sequence"`
	Parts    int               `json:"parts"`
	Start    string            `json:"start"`
	End      string            `json:"end"`
	Resource map[string]string `json:"resource"`
	Views    map[string]struct {
		Unit        string     `json:"unit"`
		Aggregation int        `json:"aggregation"`
		Upper       bool       `json:"upper_inclusive"`
		Keys        []string   `json:"keys"`
		Bounds      []float64  `json:"bounds"`
		Rows        []crossRow `json:"rows"`
	} `json:"views"`
}

// TestCrossLanguageDecode exports a registry as a stream of frames split
// by the size cap, then decodes it with Python's and Ruby's stock msgpack
// (scripts that follow docs/wire-format.md only) and compares their totals
// with view.RetrieveData, row by row.
//
// The interpreters come from Debian (python3-msgpack, ruby-msgpack), which
// `make test` installs (scripts/test-deps.sh). Without them the test skips,
// saying so; with ZEROSTAT_REQUIRE_CROSSLANG=1 it fails instead.
func TestCrossLanguageDecode(t *testing.T) {
	eachVersion(t, testCrossLanguageDecode)
}

func testCrossLanguageDecode(t *testing.T, version int) {
	// A row re-created after eviction carries its own start (first, so
	// that the evicting exporter does not evict the fixture's rows too).
	restart := restartedRow(t)
	f := newFixture(t, 60)
	f.record(t, 60, 2)
	// A view over its cardinality limit: its overflow row must cross too.
	lim := &view.View{Name: f.names[0] + "_limited", Measure: f.lat, Aggregation: view.Distribution(1, 10),
		TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 10}
	if err := view.Register(lim); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(lim)
	// A view whose buckets are upper-inclusive, with values on its
	// bounds: aggregation 6, whose rule a reader can tell.
	upper := &view.View{Name: f.names[0] + "_upper", Measure: f.lat, Aggregation: view.DistributionUpperInclusive(1, 10),
		TagKeys: []tag.Key{keyRoute}}
	if err := view.Register(upper); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(upper)
	f.names = append(f.names, lim.Name, upper.Name)
	f.record(t, 60, 1)
	onBound, err := tag.New(context.Background(), tag.Upsert(keyRoute, "/bound"))
	if err != nil {
		t.Fatal(err)
	}
	stats.Record(onBound, f.lat.M(1), f.lat.M(10))
	dir := t.TempDir()
	path := filepath.Join(dir, "frames.bin")
	var buf bytes.Buffer
	e, err := New(&WriterSink{W: &buf}, Options{MaxPayloadBytes: 2048, Compression: Gzip,
		Resource: Resource{ServiceName: "crosslang", Host: "h", PID: 1}, WireVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	// The Go reader's view of the same bytes, for the timestamps.
	fr, err := wire.ReadFrame(bytes.NewReader(buf.Bytes()), nil, wire.MaxFrameSize)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := wire.Gunzip(fr, 1<<20)
	goP, err := wire.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}

	crossDecode(t, path, func(t *testing.T, lang string, got *crossOut) {
		if got.Parts < 2 {
			t.Errorf("%s saw %d parts; the cap should have split the snapshot", lang, got.Parts)
		}
		if got.Resource["service.name"] != "crosslang" || got.Resource["process.pid"] != "1" {
			t.Errorf("%s resource %v", lang, got.Resource)
		}
		if !sameInstant(t, got.Start, goP.Start.Format("2006-01-02T15:04:05.000000000Z07:00")) {
			t.Errorf("%s start %s; Go decoded %v", lang, got.Start, goP.Start)
		}
		compareCross(t, lang, f, got)
		for _, name := range f.names {
			v := got.Views[name]
			if wantUp := name == upper.Name; v.Upper != wantUp || (v.Aggregation == 6) != wantUp {
				t.Errorf("%s %s: aggregation %d, upper_inclusive %v; want upper_inclusive %v", lang, name, v.Aggregation, v.Upper, wantUp)
			}
		}
		if b := upperBuckets(got.Views[upper.Name].Rows, "/bound"); fmt.Sprint(b) != "[1 1 0]" {
			t.Errorf("%s: %s's row of values 1 and 10 has buckets %v; want [1 1 0] (upper-inclusive)", lang, upper.Name, b)
		}
		if b := upperBuckets(got.Views[lim.Name].Rows, "/bound"); b != nil && fmt.Sprint(b) != "[0 1 1]" {
			t.Errorf("%s: %s's row of values 1 and 10 has buckets %v; want [0 1 1] (OpenCensus's rule)", lang, lim.Name, b)
		}
		rv := got.Views[restart.name]
		if len(rv.Rows) != 1 || rv.Rows[0].Start == nil || !sameInstant(t, *rv.Rows[0].Start, restart.start.UTC().Format("2006-01-02T15:04:05.000000000Z07:00")) ||
			rv.Rows[0].Sum == nil || *rv.Rows[0].Sum != 1 {
			t.Errorf("%s: restarted row %+v; want sum 1 since %v", lang, rv.Rows, restart.start)
		}
	})
}

// TestCrossLanguageDeltaRowStarts: in a delta payload, a distribution
// row's first export carries its series' start (docs/wire-format.md,
// Rows), the overflow row's too, and an Int64 measure's sum is an
// integer; the Python and Ruby decoders read all three, with the values
// Go reads.
func TestCrossLanguageDeltaRowStarts(t *testing.T) {
	eachVersion(t, testCrossLanguageDeltaRowStarts)
}

func testCrossLanguageDeltaRowStarts(t *testing.T, version int) {
	m := stats.Int64("crosslang/delta", "", "")
	views := []*view.View{
		{Name: "crosslang/delta_dist", Measure: m, Aggregation: view.Distribution(10), TagKeys: []tag.Key{keyRoute}},
		{Name: "crosslang/delta_sum", Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		// One row, then the overflow row (route /b).
		{Name: "crosslang/delta_over", Measure: m, Aggregation: view.Distribution(10), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 1},
	}
	if err := view.Register(views...); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(views...)
	for i, route := range []string{"/a", "/b"} {
		ctx, err := tag.New(context.Background(), tag.Upsert(keyRoute, route))
		if err != nil {
			t.Fatal(err)
		}
		stats.Record(ctx, m.M(int64(3+i)))
	}
	var buf bytes.Buffer
	e, err := New(&WriterSink{W: &buf}, Options{Temporality: Delta, WireVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	fr, err := wire.ReadFrame(bytes.NewReader(buf.Bytes()), nil, wire.MaxFrameSize)
	if err != nil {
		t.Fatal(err)
	}
	goP, err := wire.Decode(fr)
	if err != nil {
		t.Fatal(err)
	}
	starts := map[string]time.Time{} // the Go reader's row starts, by route
	for _, v := range goP.Views {
		if v.Name == "crosslang/delta_dist" {
			for i, r := range v.Rows {
				starts[r.Values[0]] = v.RowStart(i)
			}
			if len(v.RowStarts) != 2 {
				t.Fatalf("Go: %d distribution rows with a start; want 2 (first export)", len(v.RowStarts))
			}
		}
		if v.Name == "crosslang/delta_over" {
			// Version 1's overflow row carries no start.
			if v.Overflow == nil || v.OverflowStart.IsZero() != (version == wire.Version) || len(v.RowStarts) != 1 {
				t.Fatalf("Go: overflow row %+v, start %v, %d row starts; want an overflow row, with a start in version 2, and 1 row start", v.Overflow, v.OverflowStart, len(v.RowStarts))
			}
			starts["overflow"] = v.OverflowStart
		}
	}
	path := filepath.Join(t.TempDir(), "frames.bin")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	crossDecode(t, path, func(t *testing.T, lang string, got *crossOut) {
		for _, r := range got.Views["crosslang/delta_dist"].Rows {
			want, ok := starts[r.Tags["route"]]
			if r.Start == nil || !ok || !sameInstant(t, *r.Start, want.UTC().Format("2006-01-02T15:04:05.000000000Z07:00")) ||
				r.Count == nil || *r.Count != 1 {
				t.Errorf("%s: distribution row %+v; want count 1 since %v", lang, r, want)
			}
		}
		total := 0.0
		for _, r := range got.Views["crosslang/delta_sum"].Rows {
			if r.Sum != nil {
				total += *r.Sum
			}
		}
		over := 0
		for _, r := range got.Views["crosslang/delta_over"].Rows {
			if r.Tags["otel.metric.overflow"] != "true" {
				continue
			}
			over++
			if (version == wire.Version) != (r.Start == nil) ||
				(r.Start != nil && !sameInstant(t, *r.Start, starts["overflow"].UTC().Format("2006-01-02T15:04:05.000000000Z07:00"))) ||
				r.Count == nil || *r.Count != 1 || r.Min == nil || *r.Min != 4 {
				t.Errorf("%s: overflow row %+v; want count 1, min 4, since %v", lang, r, starts["overflow"])
			}
		}
		if over != 1 {
			t.Errorf("%s: %d overflow rows; want 1", lang, over)
		}
		if n := len(got.Views["crosslang/delta_dist"].Rows); n != 2 || total != 7 {
			t.Errorf("%s: %d distribution rows, sums adding to %v; want 2 and 7", lang, n, total)
		}
	})
}

// TestCrossLanguageUpDownSum: a view.UpDownSum is aggregation 5, and in a
// delta payload its row is its total (3 after +5 and -2 over two
// exports), where a Sum's is the interval's change; the Python and Ruby
// decoders read it as Go does.
func TestCrossLanguageUpDownSum(t *testing.T) {
	eachVersion(t, testCrossLanguageUpDownSum)
}

func testCrossLanguageUpDownSum(t *testing.T, version int) {
	m := stats.Int64("crosslang/updown", "", "")
	views := []*view.View{
		{Name: "crosslang/updown_active", Measure: m, Aggregation: view.UpDownSum()},
		{Name: "crosslang/updown_sum", Measure: m, Aggregation: view.Sum()},
	}
	if err := view.Register(views...); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(views...)
	var buf bytes.Buffer
	e, err := New(&WriterSink{W: &buf}, Options{Temporality: Delta, WireVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []int64{5, -2} {
		stats.Record(context.Background(), m.M(v))
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var last *wire.Payload
	for r := bytes.NewReader(buf.Bytes()); r.Len() > 0; {
		fr, err := wire.ReadFrame(r, nil, wire.MaxFrameSize)
		if err != nil {
			t.Fatal(err)
		}
		if last, err = wire.Decode(fr); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]struct {
		agg wire.Aggregation
		sum float64
	}{"crosslang/updown_active": {wire.UpDownSum, 3}, "crosslang/updown_sum": {wire.Sum, -2}}
	for _, v := range last.Views {
		if w, ok := want[v.Name]; ok && (v.Aggregation != w.agg || len(v.Rows) != 1 || v.Rows[0].Sum != w.sum) {
			t.Errorf("Go: %s: aggregation %v, rows %+v; want %v with sum %v", v.Name, v.Aggregation, v.Rows, w.agg, w.sum)
		}
	}
	path := filepath.Join(t.TempDir(), "frames.bin")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	crossDecode(t, path, func(t *testing.T, lang string, got *crossOut) {
		for name, w := range want {
			v := got.Views[name]
			if v.Aggregation != int(w.agg) || len(v.Rows) != 1 || v.Rows[0].Sum == nil || *v.Rows[0].Sum != w.sum {
				t.Errorf("%s: %s: aggregation %d, rows %+v; want %d with sum %v", lang, name, v.Aggregation, v.Rows, w.agg, w.sum)
			}
		}
	})
}

// crossDecode runs the Python and Ruby decoders on the frames in path and
// passes check what each printed, or skips (fails with
// ZEROSTAT_REQUIRE_CROSSLANG=1) when an interpreter or its msgpack is
// missing.
func crossDecode(t *testing.T, path string, check func(t *testing.T, lang string, got *crossOut)) {
	t.Helper()
	for _, tc := range []struct{ lang, interp, check, script string }{
		{"python", "/usr/bin/python3", "import msgpack", "decode.py"},
		{"ruby", "ruby", `require "msgpack"`, "decode.rb"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			flag := "-c"
			if tc.lang == "ruby" {
				flag = "-e"
			}
			if out, err := exec.Command(tc.interp, flag, tc.check).CombinedOutput(); err != nil {
				msg := fmt.Sprintf("%s with msgpack is not available (%v: %s); run scripts/test-deps.sh", tc.lang, err, strings.TrimSpace(string(out)))
				if os.Getenv("ZEROSTAT_REQUIRE_CROSSLANG") == "1" {
					t.Fatal(msg)
				}
				t.Skip("SKIPPED: " + msg)
			}
			cmd := exec.Command(tc.interp, filepath.Join("testdata", "crosslang", tc.script), path)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s decoder: %v\n%s", tc.lang, err, stderr.String())
			}
			var got crossOut
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%s output: %v\n%s", tc.lang, err, out)
			}
			check(t, tc.lang, &got)
		})
	}
}

func sameInstant(t *testing.T, a, b string) bool {
	// Python prints microseconds, Ruby nanoseconds: compare to the
	// microsecond.
	norm := func(s string) string {
		s = strings.Replace(s, "+00:00", "Z", 1)
		if i := strings.IndexByte(s, '.'); i >= 0 {
			j := strings.IndexAny(s[i:], "Z+-")
			frac := s[i+1 : i+j]
			for len(frac) < 6 {
				frac += "0"
			}
			s = s[:i+1] + frac[:6] + "Z"
		}
		return s
	}
	return norm(a) == norm(b)
}

func compareCross(t *testing.T, lang string, f *fixture, got *crossOut) {
	t.Helper()
	for _, name := range f.names {
		want, _ := view.RetrieveData(name)
		gv, ok := got.Views[name]
		if !ok {
			t.Errorf("%s: view %s missing", lang, name)
			continue
		}
		if len(gv.Rows) != len(want) {
			t.Errorf("%s %s: %d rows; want %d", lang, name, len(gv.Rows), len(want))
		}
		byTags := map[string]crossRow{}
		for _, r := range gv.Rows {
			byTags[tagKey(r.Tags)] = r
		}
		for _, w := range want {
			tags := map[string]string{}
			for _, tg := range w.Tags {
				tags[tg.Key.Name()] = tg.Value
			}
			if w.IsOverflow() {
				tags = map[string]string{"otel.metric.overflow": "true"}
			}
			g, ok := byTags[tagKey(tags)]
			if !ok {
				t.Errorf("%s %s: row %v missing", lang, name, tags)
				continue
			}
			switch d := w.Data.(type) {
			case *view.CountData:
				if g.Count == nil || *g.Count != uint64(d.Value) {
					t.Errorf("%s %s %v: count %v; want %d", lang, name, tags, g.Count, d.Value)
				}
			case *view.SumData:
				if g.Sum == nil || !near(*g.Sum, d.Value) {
					t.Errorf("%s %s %v: sum %v; want %v", lang, name, tags, g.Sum, d.Value)
				}
			case *view.LastValueData:
				if g.Value == nil || *g.Value != d.Value {
					t.Errorf("%s %s %v: value %v; want %v", lang, name, tags, g.Value, d.Value)
				}
			case *view.DistributionData:
				if g.Count == nil || *g.Count != uint64(d.Count) || !near(*g.Sum, d.Sum()) ||
					*g.Min != d.Min || *g.Max != d.Max || !near(*g.SumSqDev, d.SumOfSquaredDev) ||
					fmt.Sprint(g.Buckets) != fmt.Sprint(d.CountPerBucket) {
					t.Errorf("%s %s %v: got %+v; want %+v", lang, name, tags, g, d)
				}
			}
		}
	}
}

// upperBuckets returns the buckets of the row tagged route=route.
func upperBuckets(rows []crossRow, route string) []uint64 {
	for _, r := range rows {
		if r.Tags["route"] == route {
			return r.Buckets
		}
	}
	return nil
}

func tagKey(m map[string]string) string {
	var ks []string
	for k, v := range m {
		ks = append(ks, k+"="+v)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

type restarted struct {
	name  string
	start time.Time
}

// restartedRow registers a sum view whose one row is evicted (through a
// delta exporter with EvictIdleAfter) and recorded again: a cumulative
// payload then gives the new row its own start.
func restartedRow(t *testing.T) restarted {
	m := stats.Int64("crosslang/restart", "", "")
	v := &view.View{Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	ctx, err := tag.New(context.Background(), tag.Upsert(keyRoute, "/again"))
	if err != nil {
		t.Fatal(err)
	}
	stats.Record(ctx, m.M(5))
	ev, err := New(FuncSink(func(context.Context, Payload) error { return nil }), Options{Temporality: Delta, EvictIdleAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // reads the record, finds it idle (seal), reads it sealed (free)
		if err := ev.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := ev.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	stats.Record(ctx, m.M(1)) // a new series: 5 -> 1 for a cumulative reader
	rows, err := view.RetrieveData(v.Name)
	if err != nil || len(rows) != 1 || rows[0].Data.(*view.SumData).Value != 1 {
		t.Fatalf("rows %v, %v; want the re-created row's 1", rows, err)
	}
	return restarted{name: v.Name, start: rows[0].Data.(*view.SumData).Start}
}

// TestCrossLanguageTypedKeys: a view whose keys an OpenTelemetry
// attribute typed (an int, a double, a bool slice; the otel provider
// types them so, core.Aggregator.SetKeyType) carries the types in its
// keys ([ref, type], docs/wire-format.md); Go, Python and Ruby read each
// value as its key's type, and a value that does not parse as it as its
// string.
func TestCrossLanguageTypedKeys(t *testing.T) {
	eachVersion(t, testCrossLanguageTypedKeys)
}

func testCrossLanguageTypedKeys(t *testing.T, version int) {
	m := stats.Int64("crosslang/typed_m", "", "")
	kCode, kRatio, kFlags, kName := tag.MustNewKey("code"), tag.MustNewKey("ratio"), tag.MustNewKey("flags"), tag.MustNewKey("name")
	v := &view.View{Name: "crosslang/typed", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{kCode, kRatio, kFlags, kName}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	a := core.FindView(v.Name).Agg
	a.SetKeyType("code", attrval.Int64)
	a.SetKeyType("ratio", attrval.Float64)
	a.SetKeyType("flags", attrval.BoolSlice)
	for _, vals := range [][4]string{{"200", "0.5", "[true false]", "x"}, {"abc", "1e+21", "[true]", "y"}} {
		ctx, err := tag.New(context.Background(), tag.Upsert(kCode, vals[0]), tag.Upsert(kRatio, vals[1]), tag.Upsert(kFlags, vals[2]), tag.Upsert(kName, vals[3]))
		if err != nil {
			t.Fatal(err)
		}
		stats.Record(ctx, m.M(1))
	}
	var buf bytes.Buffer
	e, err := New(&WriterSink{W: &buf}, Options{WireVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	fr, err := wire.ReadFrame(bytes.NewReader(buf.Bytes()), nil, wire.MaxFrameSize)
	if err != nil {
		t.Fatal(err)
	}
	p, err := wire.Decode(fr)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.Views, func(x wire.View) bool { return x.Name == v.Name })
	if i < 0 {
		t.Fatalf("Go: no view %s in the payload", v.Name)
	}
	gv := p.Views[i]
	if fmt.Sprint(gv.Keys, gv.KeyTypes) != "[code flags name ratio] [int64 bool_slice string float64]" { // keys by name
		t.Errorf("Go: key types %v of keys %v", gv.KeyTypes, gv.Keys)
	}
	goTyped := map[string]string{}
	for _, r := range gv.Rows {
		var parts []string
		for i, val := range r.Values {
			x := gv.TypedValue(i, val)
			parts = append(parts, fmt.Sprintf("%s=%T:%v", gv.Keys[i], x, x))
		}
		goTyped[r.Values[2]] = strings.Join(parts, " ")
	}
	if goTyped["x"] != "code=int64:200 flags=[]bool:[true false] name=string:x ratio=float64:0.5" ||
		goTyped["y"] != "code=string:abc flags=[]bool:[true] name=string:y ratio=float64:1e+21" {
		t.Errorf("Go: typed values %q", goTyped)
	}
	path := filepath.Join(t.TempDir(), "typed.bin")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	crossDecode(t, path, func(t *testing.T, lang string, got *crossOut) {
		rows := got.Views[v.Name].Rows
		if len(rows) != 2 {
			t.Fatalf("%s: rows %+v", lang, rows)
		}
		for _, r := range rows {
			var want string
			switch r.Tags["name"] {
			case "x":
				want = "map[code:200 flags:[true false] ratio:0.5]" // numbers, a list: JSON's types
			case "y":
				want = "map[code:abc flags:[true] ratio:1e+21]"
			}
			if fmt.Sprint(r.Typed) != want {
				t.Errorf("%s: row %v: typed %v; want %s", lang, r.Tags, r.Typed, want)
			}
			if c, ok := r.Typed["code"].(float64); r.Tags["name"] == "x" && (!ok || c != 200) {
				t.Errorf("%s: code %T %v; want the number 200", lang, r.Typed["code"], r.Typed["code"])
			}
			if f, ok := r.Typed["flags"].([]any); !ok || f[0] != true {
				t.Errorf("%s: flags %T %v; want a list of booleans", lang, r.Typed["flags"], r.Typed["flags"])
			}
		}
	})
}
