package main

import (
	"bytes"
	"fmt"
)

// The Collector comparison (issue 17): the msgpack receiver against the
// otlp receiver, from the collector module's benchmarks, which need the
// built Collector (scripts/build-collector.sh): collector/e2e's
// BenchmarkCollectorIngest (CollectorIngest/<body>, units wire-bytes/op
// and collector-ns/op) and collector/zerostatreceiver's BenchmarkDecode
// (Decode/<body>). `make bench` runs them (bench-collector-run);
// `make bench-collector` runs them alone and splices this section in.

// The markers around the section, so that -splice-collector can replace
// it alone.
const (
	collectorBegin = "<!-- collector:begin (perfdoc) -->"
	collectorEnd   = "<!-- collector:end -->"
)

// collectorBodies are the table's columns: the body names, which
// BenchmarkCollectorIngest and BenchmarkDecode share.
var collectorBodies = []struct{ body, title, decodeTitle string }{
	{"msgpack2", "msgpack version 2 → zerostat receiver", "msgpack version 2, decoded and converted"},
	{"msgpack", "msgpack version 1", "msgpack version 1, decoded and converted"},
	{"otlp", "OTLP → otlp receiver", "OTLP, unmarshalled"},
}

func (r *results) hasCollector() bool {
	_, ok := r.summary("CollectorIngest/otlp/plain", "wire-bytes/op")
	return ok
}

func fmtKiB(v float64) string { return fmt.Sprintf("%.1f KiB", v/1024) }

// writeCollector writes the section from the results, or says how to
// measure it when they have none.
func writeCollector(b *bytes.Buffer, r *results) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("%s\n## OpenTelemetry Collector: msgpack receiver versus otlp receiver (10,000 series)\n\n", collectorBegin)
	if !r.hasCollector() {
		w("Not measured in this run: `make bench-collector` measures it (it builds the Collector) and writes this section.\n\n%s\n\n", collectorEnd)
		return
	}
	w("`collector/e2e`'s `BenchmarkCollectorIngest` sends one cumulative snapshot of 10,000 series (`collector/internal/ingesttest`: 2,500 each of a Count and a 10-bound Distribution over a Float64 measure, a Sum and a LastValue over an Int64 one, two tags) to the built Collector, as msgpack (wire format versions 2 and 1) to the zerostat receiver and as zerostat's OTLP to the `otlp` receiver, all into the `debug` exporter, and reads the Collector process's CPU time from /proc around each run; gzip at BestSpeed, the exporters' default. The same workload gives the same pdata by every path (docs/collector.md, \"Same pdata\"). benchstat medians of `-count 6 -benchtime 50x`:\n\n")
	w("| per 10,000 series |")
	for _, c := range collectorBodies {
		w(" %s |", c.title)
	}
	w(" version 2 / OTLP | target |\n|---|---|---|---|---|---|\n")
	row := func(what, body, unit string, format func(float64, string) string, target float64) {
		w("| %s |", what)
		var v2, ot float64
		for _, c := range collectorBodies {
			s, ok := r.summary("CollectorIngest/"+c.body+"/"+body, unit)
			if !ok {
				w(" |")
				continue
			}
			w(" %s |", format(s.Center, pct(s)))
			switch c.body {
			case "msgpack2":
				v2 = s.Center
			case "otlp":
				ot = s.Center
			}
		}
		if v2 > 0 && ot > 0 {
			met := ""
			if v2/ot > target {
				met = " (missed)"
			}
			w(" %.2f | ≤ %g%s |\n", v2/ot, target, met)
		} else {
			w(" | ≤ %g |\n", target)
		}
	}
	bytesCell := func(v float64, _ string) string { return fmtKiB(v) }
	timeCell := func(v float64, p string) string { return fmtNs(v) + p }
	row("bytes on the wire, plain", "plain", "wire-bytes/op", bytesCell, 0.5)
	row("bytes on the wire, gzip", "gzip", "wire-bytes/op", bytesCell, 0.5)
	row("Collector CPU, plain body", "plain", "collector-ns/op", timeCell, 1)
	row("Collector CPU, gzip body", "gzip", "collector-ns/op", timeCell, 1)
	w("\nVersion 2 of the wire format (docs/wire-format.md, \"Version 2\"; `exporter.Options.WireVersion: 2`) lays each view's rows out as columns; version 1, rows as arrays, is the exporter's default for readers written before it. Version 1's gzip bytes are about 0.9 of OTLP's: both bodies compress to about what their values carry once OTLP's points follow each other in creation order (issue 18), and rows that interleave tag refs, counts and floats leave gzip little to share. Columns put the refs of one key side by side, and the counts, and the floats of one field.\n\n")
	if _, ok := r.summary("Decode/otlp", "ns/op"); ok {
		w("In process (`zerostatreceiver`'s `BenchmarkDecode`, the same snapshot), the receivers' own work: msgpack decoded and converted to pdata, OTLP unmarshalled to pdata.\n\n| body | time | B/op | allocs/op |\n|---|---|---|---|\n")
		for _, c := range collectorBodies {
			n := "Decode/" + c.body
			t, ok := r.summary(n, "ns/op")
			if !ok {
				continue
			}
			by, _ := r.summary(n, "B/op")
			al, _ := r.summary(n, "allocs/op")
			w("| %s | %s%s | %.2f MiB | %.0f |\n", c.decodeTitle, fmtNs(t.Center), pct(t), by.Center/(1<<20), al.Center)
		}
		w("\n")
	}
	w("Before issue 17's changes (the same bodies, sizes only): msgpack plain 148.2 KiB and gzip 65.0 KiB; OTLP plain 1,204 KiB, gzip 146.8 KiB, then 111.7 KiB once a cumulative point started at its view's registration, then 76.6 KiB once snapshots walked series in creation order (issue 18).\n\n")
	w("```sh\nmake bench-collector   # or, one at a time:\ncd collector && go test -run '^$' -bench CollectorIngest -benchtime 50x -count 6 ./e2e\ncd collector && go test -run '^$' -bench Decode -benchtime 50x -count 6 ./zerostatreceiver\n```\n\n%s\n\n", collectorEnd)
}

// spliceSection replaces the section between begin and end in doc with
// sec, or inserts sec before the first of before found (at the end if
// none).
func spliceSection(doc, sec []byte, begin, end string, before ...string) []byte {
	if i := bytes.Index(doc, []byte(begin)); i >= 0 {
		if j := bytes.Index(doc[i:], []byte(end)); j >= 0 {
			e := i + j + len(end)
			for e < len(doc) && doc[e] == '\n' {
				e++
			}
			return append(append(append([]byte(nil), doc[:i]...), sec...), doc[e:]...)
		}
	}
	at := len(doc)
	for _, m := range before {
		if i := bytes.Index(doc, []byte(m)); i >= 0 {
			at = i
			break
		}
	}
	return append(append(append([]byte(nil), doc[:at]...), sec...), doc[at:]...)
}
