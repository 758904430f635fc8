package main

import (
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zerostat/zerostat/exporter/wire"
	quant "github.com/zerostat/zerostat/internal/quantile"
)

// The tables of demo, receive and decode -format table. Every line is at
// most maxWidth columns (counted in runes):
//
//	VIEW [UNIT]                                                               VALUE
//	  TAGS
//	demo/answered                                                              1128
//	demo/latency [ms]                 count    mean     min     max    ~p50    ~p99
//	  http.route=/health                125   891us  40.2us  2.67ms  1.28ms     2ms
//	demo/requests
//	  http.method=GET,http.route=/health,http.status=200                        125
//	http.server.request.duration [s]  count    mean     min     max    ~p50    ~p99
//	  error.type=500,http.request.method=GET,http.response.status_code=500,http.route=/orders,
//	    url.scheme=http
//	                                      2  11.9ms  4.86ms    19ms     5ms  18.8ms
//	~p50, ~p99: estimates, interpolated within the bucket that holds them; the other columns are exact
//
// A view's line names it and its unit (not a count's: its values are
// counts); its rows follow, indented by 2, one per tag set, with the value
// (a distribution's count, mean, min, max and estimated 50th and 99th
// percentiles, an exponential distribution's alike, estimated from its
// exponential buckets) right-aligned. A view of one row without tags has its
// value on its own line. A tag set too long to share its line with the
// values gets a line of its own, the values the next; a tag set too long
// for a line is wrapped after a comma, and a single tag too long for a
// line is cut at the line's end: the rest continues on the next line,
// indented by 4. Nothing is truncated. (A view name or header too long
// for a line is wrapped likewise.)
//
// A distribution's mean, min, max and estimates, in a view whose unit is
// one of time (ns, us, ms, s, min, h), are printed as durations with their
// own unit (858us, 1.26ms), so that views in seconds and in milliseconds
// read alike; in other views, in the view's unit, with 3 significant
// digits (in full from 1000 to a million).
const maxWidth = 100

// maxTableRows is how many rows of a view a table prints: the first in
// sorted order, then a line saying how many more there are (-format json
// prints every row). A table is for people; laid out whole, a payload at
// the receiver's caps (690,000 rows) took the printer over 300 MiB.
const maxTableRows = 1000

// legend explains the estimate columns, after a table that has them.
const legend = "~p50, ~p99: estimates, interpolated within the bucket that holds them; the other columns are exact"

var distHeadings = []string{"count", "mean", "min", "max", "~p50", "~p99"}

// tableLine is one entry of a table: a view's line or a row's.
type tableLine struct {
	indent int      // 0 for a view, 2 for a row
	left   string   // the view's name and unit, or the row's tags
	breaks string   // the runes left may be wrapped after
	cells  []string // right-aligned: nil, one value, or a distribution's six (or their headings)
}

// writePayloadTable prints a payload's views (only those show accepts;
// nil: all) and a count of the others.
func writePayloadTable(w io.Writer, p *wire.Payload, show func(string) bool) {
	lines := []tableLine{{left: "VIEW [UNIT]", cells: []string{"VALUE"}}, {indent: 2, left: "TAGS"}}
	hidden, dists, summaries := 0, false, false
	for i := range p.Views {
		v := &p.Views[i]
		if show != nil && !show(v.Name) {
			hidden++
			continue
		}
		dist := v.Aggregation == wire.Distribution || v.Aggregation == wire.ExponentialDistribution
		name := tableLine{left: v.Name, breaks: "/._"}
		// A count's unit is not its measure's (the view's unit).
		if u := v.Unit; u != "" && u != "1" && v.Aggregation != wire.Count {
			name.left += " [" + u + "]"
		}
		switch {
		case len(v.Rows) == 0 && v.Overflow == nil:
			name.cells = []string{"(no data)"}
			lines = append(lines, name)
			continue
		case dist:
			name.cells = distHeadings
			dists = true
		case v.Aggregation == wire.Summary: // summary.go
			name.cells = summaryHeadings
			summaries = true
		case len(v.Rows) == 1 && v.Overflow == nil && formatTags(v.Keys, v.Rows[0].Values) == "-":
			name.cells = rowCells(v, &v.Rows[0], nil) // the value on the view's line
			lines = append(lines, name)
			continue
		}
		lines = append(lines, name)
		// Rows come in the exporter's (hash) order; print them sorted.
		rows := sortedRows(v)
		for _, i := range rows[:min(len(rows), maxTableRows)] {
			r := &v.Rows[i]
			lines = append(lines, tableLine{indent: 2, left: formatTags(v.Keys, r.Values), breaks: ",", cells: cellsAt(v, i)})
		}
		if more := len(rows) - maxTableRows; more > 0 {
			lines = append(lines, tableLine{indent: 2, left: fmt.Sprintf("(%d more rows: -format json prints every row)", more)})
		}
		if v.Overflow != nil {
			lines = append(lines, tableLine{indent: 2, left: "otel.metric.overflow=true", breaks: ",", cells: rowCells(v, v.Overflow, v.OverflowExp)})
		}
	}
	writeLines(w, lines)
	if dists {
		fmt.Fprintln(w, legend)
	}
	if summaries {
		fmt.Fprintln(w, summaryLegend)
	}
	if hidden > 0 {
		fmt.Fprintf(w, "(%d more views: /metrics, /snapshot and /debug/stats show every view)\n", hidden)
	}
}

// sortedRows returns the indices of v's rows, ordered by their tag values.
func sortedRows(v *wire.View) []int {
	rows := make([]int, len(v.Rows))
	for j := range v.Rows {
		rows[j] = j
	}
	sort.Slice(rows, func(a, b int) bool { return slices.Compare(v.Rows[rows[a]].Values, v.Rows[rows[b]].Values) < 0 })
	return rows
}

// expAt returns the exponential buckets of row i of an exponential
// distribution view, or nil.
func expAt(v *wire.View, i int) *wire.ExpHistogram {
	if i < len(v.Exp) {
		return &v.Exp[i]
	}
	return nil
}

// writeLines lays the lines out: the cells right-aligned at one edge, as
// far right as the widest line that fits needs (at most maxWidth), and
// the columns of the distributions aligned with each other.
func writeLines(w io.Writer, lines []tableLine) {
	var cols [6]int
	for _, l := range lines {
		if len(l.cells) == len(cols) {
			for i, c := range l.cells {
				cols[i] = max(cols[i], width(c))
			}
		}
	}
	cellsWidth := func(l tableLine) int {
		switch len(l.cells) {
		case 0:
			return 0
		case len(cols):
			n := 2 * (len(cols) - 1)
			for _, c := range cols {
				n += c
			}
			return n
		}
		return width(l.cells[0])
	}
	edge := 0 // the cells' right edge
	for _, l := range lines {
		if cw := cellsWidth(l); cw > 0 {
			edge = max(edge, cw)
			if n := l.indent + width(l.left) + 2 + cw; n <= maxWidth {
				edge = max(edge, n)
			}
		}
	}
	var b strings.Builder
	for _, l := range lines {
		left := strings.Repeat(" ", l.indent) + l.left
		if len(l.cells) == 0 {
			writeWrapped(&b, left, l.indent+2, l.breaks)
			continue
		}
		var cells string
		if len(l.cells) == len(cols) {
			parts := make([]string, len(cols))
			for i, c := range l.cells {
				parts[i] = pad(c, cols[i])
			}
			cells = strings.Join(parts, "  ")
		} else {
			cells = l.cells[0]
		}
		if width(left)+2+width(cells) <= edge {
			b.WriteString(left + pad(cells, edge-width(left)) + "\n")
			continue
		}
		writeWrapped(&b, left, l.indent+2, l.breaks)
		b.WriteString(pad(cells, edge) + "\n")
	}
	io.WriteString(w, b.String())
}

// writeWrapped writes s in lines of at most maxWidth runes: broken after
// a rune of breaks where one is near enough, else at the width; each
// continuation line is indented by cont.
func writeWrapped(b *strings.Builder, s string, cont int, breaks string) {
	for _, l := range wrap(s, cont, breaks) {
		b.WriteString(l + "\n")
	}
}

func wrap(s string, cont int, breaks string) []string {
	var out []string
	for first := true; ; first = false {
		if !first {
			s = strings.Repeat(" ", cont) + s
		}
		if width(s) <= maxWidth {
			return append(out, s)
		}
		cut := runeOffset(s, maxWidth) // the most that fits
		start := cont + 1              // never break into the indent
		if first {
			start = len(s) - len(strings.TrimLeft(s, " ")) + 1
		}
		next := cut
		if i := strings.LastIndexAny(s[:cut], breaks); breaks != "" && i >= start {
			r, n := utf8.DecodeRuneInString(s[i:])
			cut, next = i+n, i+n // after the break rune
			if r == ' ' {
				cut = i // a space is not kept at the end of a line
			}
		}
		out = append(out, s[:cut])
		s = s[next:]
	}
}

// runeOffset returns the byte offset of rune n of s (len(s) if s is
// shorter).
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

func width(s string) int { return utf8.RuneCountInString(s) }

// pad right-aligns s in n columns.
func pad(s string, n int) string {
	if d := n - width(s); d > 0 {
		return strings.Repeat(" ", d) + s
	}
	return s
}

func formatTags(keys, values []string) string {
	var tags []string
	for i, val := range values {
		if val != "" {
			tags = append(tags, keys[i]+"="+val)
		}
	}
	if len(tags) == 0 {
		return "-"
	}
	return strings.Join(tags, ",")
}

// rowCells returns a row's value, or a distribution's six columns (an
// exponential distribution's from r and e, its buckets).
func rowCells(v *wire.View, r *wire.Row, e *wire.ExpHistogram) []string {
	switch v.Aggregation {
	case wire.Count:
		return []string{strconv.FormatUint(r.Count, 10)}
	case wire.Sum, wire.UpDownSum:
		return []string{formatFloat(r.Sum)}
	case wire.LastValue:
		return []string{formatFloat(r.Value)}
	}
	f := statFormatter(v.Unit)
	mean := math.NaN()
	if r.Count > 0 {
		mean = r.Mean()
	}
	mn, mx := r.Min, r.Max
	if r.Count == 0 && mn > mx { // no value: +Inf and -Inf
		mn, mx = math.NaN(), math.NaN()
	}
	p50, p99 := quantile(v.Bounds, r, 0.5), quantile(v.Bounds, r, 0.99)
	if v.Aggregation == wire.ExponentialDistribution {
		p50, p99 = expQuantile(r, e, 0.5), expQuantile(r, e, 0.99)
	}
	return []string{strconv.FormatUint(r.Count, 10), f(mean), f(mn), f(mx), f(p50), f(p99)}
}

// secondsPer is the length in seconds of each unit of time a view may
// have (UCUM's, as stats.UnitMilliseconds and stats.UnitSeconds).
var secondsPer = map[string]float64{"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "min": 60, "h": 3600}

// statFormatter returns how a distribution's statistics in unit print:
// as durations for a unit of time, else with 3 significant digits (sig3).
func statFormatter(unit string) func(float64) string {
	if scale, ok := secondsPer[unit]; ok {
		return func(x float64) string { return formatSeconds(x * scale) }
	}
	return func(x float64) string {
		if math.IsNaN(x) {
			return "-"
		}
		return sig3(x)
	}
}

// formatSeconds prints a duration of s seconds with 3 significant digits
// in ns, us, ms or s (ASCII "us", so that a rune is a column); "-" for
// NaN (an empty distribution's mean or estimate).
func formatSeconds(s float64) string {
	a := math.Abs(s)
	switch {
	case math.IsNaN(s):
		return "-"
	case s == 0 || math.IsInf(s, 0):
		return strconv.FormatFloat(s, 'g', -1, 64)
	case a < 1e-6:
		return sig3(s*1e9) + "ns"
	case a < 1e-3:
		return sig3(s*1e6) + "us"
	case a < 1:
		return sig3(s*1e3) + "ms"
	}
	return sig3(s) + "s"
}

// sig3 prints x with 3 significant digits, but in full from 1000 up to a
// million (4321, not 4.32e+03).
func sig3(x float64) string {
	if a := math.Abs(x); a >= 1000 && a < 1e6 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// formatFloat prints integral values in full and others with 6 digits.
func formatFloat(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// quantile estimates the q-quantile of a distribution row from its buckets.
func quantile(bounds []float64, r *wire.Row, q float64) float64 {
	return quant.Estimate(bounds, r.Buckets, r.Min, r.Max, q)
}

// expQuantile estimates the q-quantile of an exponential distribution
// row from its buckets, walked in value order (the negative ones from the
// highest index down, the zero bucket, the positive ones), by linear
// interpolation inside the bucket that holds it, with the bucket's edges
// clamped to the row's min and max, as quantile does for a distribution.
// NaN for an empty row (or e nil).
func expQuantile(r *wire.Row, e *wire.ExpHistogram, q float64) float64 {
	if e == nil || r.Count == 0 {
		return math.NaN()
	}
	rank := q * float64(r.Count)
	var cum float64
	// at interpolates in [lo, hi] when the rank falls in a bucket of c.
	at := func(lo, hi float64, c uint64) (float64, bool) {
		if c == 0 || cum+float64(c) < rank {
			cum += float64(c)
			return 0, false
		}
		lo, hi = math.Max(lo, r.Min), math.Min(hi, r.Max)
		if lo > hi { // min or max out of the bucket (count 0 rows, bad input)
			lo, hi = hi, lo
		}
		return lo + (hi-lo)*(rank-cum)/float64(c), true
	}
	neg := e.Negative
	for j := len(neg.Counts) - 1; j >= 0; j-- {
		lower, upper := e.Bounds(neg.Offset + int32(j))
		if x, ok := at(-upper, -lower, neg.Counts[j]); ok {
			return x
		}
	}
	if x, ok := at(0, 0, e.ZeroCount); ok {
		return x
	}
	for j, c := range e.Positive.Counts {
		lower, upper := e.Bounds(e.Positive.Offset + int32(j))
		if x, ok := at(lower, upper, c); ok {
			return x
		}
	}
	return r.Max
}

// header names a payload: "snapshot N" is the exporter's N-th export
// (its sequence number); a snapshot too large for one payload comes in
// parts, numbered from 1 here. Cumulative values count from Start; delta
// values from the previous export. The interval is printed to the
// millisecond, with its length (the difference of the times printed);
// with the dates when it spans midnight.
func header(pl *wire.Payload) string {
	part := ""
	if pl.Part > 0 || !pl.Last {
		part = fmt.Sprintf(", part %d", pl.Part+1)
		if !pl.Last {
			part += " (more follow)"
		}
	}
	return fmt.Sprintf("== snapshot %d%s from %s: %s values, %s ==", pl.Sequence, part, service(pl), pl.Temporality, interval(pl.Start, pl.End))
}

// interval prints "15:04:05.000 .. 15:04:06.500 (1.5s)".
func interval(start, end time.Time) string {
	start, end = start.Truncate(time.Millisecond), end.Truncate(time.Millisecond)
	layout := "15:04:05.000"
	if y, m, d := start.Date(); !start.IsZero() && (y != end.Year() || m != end.Month() || d != end.Day()) {
		layout = "2006-01-02 15:04:05.000"
	}
	return fmt.Sprintf("%s .. %s (%v)", start.Format(layout), end.Format(layout), end.Sub(start))
}

// wrapHeader wraps a header longer than a line (a long service name)
// after a space.
func wrapHeader(h string) string {
	return strings.Join(wrap(h, 3, " "), "\n")
}

// repeats reports whether a table of p would show nothing that the table
// of prev, the last one printed, did not; the printer then prints a line
// saying so instead. Both must be whole snapshots (one part each) of the
// same resource and temporality, and the views shown (those show accepts,
// in the same order, as many hidden) must be:
//
//   - cumulative: identical: the same names, units, aggregations, keys,
//     bounds and starts, and the same rows (tag values, and every value
//     the wire carries: counts, sums, last values, min, max, sum of
//     squared deviations, bucket counts, an exponential distribution's
//     scale, zero count and buckets, a summary's quantile values; the
//     overflow row; row starts),
//     compared exactly, not as printed. Only the end time and sequence
//     number differ. A NaN is never equal, so such a snapshot is printed.
//   - delta: p carries nothing recorded since the previous export: every
//     row of its count, sum and distribution views has a zero count and a
//     zero sum, and its last-value, up-down-sum and summary views
//     (totals, not deltas) are identical to prev's as above.
func repeats(prev, p *wire.Payload, show func(string) bool) bool {
	if prev == nil || !whole(prev) || !whole(p) || prev.Temporality != p.Temporality ||
		!reflect.DeepEqual(prev.Resource, p.Resource) {
		return false
	}
	a, aHidden := shownViews(prev, show)
	b, bHidden := shownViews(p, show)
	if aHidden != bHidden {
		return false
	}
	if p.Temporality == wire.Cumulative {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameView(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	var aTotals, bTotals []*wire.View
	for _, v := range a {
		if v.Aggregation == wire.LastValue || v.Aggregation == wire.UpDownSum || v.Aggregation == wire.Summary {
			aTotals = append(aTotals, v)
		}
	}
	for _, v := range b {
		switch v.Aggregation {
		case wire.LastValue, wire.UpDownSum, wire.Summary:
			bTotals = append(bTotals, v)
		default:
			for i := range v.Rows {
				if !emptyDelta(&v.Rows[i]) {
					return false
				}
			}
			if v.Overflow != nil && !emptyDelta(v.Overflow) {
				return false
			}
		}
	}
	if len(aTotals) != len(bTotals) {
		return false
	}
	for i := range aTotals {
		if !sameView(aTotals[i], bTotals[i]) {
			return false
		}
	}
	return true
}

func whole(p *wire.Payload) bool { return p.Part == 0 && p.Last }

func shownViews(p *wire.Payload, show func(string) bool) (views []*wire.View, hidden int) {
	for i := range p.Views {
		if show != nil && !show(p.Views[i].Name) {
			hidden++
			continue
		}
		views = append(views, &p.Views[i])
	}
	return views, hidden
}

func emptyDelta(r *wire.Row) bool { return r.Count == 0 && r.Sum == 0 }

// sameView reports whether two views hold the same metadata and rows, in
// any row order; see repeats.
func sameView(a, b *wire.View) bool {
	if a.Name != b.Name || a.Unit != b.Unit || a.Aggregation != b.Aggregation || a.Int != b.Int ||
		!a.Start.Equal(b.Start) || !slices.Equal(a.Keys, b.Keys) || !slices.Equal(a.Bounds, b.Bounds) ||
		len(a.Rows) != len(b.Rows) || (a.Overflow == nil) != (b.Overflow == nil) {
		return false
	}
	if a.Overflow != nil && (!sameRow(a.Overflow, b.Overflow) || !sameExp(a.OverflowExp, b.OverflowExp) ||
		!a.OverflowRowStart().Equal(b.OverflowRowStart())) {
		return false
	}
	type row struct {
		r     *wire.Row
		e     *wire.ExpHistogram
		start time.Time
		i     int // the row's index (a summary's quantile values: sameQuantiles)
	}
	sorted := func(v *wire.View) []row {
		rows := make([]row, len(v.Rows))
		for i := range v.Rows {
			rows[i] = row{&v.Rows[i], expAt(v, i), v.RowStart(i), i}
		}
		slices.SortFunc(rows, func(x, y row) int { return slices.Compare(x.r.Values, y.r.Values) })
		return rows
	}
	ra, rb := sorted(a), sorted(b)
	for i := range ra {
		if !slices.Equal(ra[i].r.Values, rb[i].r.Values) || !sameRow(ra[i].r, rb[i].r) || !sameExp(ra[i].e, rb[i].e) ||
			!ra[i].start.Equal(rb[i].start) || !sameQuantiles(a, ra[i].i, b, rb[i].i) {
			return false
		}
	}
	return true
}

// sameExp compares two rows' exponential buckets (both nil for other
// aggregations).
func sameExp(a, b *wire.ExpHistogram) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Scale == b.Scale && a.ZeroCount == b.ZeroCount &&
		a.Positive.Offset == b.Positive.Offset && slices.Equal(a.Positive.Counts, b.Positive.Counts) &&
		a.Negative.Offset == b.Negative.Offset && slices.Equal(a.Negative.Counts, b.Negative.Counts)
}

// sameRow compares the values of two rows exactly (a NaN is never equal).
func sameRow(a, b *wire.Row) bool {
	return a.Count == b.Count && a.Sum == b.Sum && a.Value == b.Value && a.Min == b.Min && a.Max == b.Max &&
		a.SumOfSquaredDev == b.SumOfSquaredDev && slices.Equal(a.Buckets, b.Buckets)
}
