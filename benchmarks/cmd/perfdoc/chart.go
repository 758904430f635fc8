package main

import (
	"bytes"
	"fmt"
	"html"
	"math"
)

// palette colours the implementations (colour-blind friendly).
var palette = map[string]string{
	"floor": "#999999", "zerostat": "#0072b2", "opencensus": "#d55e00", "prometheus": "#e69f00",
	"prometheus_handle": "#f0e442", "victoriametrics": "#009e73", "victoriametrics_handle": "#56b4e9",
	"otel": "#cc79a7", "otel_attrset": "#882255",
	"zerostat_handle": "#003f66", "zerostat_otel": "#44aa99", "zerostat_otel_attrset": "#117733",
}

// drawChart draws two panels, ns/op and allocs/op (+1, so zero shows), as
// grouped horizontal bars per scenario on a log scale.
func drawChart(r *results) []byte {
	var cols []string
	for _, im := range impls {
		for _, sc := range scenarios {
			if _, ok := r.summary("Record/scenario="+sc+"/impl="+im, "ns/op"); ok {
				cols = append(cols, im)
				break
			}
		}
	}
	const (
		labelW = 190
		panelW = 330
		gap    = 40
		barH   = 7
		top    = 60
	)
	groupH := barH*len(cols) + 12
	height := top + groupH*len(scenarios) + 30 + 18*((len(cols)+3)/4)
	width := labelW + 2*panelW + gap + 20
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold">Record path: zerostat and its peers (median of 6 runs, log scale)</text>`+"\n", 10)
	panels := []struct {
		title string
		unit  string
		plus  float64
		lo    float64
		hi    float64
	}{
		{"ns/op", "ns/op", 0, 1, 1e4},
		{"allocs/op (+1)", "allocs/op", 1, 1, 100},
	}
	for p, pn := range panels {
		x0 := labelW + p*(panelW+gap)
		fmt.Fprintf(&b, `<text x="%d" y="45" font-weight="bold">%s</text>`+"\n", x0, html.EscapeString(pn.title))
		scale := func(v float64) float64 {
			v = math.Max(v+pn.plus, pn.lo)
			return float64(panelW) * math.Log10(v/pn.lo) / math.Log10(pn.hi/pn.lo)
		}
		for t := pn.lo; t <= pn.hi; t *= 10 {
			x := float64(x0) + scale(t-pn.plus)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, top-5, x, top+groupH*len(scenarios))
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#666">%g</text>`+"\n", x, top+groupH*len(scenarios)+14, t-pn.plus)
		}
		for si, sc := range scenarios {
			y := top + si*groupH
			if p == 0 {
				fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelW-8, y+groupH/2, html.EscapeString(sc))
			}
			for ci, im := range cols {
				s, ok := r.summary("Record/scenario="+sc+"/impl="+im, pn.unit)
				if !ok {
					continue
				}
				w := scale(s.Center)
				fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s %s: %g %s</title></rect>`+"\n",
					x0, y+ci*barH, math.Max(w, 1), barH-1, palette[im], html.EscapeString(sc), im, s.Center, pn.unit)
			}
		}
	}
	ly := top + groupH*len(scenarios) + 30
	for i, im := range cols {
		x := 10 + (i%4)*210
		y := ly + (i/4)*18
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", x, y-10, palette[im], x+16, y, html.EscapeString(im))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}
