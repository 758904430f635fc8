package main

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strings"
)

// The scale section: BenchmarkScale (benchmarks/scale_test.go), named
// Scale/series=<n>/sdk=<sdk>/op=<op>/impl=<impl>.

var scaleSizes = []int{1_000, 10_000, 100_000, 1_000_000}

// scaleImpls are the rows, each with the SDK instance it records into.
var scaleImpls = []struct{ impl, sdk string }{
	{"zerostat", "zerostat"}, {"zerostat_handle", "zerostat"}, {"opencensus", "opencensus"},
	{"otel", "otel"}, {"prometheus", "prometheus"}, {"prometheus_labels", "prometheus"},
	{"victoriametrics", "victoriametrics"},
	{"floor_direct", "floor"}, {"floor_dependent", "floor"},
}

// The markers around the section, so that -splice can replace it alone.
const (
	scaleBegin = "<!-- scale:begin (perfdoc) -->"
	scaleEnd   = "<!-- scale:end -->"
)

func scaleName(n int, sdk, op, impl string) string {
	return fmt.Sprintf("Scale/series=%d/sdk=%s/op=%s/impl=%s", n, sdk, op, impl)
}

// scaleValue returns the median of impl's op at n series in unit.
func (r *results) scaleValue(n int, impl, op, unit string) (float64, bool) {
	for _, im := range scaleImpls {
		if im.impl == impl {
			s, ok := r.summary(scaleName(n, im.sdk, op, impl), unit)
			return s.Center, ok
		}
	}
	return 0, false
}

func (r *results) hasScale() bool {
	_, ok := r.scaleValue(scaleSizes[0], "zerostat", "record", "ns/op")
	return ok
}

func sizeLabel(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1_000:
		return fmt.Sprintf("%dk", n/1_000)
	}
	return fmt.Sprint(n)
}

// scaleTables are the tables of the section: title, op, unit, format.
var scaleTables = []struct {
	title, op, unit string
	bytes           bool
}{
	{"Record, one goroutine, series visited in a scattered order (ns/op)", "record", "ns/op", false},
	{"Record, `b.RunParallel` on all cores, same order (ns/op)", "record_parallel", "ns/op", false},
	{"Snapshot/collect, ns per series (zerostat: `Exporter.Export`, snapshot + msgpack; OpenCensus: `RetrieveData`; OTel: `ManualReader.Collect`; Prometheus: `Gather` + text encoding; VictoriaMetrics: `WritePrometheus`)", "collect", "ns/series", false},
	{"Series creation: creating and recording one series (ns)", "lifecycle", "ns/op", false},
	{"Unregister or removal, ns per series: the call and the garbage collection after it (zerostat and OpenCensus: `view.Unregister`; OTel: `MeterProvider.Shutdown`; Prometheus: `Registry.Unregister` + `CounterVec.Reset`; VictoriaMetrics: dropping the `Set`, as its `UnregisterAllMetrics` is quadratic)", "lifecycle", "unregister-ns/series", false},
	{"Unregister or removal, the call alone, ns per series", "lifecycle", "unregister-call-ns/series", false},
	{"Heap per live series (bytes after GC; the benchmark's own context, handle or child per series included)", "lifecycle", "B/series", true},
}

func writeScale(b *bytes.Buffer, r *results, svgName string) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("%s\n## Scale: 1,000 to 1,000,000 live series\n\n", scaleBegin)
	w("One counter keyed by 2 tags, every series created and recorded once before timing; the record ops visit the series in a fixed random permutation (benchmarks/scale_test.go, `BenchmarkScale`, run by `make bench` with `-count=6 -benchtime=100ms`; not in the gate). `zerostat` is `stats.Record` with a context per series built by `tag.New` from `context.Background()` and kept, recorded through twice more before the record ops (untimed, as a service records through what it keeps), so that its map records into a cell of its own (internal/core/mapcell.go); `zerostat_handle` a `stats.Int64Handle` per series; `prometheus` the kept child's `Inc`, `prometheus_labels` `WithLabelValues(...).Inc`; `otel` `Add` with a precomputed attribute set; `victoriametrics` a kept `*Counter`. The two floors are no SDK: `floor_direct` is one atomic add to a 64-byte cell whose address is kept in a slice (the shape of a handle's, a kept context's with its map's cell, or a kept child's record), `floor_dependent` the same add to a cell whose address is first read from another object of its own, scattered too (the shape of a record through a context that reads its series from the context's cache slot: one recorded into fewer than 3 times, built from another parent, or recording into several views).\n\n")
	if r.scaleCPU != "" {
		w("Measured on %s (the section can be regenerated alone, by `make bench-scale`, on another machine than the rest of this page).\n\n", r.scaleCPU)
	}
	w("![cost against live series, log-log](%s)\n\n", svgName)
	for _, t := range scaleTables {
		w("### %s\n\n| impl |", t.title)
		for _, n := range scaleSizes {
			w(" %s |", sizeLabel(n))
		}
		w("\n|---|%s\n", strings.Repeat("---:|", len(scaleSizes)))
		for _, im := range scaleImpls {
			if (t.op != "record" && t.op != "record_parallel") && im.impl != im.sdk {
				continue // one instance, one row
			}
			seen := false
			var row strings.Builder
			for _, n := range scaleSizes {
				v, ok := r.scaleValue(n, im.impl, t.op, t.unit)
				switch {
				case !ok:
					row.WriteString(" |")
				case t.bytes:
					seen = true
					fmt.Fprintf(&row, " %.0f |", v)
				default:
					seen = true
					fmt.Fprintf(&row, " %s |", fmtNs(v))
				}
			}
			if seen {
				w("| %s |%s\n", im.impl, row.String())
			}
		}
		w("\n")
	}

	w("### Scale targets (issue 18), measured in this run\n\n| target | measured | met |\n|---|---|---|\n")
	target := func(desc string, v float64, ok bool, limit float64, unit string) {
		if !ok {
			w("| %s | not measured | |\n", desc)
			return
		}
		mark := "yes"
		if v > limit {
			mark = "**no**"
		}
		w("| %s | %.2f%s | %s |\n", desc, v, unit, mark)
	}
	ratio := func(n int, a, bImpl, op, unit string) (float64, bool) {
		x, ok1 := r.scaleValue(n, a, op, unit)
		y, ok2 := r.scaleValue(n, bImpl, op, unit)
		return x / y, ok1 && ok2 && y > 0
	}
	v, ok := ratio(100_000, "zerostat", "prometheus", "record", "ns/op")
	target("`stats.Record` at 100k series ≤ 3× Prometheus's kept child", v, ok, 3, "×")
	for _, n := range scaleSizes {
		v, ok := ratio(n, "zerostat_handle", "prometheus", "record", "ns/op")
		target("handle at "+sizeLabel(n)+" series ≤ 1.3× Prometheus's kept child", v, ok, 1.3, "×")
	}
	x, ok1 := r.scaleValue(1_000_000, "zerostat", "collect", "ns/series")
	y, ok2 := r.scaleValue(10_000, "zerostat", "collect", "ns/series")
	target("export ns per series at 1M ≤ 2× at 10k", x/y, ok1 && ok2, 2, "×")
	for _, n := range scaleSizes {
		v, ok := r.scaleValue(n, "zerostat", "lifecycle", "unregister-call-ns/series")
		target("`view.Unregister` call at "+sizeLabel(n)+" ≤ 1 µs per series", v/1e3, ok, 1, " µs")
	}
	v, ok = r.scaleValue(1_000_000, "zerostat", "lifecycle", "unregister-call-ns/series")
	target("`view.Unregister` call of 1M series under a second", v*1e6/1e9, ok, 1, " s")
	v, ok = r.scaleValue(1_000_000, "zerostat", "lifecycle", "unregister-ns/series")
	target("`view.Unregister` + GC of 1M series under a second", v*1e6/1e9, ok, 1, " s")
	hx, ok1 := r.scaleValue(1_000_000, "zerostat", "lifecycle", "B/series")
	hy, ok2 := r.scaleValue(10_000, "zerostat", "lifecycle", "B/series")
	target("heap per series at 1M ≤ 1.1× at 10k (flat)", hx/hy, ok1 && ok2, 1.1, "×")
	floors := func(n int) {
		var parts []string
		for _, c := range []struct{ impl, floor, what string }{
			{"zerostat", "floor_direct", "`stats.Record` through a kept context (its map's own cell)"},
			{"zerostat_handle", "floor_direct", "a handle"},
			{"prometheus", "floor_direct", "Prometheus's kept child"},
		} {
			if v, ok := ratio(n, c.impl, c.floor, "record", "ns/op"); ok {
				parts = append(parts, fmt.Sprintf("%s %.2f× `%s`", c.what, v, c.floor))
			}
		}
		if len(parts) > 0 {
			w("\nAgainst the floor of its shape at %s series (one goroutine): %s.\n", sizeLabel(n), strings.Join(parts, ", "))
		}
	}
	floors(100_000)
	floors(1_000_000)
	w("\nUnregister + GC per series includes a `runtime.GC()` of the whole process heap, about a millisecond whatever the view's size: at 1k series that alone is 1 µs per series, for every SDK.\n\n%s\n\n", scaleEnd)
}

// scalePalette adds the rows the record chart does not have.
var scalePalette = map[string]string{
	"zerostat_handle": "#56b4e9", "prometheus_labels": "#f0e442", "victoriametrics": "#009e73",
	"floor_direct": "#bbbbbb", "floor_dependent": "#777777",
}

func scaleColour(impl string) string {
	if c, ok := scalePalette[impl]; ok {
		return c
	}
	return palette[impl]
}

// drawScale draws three log-log panels of cost against live series:
// record ns/op, collect ns per series, unregister ns per series.
func drawScale(r *results) []byte {
	panels := []struct{ title, op, unit string }{
		{"record, ns/op", "record", "ns/op"},
		{"snapshot/collect, ns per series", "collect", "ns/series"},
		{"unregister + GC, ns per series", "lifecycle", "unregister-ns/series"},
	}
	const (
		panelW, panelH = 260, 220
		left, gap, top = 50, 50, 50
		lo, hi         = 1.0, 1e5 // ns
	)
	width := left + len(panels)*(panelW+gap)
	height := top + panelH + 40 + 18*((len(scaleImpls)+3)/4) + 10
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14" font-weight="bold">Cost against live series (median of 6 runs, log-log)</text>`+"\n")
	xs := func(n int) float64 { return float64(panelW) * math.Log10(float64(n)/1e3) / 3 }
	ys := func(v float64) float64 {
		v = math.Min(math.Max(v, lo), hi)
		return float64(panelH) * (1 - math.Log10(v/lo)/math.Log10(hi/lo))
	}
	for p, pn := range panels {
		x0 := float64(left + p*(panelW+gap))
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" font-weight="bold">%s</text>`+"\n", x0, top-12, html.EscapeString(pn.title))
		for t := lo; t <= hi; t *= 10 {
			y := float64(top) + ys(t)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x0, y, x0+panelW, y)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end" fill="#666">%s</text>`+"\n", x0-4, y+4, fmtNs(t))
		}
		for _, n := range scaleSizes {
			x := x0 + xs(n)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, top, x, top+panelH)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#666">%s</text>`+"\n", x, top+panelH+14, sizeLabel(n))
		}
		for _, im := range scaleImpls {
			if pn.op != "record" && im.impl != im.sdk {
				continue
			}
			var pts []string
			for _, n := range scaleSizes {
				if v, ok := r.scaleValue(n, im.impl, pn.op, pn.unit); ok {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", x0+xs(n), float64(top)+ys(v)))
				}
			}
			if len(pts) == 0 {
				continue
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"><title>%s</title></polyline>`+"\n",
				strings.Join(pts, " "), scaleColour(im.impl), html.EscapeString(im.impl))
			for _, pt := range pts {
				xy := strings.Split(pt, ",")
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2.5" fill="%s"/>`+"\n", xy[0], xy[1], scaleColour(im.impl))
			}
		}
	}
	ly := top + panelH + 40
	for i, im := range scaleImpls {
		x := 10 + (i%4)*190
		y := ly + (i/4)*18
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", x, y-10, scaleColour(im.impl), x+16, y, html.EscapeString(im.impl))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}
