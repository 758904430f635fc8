package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// expView is the worked example of docs/wire-format.md: 0, 0.75, 3, 3 and
// -2 ms at scale 0, and a row with nothing counted.
func expView() wire.View {
	inf := math.Inf(1)
	return wire.View{Name: "exp/ms", Unit: "ms", Aggregation: wire.ExponentialDistribution, Keys: []string{"k"},
		Rows: []wire.Row{{Values: []string{"v"}, Count: 5, Sum: 4.75, Min: -2, Max: 3}, {Values: []string{"w"}, Min: inf, Max: -inf}},
		Exp: []wire.ExpHistogram{
			{Scale: 0, ZeroCount: 1, Positive: wire.ExpBuckets{Offset: -1, Counts: []uint64{1, 0, 2}}, Negative: wire.ExpBuckets{Counts: []uint64{1}}},
			{Scale: 20},
		}}
}

// TestTableExponential: an exponential distribution's rows print as a
// distribution's, count, mean, min, max and the estimates, here from its
// exponential buckets in value order (negative, zero, positive); a row
// with nothing counted prints dashes, not its +Inf and -Inf.
func TestTableExponential(t *testing.T) {
	out := table(t, testPayload(1, expView()))
	fields := regexp.MustCompile(`(?m)^  k=(\w) +(.*)$`).FindAllStringSubmatch(out, -1)
	// ~p50: rank 2.5, past -2 (bucket [-2, -1)) and 0, halfway through
	// (0.5, 1]; ~p99: rank 4.95, 0.975 of the way through (2, 4] clamped
	// to the max, [2, 3].
	want := map[string]string{"v": "5 950us -2ms 3ms 750us 2.98ms", "w": "0 - - - - -"}
	if len(fields) != len(want) {
		t.Fatalf("got %d rows; want %d:\n%s", len(fields), len(want), out)
	}
	for _, f := range fields {
		if got := strings.Join(strings.Fields(f[2]), " "); got != want[f[1]] {
			t.Errorf("row k=%s: %q; want %q:\n%s", f[1], got, want[f[1]], out)
		}
	}
	if !regexp.MustCompile(`(?m)^exp/ms \[ms\] +count +mean +min +max +~p50 +~p99$`).MatchString(out) || !strings.Contains(out, "\n"+legend+"\n") {
		t.Errorf("no distribution headings or legend:\n%s", out)
	}
	checkWidth(t, out)
}

// TestExpQuantile: estimates walk the buckets in value order and stay
// within the row's min and max, at negative and positive scales.
func TestExpQuantile(t *testing.T) {
	v := expView()
	r, e := &v.Rows[0], &v.Exp[0]
	for _, tc := range []struct{ q, want float64 }{
		{0, -2},     // the min
		{0.1, -1.5}, // rank 0.5: halfway through [-2, -1)
		{0.4, 0},    // rank 2: the zero bucket
		{0.5, 0.75}, // rank 2.5: halfway through (0.5, 1]
		{1, 3},      // the max
		{0.8, 2.5},  // rank 4: halfway through (2, 4] clamped to [2, 3]
		{0.99, 2.975} /* rank 4.95 */} {
		if got := expQuantile(r, e, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("q %v: %v; want %v", tc.q, got, tc.want)
		}
	}
	// Scale -1 (base 4): 10 values in (4, 16], min 5, max 15.
	low := &wire.ExpHistogram{Scale: -1, Positive: wire.ExpBuckets{Offset: 1, Counts: []uint64{10}}}
	if got := expQuantile(&wire.Row{Count: 10, Min: 5, Max: 15}, low, 0.5); got != 10 {
		t.Errorf("scale -1: %v; want 10, halfway through [5, 15]", got)
	}
	if got := expQuantile(&v.Rows[1], &v.Exp[1], 0.5); !math.IsNaN(got) {
		t.Errorf("empty: %v; want NaN", got)
	}
}

// TestRepeatsExponential: two cumulative snapshots whose exponential rows
// differ only in their buckets are not a repeat; identical ones are.
func TestRepeatsExponential(t *testing.T) {
	a, b := expView(), expView()
	if !repeats(testPayload(1, a), testPayload(2, b), nil) {
		t.Error("identical snapshots: not a repeat")
	}
	b.Exp = []wire.ExpHistogram{b.Exp[0], b.Exp[1]}
	b.Exp[0].Positive.Counts = []uint64{1, 1, 1}
	if repeats(testPayload(1, a), testPayload(2, b), nil) {
		t.Error("different buckets: a repeat")
	}
	b = expView()
	b.Exp[0].Scale = 1
	if repeats(testPayload(1, a), testPayload(2, b), nil) {
		t.Error("different scales: a repeat")
	}
}

// TestDecodeExponentialDocExample: `zerostat decode` prints the worked
// example of docs/wire-format.md as a table and as JSON, with its scale,
// zero count and bucket ranges.
func TestDecodeExponentialDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/wire-format.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "<!-- exp-example-hex")
	block := s[i:]
	block = block[strings.Index(block, "```")+3:]
	b, err := hex.DecodeString(strings.TrimSpace(block[:strings.Index(block, "```")]))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "exp.msgpack")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ format, want string }{
		{"table", `(?m)^  route=/a +5 +950us +-2ms +3ms +750us +2\.98ms$`},
		{"json", `"aggregation":"exponential_distribution".*"count":5,"sum":4.75,"min":-2,"max":3,"scale":0,"zero_count":1,` +
			`"positive":\{"offset":-1,"counts":\[1,0,2\],"low":0.5,"high":4\},"negative":\{"offset":0,"counts":\[1\],"low":-2,"high":-1\}`},
	} {
		var out, errOut bytes.Buffer
		if code := runDecode([]string{"-format", tc.format, path}, nil, &out, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.format, code, errOut.String())
		}
		if !regexp.MustCompile(tc.want).MatchString(out.String()) {
			t.Errorf("%s: output lacks %s:\n%s", tc.format, tc.want, out.String())
		}
	}
}

// TestReceiveExponentialTable: `zerostat receive`'s handler prints the
// exponential rows an exporter sends (versions 1 and 2) as the table's
// distribution columns, estimated from the exponential buckets.
func TestReceiveExponentialTable(t *testing.T) {
	m := stats.Float64("test/receive_exp", "", stats.UnitMilliseconds)
	route := tag.MustNewKey("route")
	v := &view.View{Name: "test/receive_exp", Measure: m, Aggregation: view.ExponentialDistribution(4, 20), TagKeys: []tag.Key{route}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	ctx, err := tag.New(context.Background(), tag.Upsert(route, "/a"))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []float64{0, 0.75, 3, 3, -2} {
		stats.Record(ctx, m.M(x))
	}
	for _, version := range wire.Versions {
		var out, errOut syncBuffer
		pr, err := newPrinter(&out, "table")
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(receiveHandler(pr, &errOut, 1<<20, 1<<20))
		e, err := exporter.New(&exporter.HTTPSink{URL: srv.URL + "/"}, exporter.Options{WireVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		srv.Close()
		want := `(?m)^test/receive_exp \[ms\] +count +mean +min +max +~p50 +~p99\n  route=/a +5 +950us +-2ms +3ms +750us +2\.98ms$`
		if !regexp.MustCompile(want).MatchString(out.String()) || errOut.String() != "" {
			t.Errorf("version %d: receive printed\n%s\nstderr %q; want %s", version, out.String(), errOut.String(), want)
		}
	}
}
