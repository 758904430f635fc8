package main

import (
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/exporter/wire"
)

// summaryView is a summary view of quantiles 0, 0.5, 0.9 and 1 (no 0.99)
// with two rows.
func summaryView() wire.View {
	return wire.View{Name: "gc/pause", Unit: "s", Aggregation: wire.Summary, Keys: []string{"k"}, Bounds: []float64{0, 0.5, 0.9, 1},
		Rows:           []wire.Row{{Values: []string{"a"}, Count: 4, Sum: 0.012}, {Values: []string{"b"}, Count: 0, Sum: 0}},
		QuantileValues: []float64{0.001, 0.0025, 0.004, 0.006, math.NaN(), math.NaN(), math.NaN(), math.NaN()}}
}

// TestTableSummary: a summary prints under its own headings (no "~": its
// quantiles are its source's) its count, mean, and quantiles 0, 1, 0.5
// and 0.99 ("-" for one it lacks), as durations for a unit of time, and
// a legend line says what they are.
func TestTableSummary(t *testing.T) {
	out := table(t, testPayload(1, summaryView()))
	if !regexp.MustCompile(`(?m)^gc/pause \[s\] +count +mean +min +max +p50 +p99$`).MatchString(out) || !strings.Contains(out, "\n"+summaryLegend+"\n") {
		t.Errorf("no summary headings or legend:\n%s", out)
	}
	if strings.Contains(out, legend) {
		t.Errorf("the estimates' legend without estimates:\n%s", out)
	}
	fields := regexp.MustCompile(`(?m)^  k=(.) +(.*)$`).FindAllStringSubmatch(out, -1)
	want := map[string]string{"a": "4 3ms 1ms 6ms 2.5ms -", "b": "0 - - - - -"} // b: no count, NaN values
	if len(fields) != 2 {
		t.Fatalf("%d rows:\n%s", len(fields), out)
	}
	for _, f := range fields {
		if got := strings.Join(strings.Fields(f[2]), " "); got != want[f[1]] {
			t.Errorf("row %s: %q; want %q:\n%s", f[1], got, want[f[1]], out)
		}
	}
}

// TestRepeatsSummary: two cumulative snapshots whose summary rows differ
// only in a quantile's value are not a repeat; identical ones are; in
// delta, a summary is a total (as a last value): a repeat only when it is
// the same.
func TestRepeatsSummary(t *testing.T) {
	finite := func() wire.View {
		v := summaryView()
		v.QuantileValues = []float64{0.001, 0.0025, 0.004, 0.006, 0, 0, 0, 0}
		return v
	}
	a, b := finite(), finite()
	if !repeats(testPayload(1, a), testPayload(2, b), nil) {
		t.Error("identical snapshots: not a repeat")
	}
	b.QuantileValues = []float64{0.001, 0.0025, 0.005, 0.006, 0, 0, 0, 0}
	if repeats(testPayload(1, a), testPayload(2, b), nil) {
		t.Error("a different quantile value: a repeat")
	}
	da, db := testPayload(1, a), testPayload(2, b)
	da.Temporality, db.Temporality = wire.Delta, wire.Delta
	if repeats(da, db, nil) {
		t.Error("delta: a changed summary is a repeat")
	}
	db = testPayload(2, finite())
	db.Temporality = wire.Delta
	if !repeats(da, db, nil) {
		t.Error("delta: an unchanged summary is not a repeat")
	}
}
