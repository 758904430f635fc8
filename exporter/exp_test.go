package exporter

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var expSeq int

// expViews registers an exponential distribution view (default sizes,
// keyed by route) and one of 4 buckets per sign with a cardinality limit
// of 2 (so that it has an overflow row), over a fresh Float64 measure.
func expViews(t testing.TB) (*stats.Float64Measure, []*view.View) {
	t.Helper()
	expSeq++
	p := fmt.Sprintf("expo%d/", expSeq)
	m := stats.Float64(p+"m", "Exponential", stats.UnitMilliseconds)
	vs := []*view.View{
		{Name: p + "exp", Measure: m, Aggregation: view.ExponentialDistribution(0, 0), TagKeys: []tag.Key{keyRoute}},
		{Name: p + "small", Measure: m, Aggregation: view.ExponentialDistribution(4, 20), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 2},
	}
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
	return m, vs
}

// recordExp records values with route=route.
func recordExp(t testing.TB, m *stats.Float64Measure, route string, values ...float64) {
	t.Helper()
	ctx, err := tag.New(context.Background(), tag.Upsert(keyRoute, route))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		stats.Record(ctx, m.M(v))
	}
}

// expWorkload: positive, negative and zero values, wide and narrow
// ranges, powers of two, a subnormal, and NaN and ±Inf (not counted).
var expWorkload = map[string][]float64{
	"/pos":   {1, 2, 4, 1024, 0.001, 3.5, 1e6},
	"/neg":   {-1, -0.5, -3, -3, -1e-3},
	"/mixed": {0, 0, -2, 2, 0.75, 5e-324, -1e10, 1e10},
	"/zero":  {0, math.Copysign(0, -1)},
	"/nan":   {math.NaN(), math.Inf(1), 7},
}

func recordWorkload(t testing.TB, m *stats.Float64Measure) {
	for route, vs := range expWorkload {
		recordExp(t, m, route, vs...)
	}
}

// expRowString renders a decoded exponential row (tags, count, sum,
// min, max, scale, zero count, ranges) for comparisons.
func expRowString(r *wire.Row, e *wire.ExpHistogram) string {
	return fmt.Sprintf("%v count=%d sum=%v min=%v max=%v scale=%d zero=%d pos=%d%v neg=%d%v", r.Values, r.Count, r.Sum, r.Min, r.Max,
		e.Scale, e.ZeroCount, e.Positive.Offset, e.Positive.Counts, e.Negative.Offset, e.Negative.Counts)
}

// retrievedExp renders view.RetrieveData's rows of v as expRowString
// does a decoded row, by tag values (joined by commas, in v's key order;
// the overflow row as "overflow"): Min and Max as the wire writes them
// (+Inf and -Inf for an empty row).
func retrievedExp(t testing.TB, v *view.View) map[string]string {
	t.Helper()
	name := v.Name
	rows, err := view.RetrieveData(name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, row := range rows {
		d, ok := row.Data.(*view.ExponentialDistributionData)
		if !ok {
			t.Fatalf("%s: data %T", name, row.Data)
		}
		u := func(cs []int64) []uint64 {
			o := make([]uint64, len(cs))
			for i, c := range cs {
				o[i] = uint64(c)
			}
			return o
		}
		r := wire.Row{Count: uint64(d.Count), Sum: d.Sum, Min: d.Min, Max: d.Max}
		if d.Count == 0 {
			r.Min, r.Max = math.Inf(1), math.Inf(-1)
		}
		key := "overflow"
		if !row.IsOverflow() {
			keys := slices.Clone(v.TagKeys)
			slices.SortFunc(keys, func(a, b tag.Key) int { return strings.Compare(a.Name(), b.Name()) })
			r.Values = make([]string, len(keys))
			for i, k := range keys {
				for _, tg := range row.Tags {
					if tg.Key == k {
						r.Values[i] = tg.Value
					}
				}
			}
			key = strings.Join(r.Values, ",")
		}
		pos, neg := wire.ExpBuckets{Offset: d.PositiveOffset, Counts: u(d.PositiveCounts)}, wire.ExpBuckets{Offset: d.NegativeOffset, Counts: u(d.NegativeCounts)}
		if len(pos.Counts) == 0 {
			pos.Offset = 0
		}
		if len(neg.Counts) == 0 {
			neg.Offset = 0
		}
		out[key] = expRowString(&r, &wire.ExpHistogram{Scale: d.Scale, ZeroCount: uint64(d.ZeroCount), Positive: pos, Negative: neg})
	}
	return out
}

// decodedExp renders the rows of the view name in payloads as
// retrievedExp does (keyed by their values joined by commas), checking that every row has its ExpHistogram.
func decodedExp(t testing.TB, payloads []*wire.Payload, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range payloads {
		for i := range p.Views {
			v := &p.Views[i]
			if v.Name != name {
				continue
			}
			if v.Aggregation != wire.ExponentialDistribution || len(v.Exp) != len(v.Rows) || len(v.Bounds) != 0 {
				t.Fatalf("%s: aggregation %v, %d rows, %d exp, %d bounds", name, v.Aggregation, len(v.Rows), len(v.Exp), len(v.Bounds))
			}
			for j := range v.Rows {
				out[strings.Join(v.Rows[j].Values, ",")] = expRowString(&v.Rows[j], &v.Exp[j])
			}
			if v.Overflow != nil {
				if v.OverflowExp == nil {
					t.Fatalf("%s: an overflow row without its buckets", name)
				}
				r := *v.Overflow
				r.Values = nil
				out["overflow"] = expRowString(&r, v.OverflowExp)
			}
		}
	}
	return out
}

func sameMaps(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if got[k] != want[k] {
			t.Errorf("%s: row %s:\n got %s\nwant %s", what, k, got[k], want[k])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected row %s: %s", what, k, got[k])
		}
	}
}

// TestExpCumulativeRoundTrip: an exponential view's rows, the overflow
// row too, decode (versions 1 and 2, whole and split by a small cap) to
// what view.RetrieveData reads: count, sum, min, max, scale, zero count
// and both ranges, exactly.
func TestExpCumulativeRoundTrip(t *testing.T) {
	m, vs := expViews(t)
	recordWorkload(t, m)
	for i := range 30 { // enough rows to need a few payloads at the smallest cap
		x := float64(i + 1)
		recordExp(t, m, fmt.Sprint("/w", i), x, -x*x, x/1000, 1e3*x)
	}
	for _, version := range wire.Versions {
		for _, maxBytes := range []int{DefaultMaxPayloadBytes, MinMaxPayloadBytes} {
			var c collect
			e, err := New(c.sink(t), Options{WireVersion: version, MaxPayloadBytes: maxBytes})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Export(context.Background()); err != nil {
				t.Fatal(err)
			}
			if maxBytes == MinMaxPayloadBytes && len(c.payloads) < 2 {
				t.Errorf("version %d: %d payloads under a cap of %d bytes; want a split", version, len(c.payloads), maxBytes)
			}
			for _, v := range vs {
				want := retrievedExp(t, v)
				if v.CardinalityLimit == 2 && want["overflow"] == "" {
					t.Fatalf("%s: no overflow row", v.Name)
				}
				sameMaps(t, fmt.Sprintf("version %d, cap %d, %s", version, maxBytes, v.Name), decodedExp(t, c.payloads, v.Name), want)
			}
		}
	}
}

// TestExpDeltaOwnScale: in delta payloads an exponential row holds its
// interval's values only, at their own scale (finer than the cumulative
// one when the interval's values are narrower), with the interval's min
// and max, and no row start; a row with nothing recorded is left out.
func TestExpDeltaOwnScale(t *testing.T) {
	for _, version := range wire.Versions {
		m, vs := expViews(t)
		var c collect
		e, err := New(c.sink(t), Options{Temporality: Delta, WireVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		export := func() map[string]string {
			c.payloads = nil
			if err := e.Export(context.Background()); err != nil {
				t.Fatal(err)
			}
			for _, p := range c.payloads {
				for _, v := range p.Views {
					if v.Name == vs[0].Name && (len(v.RowStarts) != 0 || !v.OverflowStart.IsZero()) {
						t.Errorf("version %d: exponential rows with starts %v", version, v.RowStarts)
					}
				}
			}
			return decodedExp(t, c.payloads, vs[0].Name)
		}
		recordExp(t, m, "/a", 1, 1e6)
		recordExp(t, m, "/b", -4)
		first := export()
		recordExp(t, m, "/a", 1, 1.001)
		second := export()
		sameMaps(t, fmt.Sprintf("version %d, first", version), first, map[string]string{
			"/a": fmt.Sprintf("[/a] count=2 sum=1.000001e+06 min=1 max=1e+06 scale=2 zero=0 pos=-1%v neg=0[]", ends(81)),
			// 1 and 1e6 fit 160 buckets at scale 2 (buckets -1 and 79:
			// log2(1e6)·4 = 79.7), not at 3 (-1 to 159); -4 at 20 is in
			// bucket 2·2^20-1 (upper-inclusive).
			"/b": "[/b] count=1 sum=-4 min=-4 max=-4 scale=20 zero=0 pos=0[] neg=2097151[1]",
		})
		// The interval's own scale: 1 and 1.001 fit 160 buckets at 16
		// (1 in bucket -1, 1.001 in 94: log2(1.001)·2^16 = 94.4).
		sameMaps(t, fmt.Sprintf("version %d, second", version), second, map[string]string{
			"/a": fmt.Sprintf("[/a] count=2 sum=2.001 min=1 max=1.001 scale=16 zero=0 pos=-1%v neg=0[]", ends(96)),
		})
		// The cumulative read still has everything, at the coarse scale.
		if got := retrievedExp(t, vs[0])["/a"]; !strings.Contains(got, "count=4 ") || !strings.Contains(got, "scale=2 ") {
			t.Errorf("version %d: cumulative /a: %s", version, got)
		}
		if got := export(); len(got) != 0 {
			t.Errorf("version %d: an interval with nothing recorded sent %v", version, got)
		}
		if err := e.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// ends returns n bucket counts, 1 at each end and 0 between.
func ends(n int) []uint64 {
	c := make([]uint64, n)
	c[0], c[n-1] = 1, 1
	return c
}

// TestEncodeExpAllocs: encoding exponential views allocates nothing in
// steady state, cumulative and delta (with records between exports, so
// that every delta read has buckets to copy), in both versions, whole
// and split.
func TestEncodeExpAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	m, _ := expViews(t)
	var ctxs []context.Context
	for i := range 50 {
		ctx, err := tag.New(context.Background(), tag.Upsert(keyRoute, fmt.Sprint("/r", i)))
		if err != nil {
			t.Fatal(err)
		}
		ctxs = append(ctxs, ctx)
	}
	x := 1.0
	record := func() {
		for i, ctx := range ctxs {
			x = x*1.37 + float64(i)
			if x > 1e12 {
				x = 1e-3
			}
			stats.Record(ctx, m.M(x), m.M(-x/3), m.M(0))
		}
	}
	record()
	for _, tc := range []struct {
		name string
		t    wire.Temporality
		max  int
	}{{"cumulative", Cumulative, DefaultMaxPayloadBytes}, {"delta", Delta, DefaultMaxPayloadBytes}, {"split", Cumulative, 4096}} {
		for _, version := range wire.Versions {
			kinds, _ := delta.NewKinds(tc.t == Delta, 0, "")
			attrs, err := Resource{ServiceName: "s"}.attributes()
			if err != nil {
				t.Fatal(err)
			}
			enc := newEncoder(tc.max, kinds, 0, attrs)
			enc.version = version
			var n, parts int
			emit := func(p []byte, last bool) error { n += len(p); parts++; return nil }
			now := time.Now()
			for range 3 { // warm up the buffers
				record()
				_ = enc.encode(now, now, emit)
			}
			n = 0
			if got := testing.AllocsPerRun(20, func() { record(); _ = enc.encode(now, now, emit) }); got != 0 {
				t.Errorf("%s, version %d: record and encode allocate %v times per export; want 0", tc.name, version, got)
			}
			if n == 0 || tc.name == "split" && parts < 2*21 {
				t.Errorf("%s, version %d: %d bytes in %d payloads", tc.name, version, n, parts)
			}
		}
	}
}

// TestSnapshotHandlerExp: the snapshot handler's JSON shows an
// exponential row's scale, zero count and ranges (with the values they
// cover), and its msgpack decodes to them.
func TestSnapshotHandlerExp(t *testing.T) {
	m, vs := expViews(t)
	recordExp(t, m, "/a", 0, 0.75, 3, 3, -2)
	srv := httptest.NewServer(NewSnapshotHandler(SnapshotOptions{DisableCompression: true}))
	defer srv.Close()
	get := func(accept string) []byte {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"?view="+vs[1].Name, nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s %v", accept, resp.StatusCode, b, err)
		}
		return b
	}
	js := string(get("application/json"))
	// 4 buckets per sign: 0.75 and 3 fit at scale 0 (docs/wire-format.md's example).
	want := `"aggregation":"exponential_distribution","keys":["route"],"start":`
	row := `{"tags":{"route":"/a"},"count":5,"sum":4.75,"min":-2,"max":3,"scale":0,"zero_count":1,` +
		`"positive":{"offset":-1,"counts":[1,0,2],"low":0.5,"high":4},"negative":{"offset":0,"counts":[1],"low":-2,"high":-1}}`
	if !strings.Contains(js, want) || !strings.Contains(js, row) {
		t.Errorf("JSON %s\nwants %s\nand %s", js, want, row)
	}
	p, err := wire.Decode(get(wire.ContentType))
	if err != nil {
		t.Fatal(err)
	}
	if got := decodedExp(t, []*wire.Payload{p}, vs[1].Name); got["/a"] != "[/a] count=5 sum=4.75 min=-2 max=3 scale=0 zero=1 pos=-1[1 0 2] neg=0[1]" {
		t.Errorf("msgpack: %v", got)
	}
}

// TestExpDocExampleBytes: the worked example of docs/wire-format.md (0,
// 0.75, 3, 3 and -2 in a view of 4 buckets per sign) is what the
// exporter writes: its row's data in version 1 and its ten columns in
// version 2 are the bytes the page gives.
func TestExpDocExampleBytes(t *testing.T) {
	doc, err := os.ReadFile("../docs/wire-format.md")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.NewReplacer(" ", "", "\n", "").Replace(string(doc))
	// count 5, sum 4.75, min -2, max 3, scale 0, zero 1, offset -1,
	// [1 0 2], offset 0, [1]; after the row's header and its tag ref.
	const v1 = "05ca40980000cac0000000ca404000000001ff93010002009101"
	const v2 = "9a910591ca4098000091cac000000091ca404000009100910191ff91930100029100919101"
	for _, want := range []string{v1, v2} {
		if !strings.Contains(flat, want) {
			t.Fatalf("the page does not hold %s", want)
		}
	}
	m, vs := expViews(t)
	recordExp(t, m, "/a", 0, 0.75, 3, 3, -2)
	for version, want := range map[int]string{wire.Version: v1, wire.Version2: v2} {
		var c collect
		e, err := New(c.sink(t), Options{WireVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		b, err := hex.DecodeString(want)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, raw := range c.raw {
			found = found || bytes.Contains(raw, b)
		}
		if !found {
			t.Errorf("version %d: the exporter's payload lacks the page's bytes %s (view %s)", version, want, vs[1].Name)
		}
	}
}
