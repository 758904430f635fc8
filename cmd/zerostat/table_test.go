package main

import (
	"bytes"
	"context"
	"math"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// checkWidth fails t for each line of out wider than 100 columns, as a
// terminal counts them (a rune a column: the tables print no wide or
// control characters of their own).
func checkWidth(t *testing.T, out string) {
	t.Helper()
	const maxWidth = 100 // the issue's, not the code's constant
	if !utf8.ValidString(out) {
		t.Errorf("output is not valid UTF-8 (a line cut inside a rune?)")
	}
	for i, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > maxWidth {
			t.Errorf("line %d is %d columns wide (at most %d):\n%s", i+1, n, maxWidth, l)
		}
	}
}

var headerRE = regexp.MustCompile(`^== snapshot [0-9]+ from zerostat-demo: cumulative values, ` +
	`((?:[0-9]{4}-[0-9]{2}-[0-9]{2} )?[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}) \.\. ` +
	`((?:[0-9]{4}-[0-9]{2}-[0-9]{2} )?[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}) \(([^)]+)\) ==$`)

// checkHeaders checks the demo's snapshot headers: each gives its start
// and end to the millisecond, and the interval's length, their
// difference. At least one header must be there.
func checkHeaders(t *testing.T, out string) {
	t.Helper()
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "== snapshot ") || strings.HasSuffix(l, ", not printed ==") {
			continue
		}
		n++
		m := headerRE.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("header without millisecond times and the interval's length: %q", l)
			continue
		}
		layout := "15:04:05.000"
		if len(m[1]) > len(layout) {
			layout = "2006-01-02 15:04:05.000"
		}
		start, err1 := time.Parse(layout, m[1])
		end, err2 := time.Parse(layout, m[2])
		d, err3 := time.ParseDuration(m[3])
		if err1 != nil || err2 != nil || err3 != nil || end.Sub(start) != d {
			t.Errorf("header %q: %v .. %v is not %v long (%v %v %v)", l, m[1], m[2], m[3], err1, err2, err3)
		}
	}
	if n == 0 {
		t.Errorf("no snapshot header in:\n%s", out)
	}
}

// unwrap joins each line continued on the next (indented) to it.
func unwrap(s string) string { return regexp.MustCompile(`\n +`).ReplaceAllString(s, "") }

func table(t *testing.T, pls ...*wire.Payload) string {
	t.Helper()
	var out bytes.Buffer
	pr, err := newPrinter(&out, "table")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pls {
		if err := pr.print(p); err != nil {
			t.Fatal(err)
		}
	}
	return out.String()
}

var t0 = time.Date(2026, 12, 4, 18, 57, 30, 250_000_000, time.Local)

func testPayload(seq uint64, views ...wire.View) *wire.Payload {
	return &wire.Payload{Version: wire.Version2, Sequence: seq, Last: true,
		Start: t0, End: t0.Add(time.Duration(seq) * time.Second),
		Resource: []wire.Attribute{{Key: "service.name", Value: "svc"}}, Views: views}
}

// TestTableFitsWidth: whatever the names, tags and values, no line is
// wider than 100 columns, and nothing is cut off: a long tag set, tag
// value, view name or service name is wrapped, all of it printed.
func TestTableFitsWidth(t *testing.T) {
	long := strings.Repeat("v", 250)
	accents := strings.Repeat("é", 150)
	name := strings.Repeat("a/very/long/view/name/", 8)
	keys := []string{"alpha.key", "beta.key", "gamma.key", "long", "delta.key", "epsilon.key", "zeta.key", "accents"}
	vals := []string{"one", "two", "three", long, "four", "five", "six", accents}
	huge := wire.Row{Values: vals, Count: math.MaxUint64, Sum: -1.2345e300, Min: -1.2345e300, Max: 1e300,
		Buckets: []uint64{math.MaxUint64, 0, 0}}
	p := testPayload(1,
		wire.View{Name: name, Unit: "a-unit-of-some-length", Aggregation: wire.Distribution, Keys: keys, Bounds: []float64{1, 2},
			Rows: []wire.Row{huge}, Overflow: &wire.Row{Count: 1, Min: 1, Max: 1, Sum: 1, Buckets: []uint64{0, 1, 0}}},
		wire.View{Name: "dist/seconds", Unit: "s", Aggregation: wire.Distribution, Keys: keys, Bounds: []float64{1, 2},
			Rows: []wire.Row{{Values: vals, Count: 3, Sum: 3e9, Min: 1e-12, Max: 3e9, Buckets: []uint64{1, 1, 1}}}},
		wire.View{Name: "count", Aggregation: wire.Count, Keys: keys, Rows: []wire.Row{{Values: vals, Count: math.MaxUint64}}},
		wire.View{Name: "sum", Aggregation: wire.Sum, Keys: keys[:3], Rows: []wire.Row{{Values: vals[:3], Sum: -1.234567e-300}}},
		wire.View{Name: "empty", Aggregation: wire.LastValue})
	p.Resource[0].Value = strings.Repeat("service-", 20)
	out := table(t, p)
	checkWidth(t, out)
	joined := unwrap(out)
	for _, want := range []string{p.Resource[0].Value, name, "[a-unit-of-some-length]", formatTags(keys, vals), "18446744073709551615",
		"-1.23e+300", "1.23e+300", "otel.metric.overflow=true", "0.001ns", "3e+09s", "1e+09s", "-1.23457e-300", "(no data)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the table lacks %q (or cut it):\n%s", want, out)
		}
	}
}

// TestTableUnitsAndEstimates: the same distribution recorded in
// milliseconds and in seconds prints alike, as durations; the estimates
// are labelled so, and a legend says how they are made.
func TestTableUnitsAndEstimates(t *testing.T) {
	// 4 values: two in [1,2) ms, one in [2,5), one at 6 ms; min 1.2, max 6.
	ms := wire.View{Name: "in/ms", Unit: "ms", Aggregation: wire.Distribution, Keys: []string{"k"}, Bounds: []float64{1, 2, 5},
		Rows: []wire.Row{{Values: []string{"v"}, Count: 4, Sum: 12, Min: 1.2, Max: 6, Buckets: []uint64{0, 2, 1, 1}}}}
	s := wire.View{Name: "in/s", Unit: "s", Aggregation: wire.Distribution, Keys: []string{"k"}, Bounds: []float64{0.001, 0.002, 0.005},
		Rows: []wire.Row{{Values: []string{"v"}, Count: 4, Sum: 0.012, Min: 0.0012, Max: 0.006, Buckets: []uint64{0, 2, 1, 1}}}}
	bytes := wire.View{Name: "in/bytes", Unit: "By", Aggregation: wire.Distribution, Keys: []string{"k"}, Bounds: []float64{1000, 2000, 5000},
		Rows: []wire.Row{{Values: []string{"v"}, Count: 4, Sum: 12000, Min: 1200, Max: 6000, Buckets: []uint64{0, 2, 1, 1}}}}
	out := table(t, testPayload(1, ms, s, bytes))
	// count, mean, min, max, ~p50 (2: the top of [1.2, 2), the bucket
	// holding ranks 1-2), ~p99 (5.96: 0.96 of the way through [5, 6]).
	fields := regexp.MustCompile(`(?m)^  k=v +(.*)$`).FindAllStringSubmatch(out, -1)
	want := []string{"4 3ms 1.2ms 6ms 2ms 5.96ms", "4 3ms 1.2ms 6ms 2ms 5.96ms", "4 3000 1200 6000 2000 5960"}
	if len(fields) != len(want) {
		t.Fatalf("got %d rows; want %d:\n%s", len(fields), len(want), out)
	}
	for i, f := range fields {
		if got := strings.Join(strings.Fields(f[1]), " "); got != want[i] {
			t.Errorf("row %d: %q; want %q:\n%s", i, got, want[i], out)
		}
	}
	if !regexp.MustCompile(`(?m)^in/ms \[ms\] +count +mean +min +max +~p50 +~p99$`).MatchString(out) || !strings.Contains(out, "\n"+legend+"\n") {
		t.Errorf("estimates not labelled as such, or no legend:\n%s", out)
	}
	// A table without distributions has no legend.
	if out := table(t, testPayload(1, wire.View{Name: "c", Aggregation: wire.Count, Rows: []wire.Row{{Count: 1}}})); strings.Contains(out, "~p50") {
		t.Errorf("a legend without estimates:\n%s", out)
	}
}

// TestHeaderInterval: the header gives the interval to the millisecond
// and its length, with the dates when it spans midnight (issue 44, item
// 8: a start of 18:57:30 for 18:57:30.250 made a 1.75 s window look 2 s).
func TestHeaderInterval(t *testing.T) {
	p := testPayload(1)
	p.End = t0.Add(1750*time.Millisecond + 400*time.Microsecond)
	if got, want := header(p), "== snapshot 1 from svc: cumulative values, 18:57:30.250 .. 18:57:32.000 (1.75s) =="; got != want {
		t.Errorf("header\n%s; want\n%s", got, want)
	}
	p.Start, p.End = time.Date(2026, 12, 4, 23, 59, 59, 900_000_000, time.Local), time.Date(2026, 12, 5, 0, 0, 0, 400_000_000, time.Local)
	p.Temporality, p.Part, p.Last = wire.Delta, 1, false
	if got, want := header(p), "== snapshot 1, part 2 (more follow) from svc: delta values, 2026-12-04 23:59:59.900 .. 2026-12-05 00:00:00.400 (500ms) =="; got != want {
		t.Errorf("header\n%s; want\n%s", got, want)
	}
	checkWidth(t, wrapHeader(header(p)))
}

// TestRepeatedSnapshotNotPrinted: a snapshot whose table would be the last
// one's again gets a line saying so instead; any difference, and JSON
// output, prints it.
func TestRepeatedSnapshotNotPrinted(t *testing.T) {
	rows := func(a, b uint64) []wire.Row {
		return []wire.Row{{Values: []string{"x"}, Count: a}, {Values: []string{"y"}, Count: b}}
	}
	count := func(r []wire.Row) wire.View {
		return wire.View{Name: "c", Aggregation: wire.Count, Keys: []string{"k"}, Start: t0, Rows: r}
	}
	gauge := func(v float64) wire.View {
		return wire.View{Name: "g", Aggregation: wire.LastValue, Start: t0, Rows: []wire.Row{{Value: v}}}
	}
	tables := func(out string) int { return strings.Count(out, "VIEW [UNIT]") }

	// Cumulative: the same values (rows in another order) are not
	// printed again; a changed value is.
	again := testPayload(2, count([]wire.Row{rows(5, 7)[1], rows(5, 7)[0]}), gauge(3))
	again.End = t0.Add(1003 * time.Millisecond)
	out := table(t, testPayload(1, count(rows(5, 7)), gauge(3)), again, testPayload(3, count(rows(5, 8)), gauge(3)))
	if tables(out) != 2 || !strings.Contains(out, "\n== snapshot 2 from svc, to 18:57:31.253: the same values as snapshot 1, not printed ==\n") ||
		!strings.Contains(out, "== snapshot 3 from svc: cumulative") {
		t.Errorf("snapshots 1, 2 (the same as 1), 3 (changed): want 2 tables and a line for 2:\n%s", out)
	}
	checkWidth(t, out)
	for name, second := range map[string]*wire.Payload{
		"a gauge changed": testPayload(2, count(rows(5, 7)), gauge(4)),
		"a row more":      testPayload(2, count(append(rows(5, 7), wire.Row{Values: []string{"z"}, Count: 1})), gauge(3)),
		"a view restarted": func() *wire.Payload {
			p := testPayload(2, count(rows(5, 7)), gauge(3))
			p.Views[0].Start = t0.Add(time.Second)
			return p
		}(),
		"another service": func() *wire.Payload {
			p := testPayload(2, count(rows(5, 7)), gauge(3))
			p.Resource[0].Value = "other"
			return p
		}(),
		"a part of a split":  func() *wire.Payload { p := testPayload(2, count(rows(5, 7)), gauge(3)); p.Last = false; return p }(),
		"a NaN, never equal": testPayload(2, count(rows(5, 7)), gauge(math.NaN())),
	} {
		first := testPayload(1, count(rows(5, 7)), gauge(3))
		if name == "a NaN, never equal" {
			first.Views[1] = gauge(math.NaN())
		}
		if out := table(t, first, second); tables(out) != 2 {
			t.Errorf("%s: want both snapshots printed:\n%s", name, out)
		}
	}

	// Delta: nothing recorded (zero counts) and the gauge unchanged: not
	// printed; a count, or a changed gauge, is.
	delta := func(seq uint64, a, b uint64, g float64) *wire.Payload {
		p := testPayload(seq, count(rows(a, b)), gauge(g))
		p.Temporality, p.Start = wire.Delta, t0.Add(time.Duration(seq-1)*time.Second)
		return p
	}
	out = table(t, delta(1, 5, 7, 3), delta(2, 0, 0, 3), delta(3, 0, 1, 3), delta(4, 0, 0, 4))
	if tables(out) != 3 || !strings.Contains(out, "== snapshot 2 from svc, 18:57:31.250 .. 18:57:32.250 (1s): nothing new, not printed ==") {
		t.Errorf("delta snapshots 1, 2 (nothing new), 3 (a count), 4 (a gauge changed): want 3 tables:\n%s", out)
	}

	// JSON lines: every payload, always.
	var buf bytes.Buffer
	pr, _ := newPrinter(&buf, "json")
	for range 2 {
		if err := pr.print(testPayload(1, count(rows(5, 7)))); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(buf.String(), "\n"); n != 2 {
		t.Errorf("%d JSON lines for 2 payloads", n)
	}
}

// TestReceiveFinalSnapshotNotRepeated: an exporter's final snapshot (Stop)
// with nothing recorded since its last export reaches `zerostat receive`,
// which prints one line for it, not the same table again.
func TestReceiveFinalSnapshotNotRepeated(t *testing.T) {
	m := stats.Int64("test/final", "", stats.UnitBytes)
	v := &view.View{Measure: m, Aggregation: view.Distribution(10, 100)}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	stats.Record(context.Background(), m.M(50), m.M(70))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int)
	go func() { done <- run(ctx, []string{"receive", "-listen", addr}, &out, &errOut) }()
	e, err := exporter.New(&exporter.HTTPSink{URL: "http://" + addr + "/"}, exporter.Options{Interval: time.Hour, Resource: exporter.Resource{ServiceName: "final-test"}})
	if err != nil {
		t.Fatal(err)
	}
	// The first export that arrives (the receiver starts listening soon);
	// the receiver prints a payload before it answers.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := e.Export(context.Background())
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer scancel()
	if err := e.Stop(sctx); err != nil { // the final snapshot: the same values
		t.Fatal(err)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("receive exit %d: %s", code, errOut.String())
	}
	s := out.String()
	printed := regexp.MustCompile(`(?m)^== snapshot ([0-9]+) from final-test: cumulative values, `).FindAllStringSubmatch(s, -1)
	note := regexp.MustCompile(`(?m)^== snapshot [0-9]+ from final-test, to [0-9:.]+: the same values as snapshot ([0-9]+), not printed ==$`).FindStringSubmatch(s)
	if len(printed) != 1 || note == nil || note[1] != printed[0][1] || strings.Count(s, "test/final") != 1 {
		t.Errorf("want one table and a line for the final snapshot, the same:\n%s", s)
	}
	checkWidth(t, s)
}
