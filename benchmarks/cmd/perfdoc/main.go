// Command perfdoc writes docs/performance.md and docs/performance.svg from
// benchmark output: the side-by-side tables (median and 95% interval per
// implementation, read with golang.org/x/perf's benchfmt and benchmath),
// the BRIEF's targets beside the measurements, the machine they ran on,
// and a bar chart (ns/op and allocs/op per scenario per SDK, log scale)
// drawn here with the standard library only.
//
//	perfdoc -out ../docs/performance.md -svg ../docs/performance.svg \
//	        -benchstat out/benchstat.txt out/record.txt out/encode.txt out/stats.txt
//
// With BenchmarkScale results it adds the scale section (tables, targets)
// and docs/performance-scale.svg (cost against live series, log-log);
// -splice writes only that section into the existing document. With
// benchmarks/statsd's results (out/statsd.txt) it adds the StatsD section
// and issue 46's targets (statsd.go).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// series holds the samples of one benchmark name and unit.
type results struct {
	vals map[string]map[string][]float64 // name -> unit -> values
	cpu  string
	// scaleCPU is the cpu line of the BenchmarkScale results, and the date
	// the section was generated: make bench-scale splices that section
	// alone into a page another run may have written.
	scaleCPU string
	goos     string
	arch     string
	procs    string
}

func read(paths []string) (*results, error) {
	r := &results{vals: map[string]map[string][]float64{}}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		br := benchfmt.NewReader(f, p)
		for br.Scan() {
			res, ok := br.Result().(*benchfmt.Result)
			if !ok {
				continue
			}
			r.cpu, r.goos, r.arch = res.GetConfig("cpu"), res.GetConfig("goos"), res.GetConfig("goarch")
			base, parts := res.Name.Parts()
			name := string(base)
			for _, pt := range parts {
				if pt[0] == '-' {
					r.procs = string(pt[1:])
					continue
				}
				name += string(pt)
			}
			if string(base) == "Scale" && r.scaleCPU == "" {
				r.scaleCPU = fmt.Sprintf("%s/%s, %s, GOMAXPROCS %s; generated %s", r.goos, r.arch, strings.TrimSpace(r.cpu), r.procs, time.Now().UTC().Format("2006-01-02"))
			}
			if r.vals[name] == nil {
				r.vals[name] = map[string][]float64{}
			}
			for _, v := range res.Values {
				unit, val := v.OrigUnit, v.OrigValue
				if unit == "" {
					unit, val = v.Unit, v.Value
				}
				r.vals[name][unit] = append(r.vals[name][unit], val)
			}
		}
		f.Close()
		if err := br.Err(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *results) summary(name, unit string) (benchmath.Summary, bool) {
	v := r.vals[name][unit]
	if len(v) == 0 {
		return benchmath.Summary{}, false
	}
	thr := benchmath.DefaultThresholds
	return benchmath.AssumeNothing.Summary(benchmath.NewSample(v, &thr), 0.95), true
}

var scenarioRE = regexp.MustCompile(`^Record/scenario=([^/]+)/impl=(.+)$`)

// The columns, in order; implementations not present are left out.
var impls = []string{"floor", "zerostat", "zerostat_handle", "opencensus", "prometheus", "prometheus_handle",
	"victoriametrics", "victoriametrics_handle", "otel", "otel_attrset", "zerostat_otel", "zerostat_otel_attrset"}

var scenarios = []string{"counter_notags", "counter_2tags", "histogram_2tags", "8measures_8tags",
	"recordwithtags_2mut", "counter_2tags_parallel", "histogram_2tags_parallel",
	"exphist_2tags", "exphist_2tags_parallel"}

// resolution tells whether impl, in a record scenario, resolves its tags
// or labels once before the loop ("kept") or on every call ("per call"),
// so that each table row compares the same work.
func resolution(scenario, impl string) string {
	if scenario == "counter_notags" {
		return "kept" // no tags: nothing to resolve, one row
	}
	switch impl {
	case "prometheus", "victoriametrics", "otel", "zerostat_otel", "zerostat_new", "zerostat_rwt", "opencensus_new":
		return "per call"
	case "zerostat", "opencensus":
		if scenario == "recordwithtags_2mut" {
			return "per call" // the context kept, its mutators applied per call
		}
	}
	return "kept"
}

// resolvedWhen is the sentence a record-table row carries.
func resolvedWhen(scenario, class string) string {
	switch {
	case scenario == "counter_notags":
		return "No tags: nothing to resolve; every SDK records a bare counter (handles bound once)."
	case scenario == "recordwithtags_2mut":
		return "A context of 2 tags built once; 2 mutators applied on every call."
	case class == "kept":
		return "Tags or labels resolved once, before the loop; each call only records."
	}
	return "Labels resolved on every call, then recorded."
}

// requestImpls are the per-request family's rows, per call first, with
// what each resolves when (benchmarks/request_test.go).
var requestImpls = []struct{ impl, class, what string }{
	{"zerostat_rwt", "per call", "`stats.RecordWithTags` with 2 mutators built per request."},
	{"zerostat_new", "per call", "`tag.New(ctx, Upsert, Upsert)` per request, then one `Record` of the n measurements."},
	{"prometheus", "per call", "`WithLabelValues(\"v0\", \"v1\")` per counter per request, then `Add`."},
	{"victoriametrics", "per call", "`GetOrCreateCounter` by formatted name per counter per request."},
	{"otel", "per call", "`metric.WithAttributes` (2 attributes) per request, one option for the n `Add`s."},
	{"opencensus_new", "per call", "OpenCensus `tag.New` per request, then `Record`."},
	{"floor", "kept", "n atomic adds."},
	{"zerostat_handle", "kept", "Handles bound once (`Int64Measure.Bind`); `Record` per counter."},
	{"zerostat_ctx", "kept", "The tag context built once; one `Record` of the n measurements per request."},
	{"prometheus_handle", "kept", "Children looked up once and kept; `Add` per counter."},
	{"victoriametrics_handle", "kept", "Counters looked up once and kept; `Add` per counter."},
	{"otel_attrset", "kept", "A `WithAttributeSet` option built once; `Add` per counter."},
}

// writeRequest writes the per-request table (issue 19): a request records
// n counters with 2 tags; each row says what it resolves when, and its
// ratio is to Prometheus doing the same work (WithLabelValues per call, or
// its kept child).
func writeRequest(w func(string, ...any), r *results) {
	rec := func(n, im string) string { return "Record/scenario=request_" + n + "m/impl=" + im }
	if _, ok := r.summary(rec("1", "floor"), "ns/op"); !ok {
		return
	}
	w("## Per request: tags resolved per call, or kept\n\n")
	w("A request handler records n counters (n = 1, 4, 8) with 2 tags (`BenchmarkRecord/scenario=request_<n>m`). The *per call* rows resolve the tags on every request, the *kept* rows once; the ratio is to Prometheus doing the same work (`WithLabelValues` per call, or its kept child).\n\n")
	w("| impl | resolved | what is resolved when | 1 counter | 4 counters | 8 counters | allocs/op (1 / 8) | 1 counter, × Prometheus |\n|---|---|---|---|---|---|---|---|\n")
	for _, ri := range requestImpls {
		if _, ok := r.summary(rec("1", ri.impl), "ns/op"); !ok {
			continue
		}
		w("| %s | %s | %s |", ri.impl, ri.class, ri.what)
		for _, n := range []string{"1", "4", "8"} {
			if s, ok := r.summary(rec(n, ri.impl), "ns/op"); ok {
				w(" %s%s |", fmtNs(s.Center), pct(s))
			} else {
				w(" |")
			}
		}
		a1, _ := r.summary(rec("1", ri.impl), "allocs/op")
		a8, _ := r.summary(rec("8", ri.impl), "allocs/op")
		w(" %g / %g |", a1.Center, a8.Center)
		peer := "prometheus"
		if ri.class == "kept" {
			peer = "prometheus_handle"
		}
		s, _ := r.summary(rec("1", ri.impl), "ns/op")
		if p, ok := r.summary(rec("1", peer), "ns/op"); ok && ri.impl != "floor" {
			w(" %.2f× |\n", s.Center/p.Center)
		} else {
			w(" |\n")
		}
	}
	w("\n")
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("perfdoc", flag.ContinueOnError)
	out := fs.String("out", "../docs/performance.md", "markdown file to write")
	svg := fs.String("svg", "../docs/performance.svg", "SVG chart to write")
	bs := fs.String("benchstat", "", "benchstat output to include verbatim (optional)")
	scaleSVG := fs.String("scale-svg", "../docs/performance-scale.svg", "SVG chart of the scale benchmarks to write")
	only := fs.Bool("splice", false, "write only the scale section, into the existing -out file, and its chart")
	onlyCollector := fs.Bool("splice-collector", false, "write only the Collector section (make bench-collector's results), into the existing -out file")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: perfdoc [-out FILE] [-svg FILE] [-benchstat FILE] RESULTS...")
		return 2
	}
	r, err := read(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, "perfdoc:", err)
		return 1
	}
	if *onlyCollector {
		if !r.hasCollector() {
			fmt.Fprintln(stderr, "perfdoc: -splice-collector: no BenchmarkCollectorIngest results")
			return 1
		}
		return spliceFile(*out, stderr, func(b *bytes.Buffer) { writeCollector(b, r) }, collectorBegin, collectorEnd, scaleBegin, "## benchstat")
	}
	if r.hasScale() {
		if err := os.WriteFile(*scaleSVG, drawScale(r), 0o644); err != nil {
			fmt.Fprintln(stderr, "perfdoc:", err)
			return 1
		}
	}
	if *only {
		if !r.hasScale() {
			fmt.Fprintln(stderr, "perfdoc: -splice: no BenchmarkScale results")
			return 1
		}
		return spliceFile(*out, stderr, func(b *bytes.Buffer) { writeScale(b, r, relSVG(*out, *scaleSVG)) }, scaleBegin, scaleEnd, "## benchstat")
	}
	var bsText []byte
	if *bs != "" {
		if bsText, err = os.ReadFile(*bs); err != nil {
			fmt.Fprintln(stderr, "perfdoc:", err)
			return 1
		}
	}
	chart := drawChart(r)
	if err := os.WriteFile(*svg, chart, 0o644); err != nil {
		fmt.Fprintln(stderr, "perfdoc:", err)
		return 1
	}
	doc := writeDoc(r, bsText, relSVG(*out, *svg), relSVG(*out, *scaleSVG))
	if old, err := os.ReadFile(*out); err == nil {
		doc = keepSummary(old, doc)
	}
	if err := os.WriteFile(*out, doc, 0o644); err != nil {
		fmt.Fprintln(stderr, "perfdoc:", err)
		return 1
	}
	return 0
}

// The hand-written summary of docs/performance.md (the figures the
// README carried until issue 44), which a full run keeps as it is.
const (
	summaryBegin = "<!-- summary:begin"
	summaryEnd   = "<!-- summary:end -->"
)

// keepSummary returns doc with the summary section of old (the file it
// replaces), if old has one, in its place before the first generated
// table.
func keepSummary(old, doc []byte) []byte {
	i := bytes.Index(old, []byte(summaryBegin))
	if i < 0 {
		return doc
	}
	j := bytes.Index(old[i:], []byte(summaryEnd))
	if j < 0 {
		return doc
	}
	sec := append(append([]byte(nil), old[i:i+j+len(summaryEnd)]...), "\n\n"...)
	return spliceSection(doc, sec, summaryBegin, summaryEnd, "## Record path")
}

// spliceFile writes the section write renders into the document at path,
// in place of the one between begin and end (or before the first of
// before), and returns the exit status.
func spliceFile(path string, stderr io.Writer, write func(*bytes.Buffer), begin, end string, before ...string) int {
	doc, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(stderr, "perfdoc:", err)
		return 1
	}
	var sec bytes.Buffer
	write(&sec)
	if err := os.WriteFile(path, spliceSection(doc, sec.Bytes(), begin, end, before...), 0o644); err != nil {
		fmt.Fprintln(stderr, "perfdoc:", err)
		return 1
	}
	return 0
}

func relSVG(md, svg string) string {
	// Both live in docs/ in this project.
	if i := strings.LastIndexByte(svg, '/'); i >= 0 {
		return svg[i+1:]
	}
	return svg
}

func fmtNs(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3g ms", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3g µs", v/1e3)
	}
	return fmt.Sprintf("%.3g ns", v)
}

func pct(s benchmath.Summary) string {
	if s.Center == 0 {
		return ""
	}
	d := math.Max(s.Hi-s.Center, s.Center-s.Lo) / s.Center * 100
	if math.IsInf(d, 0) || math.IsNaN(d) { // one sample: no interval
		return ""
	}
	return fmt.Sprintf(" ±%.0f%%", d)
}

func writeDoc(r *results, bsText []byte, svgName, scaleSVGName string) []byte {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Performance\n\n")
	w("Generated by `make bench` (benchmarks/cmd/perfdoc) on %s. Do not edit by hand.\n\n", time.Now().UTC().Format("2006-01-02"))
	w("Machine: %s/%s, %s, GOMAXPROCS %s, %s. Every number is the median of `-count=6` runs with its 95%% confidence interval (benchmath, as benchstat computes it); the peers run in the same process, in the same run.\n\n", r.goos, r.arch, r.cpu, r.procs, runtime.Version())
	w("![ns/op and allocs/op per scenario and SDK, log scale](%s)\n\n", svgName)

	present := func(unit string) []string {
		var cols []string
		for _, im := range impls {
			for _, sc := range scenarios {
				if _, ok := r.summary("Record/scenario="+sc+"/impl="+im, unit); ok {
					cols = append(cols, im)
					break
				}
			}
		}
		return cols
	}
	for _, unit := range []string{"ns/op", "allocs/op", "B/op"} {
		cols := present(unit)
		if len(cols) == 0 {
			continue
		}
		w("## Record path, %s\n\n| scenario | resolved | what is resolved when | %s |\n|---|---|---|%s\n", unit, strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
		for _, sc := range scenarios {
			for _, class := range []string{"kept", "per call"} {
				row, any := "", false
				for _, im := range cols {
					s, ok := r.summary("Record/scenario="+sc+"/impl="+im, unit)
					switch {
					case !ok || (im != "floor" && resolution(sc, im) != class):
						row += " |"
					case unit == "ns/op":
						row += fmt.Sprintf(" %s%s |", fmtNs(s.Center), pct(s))
						any = any || im != "floor"
					default:
						row += fmt.Sprintf(" %g |", s.Center)
						any = any || im != "floor"
					}
				}
				if any {
					w("| %s | %s | %s |%s\n", sc, class, resolvedWhen(sc, class), row)
				}
			}
		}
		w("\n")
	}
	if len(present("ns/op")) > 0 {
		w("Each row compares the same work: in a *kept* row every SDK resolved its tags or labels once, before the loop (zerostat and OpenCensus a context built once, `_handle` a bound handle or kept child, `otel_attrset` a precomputed attribute set); in a *per call* row every SDK resolves them on each call (Prometheus `WithLabelValues`, VictoriaMetrics a formatted name, OTel `WithAttributes`; zerostat and OpenCensus the mutators of `RecordWithTags`). zerostat's per-call `tag.New` + `Record` is in the per-request table below. `floor` is the minimum work (one atomic add; a histogram's bound search and two adds), in both rows. `zerostat_otel` and `zerostat_otel_attrset` are the OTel columns' code on zerostat's MeterProvider (package otel) instead of the OTel SDK. Parallel scenarios use `b.RunParallel` on all cores.\n\n")
	}
	writeRequest(w, r)

	w("## Targets and measurements\n\n| target (BRIEF) | measured | met |\n|---|---|---|\n")
	ratio := func(a, bn string) (float64, bool) {
		sa, ok1 := r.summary(a, "ns/op")
		sb, ok2 := r.summary(bn, "ns/op")
		if !ok1 || !ok2 {
			return 0, false
		}
		return sa.Center / sb.Center, true
	}
	rec := func(sc, im string) string { return "Record/scenario=" + sc + "/impl=" + im }
	target := func(desc string, v float64, ok bool, cmp string, limit float64, unit string) {
		if !ok {
			w("| %s | not measured | |\n", desc)
			return
		}
		met := (cmp == "<=" && v <= limit) || (cmp == ">=" && v >= limit)
		mark := "yes"
		if !met {
			mark = "**no**"
		}
		w("| %s | %.2f%s | %s |\n", desc, v, unit, mark)
	}
	v, ok := ratio(rec("counter_2tags", "zerostat"), rec("counter_2tags", "floor"))
	target("counter, 2 tags: ≤ 3× the floor", v, ok, "<=", 3, "×")
	v, ok = ratio(rec("counter_2tags", "opencensus"), rec("counter_2tags", "zerostat"))
	target("counter, 2 tags: ≥ 20× faster than OpenCensus", v, ok, ">=", 20, "×")
	v, ok = ratio(rec("counter_2tags", "prometheus"), rec("counter_2tags", "zerostat"))
	target("counter, 2 tags: ≥ 2× faster than Prometheus `WithLabelValues`", v, ok, ">=", 2, "×")
	v, ok = ratio(rec("histogram_2tags", "zerostat"), rec("histogram_2tags", "floor"))
	target("histogram, 2 tags: ≤ 3× its floor", v, ok, "<=", 3, "×")
	v, ok = ratio(rec("8measures_8tags", "zerostat"), rec("8measures_8tags", "floor"))
	target("8 measures × 8 tags: ≤ 4× its floor", v, ok, "<=", 4, "×")
	v, ok = ratio(rec("counter_notags", "zerostat"), rec("counter_notags", "floor"))
	target("counter without tags: ≤ 1.5× the floor", v, ok, "<=", 1.5, "×")
	v, ok = ratio(rec("counter_2tags", "zerostat_handle"), rec("counter_2tags", "floor"))
	target("bound handle, counter: ≤ 1.3× the floor", v, ok, "<=", 1.3, "×")
	v, ok = ratio(rec("histogram_2tags", "zerostat_handle"), rec("histogram_2tags", "floor"))
	target("bound handle, histogram: ≤ 1.5× its floor", v, ok, "<=", 1.5, "×")
	if s, ok := r.summary(rec("recordwithtags_2mut", "zerostat"), "ns/op"); ok {
		target("`RecordWithTags`, 2 mutators: ≤ 60 ns", s.Center, true, "<=", 60, " ns")
	}
	v, ok = ratio(rec("request_1m", "zerostat_new"), rec("request_1m", "prometheus"))
	target("per request, 1 counter, 2 tags: `tag.New` + `Record` no slower than Prometheus `WithLabelValues(...).Inc()` (zerostat / Prometheus)", v, ok, "<=", 1, "×")
	v, ok = ratio(rec("request_1m", "zerostat_rwt"), rec("request_1m", "prometheus"))
	target("per request, 1 counter, 2 tags: `RecordWithTags` no slower than Prometheus `WithLabelValues(...).Inc()` (zerostat / Prometheus)", v, ok, "<=", 1, "×")
	v, ok = ratio(rec("counter_2tags_parallel", "zerostat"), rec("counter_2tags", "zerostat"))
	target("counter parallel (2 cores) ≤ 0.6× single-goroutine ns/op", v, ok, "<=", 0.6, "×")
	v, ok = ratio(rec("histogram_2tags_parallel", "zerostat"), rec("histogram_2tags", "zerostat"))
	target("histogram parallel (2 cores) ≤ 0.6× single-goroutine ns/op", v, ok, "<=", 0.6, "×")
	writeExpTargets(target, ratio, r)
	writeStatsdTargets(target, ratio, r)
	v, ok = ratio(rec("counter_2tags", "zerostat_otel_attrset"), rec("counter_2tags", "otel_attrset"))
	target("OTel API on zerostat: `Add` with `WithAttributeSet` ≤ ¼ of the OTel SDK's", v, ok, "<=", 0.25, "×")
	v, ok = ratio(rec("histogram_2tags", "zerostat_otel_attrset"), rec("histogram_2tags", "otel_attrset"))
	target("OTel API on zerostat: histogram `Record` with `WithAttributeSet` ≤ ¼ of the OTel SDK's", v, ok, "<=", 0.25, "×")
	v, ok = ratio(rec("counter_2tags", "zerostat_otel"), rec("counter_2tags", "otel"))
	target("OTel API on zerostat: `Add` with `WithAttributes` faster than the OTel SDK", v, ok, "<=", 1, "×")
	v, ok = ratio(rec("histogram_2tags", "zerostat_otel"), rec("histogram_2tags", "otel"))
	target("OTel API on zerostat: histogram `Record` with `WithAttributes` faster than the OTel SDK", v, ok, "<=", 1, "×")
	if s, ok := r.summary("Encode/impl=zerostat", "ns/op"); ok {
		target("snapshot + encode of 10,000 series ≤ 1 ms", s.Center/1e6, true, "<=", 1, " ms")
	}
	v, ok = ratio("Encode/impl=msgp", "Encode/impl=packer")
	target("encoding alone ≥ 2.5× faster than tinylib/msgp", v, ok, ">=", 2.5, "×")
	if a, ok1 := r.summary("Encode/impl=zerostat", "payload-bytes"); ok1 {
		if m, ok2 := r.summary("Encode/impl=msgp", "payload-bytes"); ok2 {
			target("payload ≤ 0.55× tinylib/msgp's bytes", a.Center/m.Center, true, "<=", 0.55, "×")
		}
	}
	for _, kind := range []string{"counter", "histogram16", "exphist", "exphist_spread"} {
		z, ok := r.summary("HeapPerSeries/kind="+kind+"/impl=zerostat", "B/series")
		if !ok {
			continue
		}
		best := math.Inf(1)
		peers := []string{"opencensus", "otel"}
		if strings.HasPrefix(kind, "exphist") {
			peers = []string{"otel", "prometheus"} // OpenCensus has no exponential histogram
		}
		for _, peer := range peers {
			if p, ok := r.summary("HeapPerSeries/kind="+kind+"/impl="+peer, "B/series"); ok {
				best = math.Min(best, p.Center)
			}
		}
		desc := "heap per live " + kind + " series below OpenCensus's and OTel's (zerostat / the smaller of theirs)"
		if strings.HasPrefix(kind, "exphist") {
			desc = "heap per live " + kind + " series below the OTel SDK's and client_golang's native histogram's (zerostat / the smaller of theirs)"
		}
		target(desc, z.Center/best, true, "<=", 1, "×")
	}
	if z, ok := r.summary("Collect10k/impl=zerostat_export", "ns/op"); ok {
		best := math.Inf(1)
		for _, peer := range []string{"opencensus", "prometheus_gather", "victoriametrics", "otel"} {
			if p, ok := r.summary("Collect10k/impl="+peer, "ns/op"); ok {
				best = math.Min(best, p.Center)
			}
		}
		target("snapshot + encode of 10,000 series ≥ 3× faster than the best peer's collect", best/z.Center, true, ">=", 3, "×")
	}
	if a, ok1 := r.summary("RecordDuringExportOneRecorder/export=on", "ns/op"); ok1 {
		if o, ok2 := r.summary("RecordDuringExportOneRecorder/export=off", "ns/op"); ok2 {
			target("record ns/op while exports run back to back: within 10%", a.Center/o.Center, true, "<=", 1.10, "×")
		}
	}
	w("\nThe gate in `make test` (benchmarks/gate.rules) enforces the allocation budgets exactly and the ratio bounds with a margin for the noise of a shared 2-core VM; the rows above state the targets themselves.\n\n")
	writeOTel(w, r)

	// Memory and collect.
	memImpls := []string{"zerostat", "opencensus", "prometheus", "victoriametrics", "otel"}
	if _, ok := r.summary("HeapPerSeries/kind=counter/impl=zerostat", "B/series"); ok {
		w("## Heap per live series (100,000 series)\n\n| kind | %s |\n|---|%s\n", strings.Join(memImpls, " | "), strings.Repeat("---|", len(memImpls)))
		for _, kind := range []string{"counter", "histogram16", "exphist", "exphist_spread"} {
			if _, ok := r.summary("HeapPerSeries/kind="+kind+"/impl=zerostat", "B/series"); !ok {
				continue
			}
			w("| %s |", kind)
			for _, im := range memImpls {
				if s, ok := r.summary("HeapPerSeries/kind="+kind+"/impl="+im, "B/series"); ok {
					w(" %.0f B |", s.Center)
				} else {
					w(" |")
				}
			}
			w("\n")
		}
		w("\nHeap retained per series after a GC, 2 tags, each series recorded once (benchmarks/memory_test.go); `exphist` is an exponential histogram (zerostat's `view.ExponentialDistribution(0, 0)`, the OTel SDK's `AggregationBase2ExponentialHistogram` of MaxSize 160 and MaxScale 20, client_golang's native histogram of factor 1.1 without classic buckets) recorded once, `exphist_spread` the same recorded with 16 values spread over 1 to 30,000 (each grows its buckets as values arrive).\n\n")
	}
	var col []string
	for n := range r.vals {
		if strings.HasPrefix(n, "Collect10k/") {
			col = append(col, n)
		}
	}
	sort.Strings(col)
	if len(col) > 0 {
		w("## Collecting 10,000 live series\n\n| benchmark | time | B/op | allocs/op |\n|---|---|---|---|\n")
		for _, n := range col {
			s, _ := r.summary(n, "ns/op")
			bo, _ := r.summary(n, "B/op")
			a, _ := r.summary(n, "allocs/op")
			w("| %s | %s%s | %.0f | %.0f |\n", n, fmtNs(s.Center), pct(s), bo.Center, a.Center)
		}
		w("\n`zerostat_export` is the exporter's snapshot and msgpack encoding; `zerostat_retrieve` is `view.RetrieveData` (allocating rows, as OpenCensus's API requires).\n\n")
	}

	writeCollectHist(w, r)

	// Export.
	var enc []string
	for n := range r.vals {
		if strings.HasPrefix(n, "Encode/") || strings.HasPrefix(n, "Gzip/") || strings.HasPrefix(n, "RecordDuringExport") {
			enc = append(enc, n)
		}
	}
	sort.Strings(enc)
	if len(enc) > 0 {
		w("## Export path (one snapshot of 20 views × 500 rows)\n\n| benchmark | time | allocs/op | payload bytes | gzip bytes |\n|---|---|---|---|---|\n")
		for _, n := range enc {
			s, _ := r.summary(n, "ns/op")
			a, _ := r.summary(n, "allocs/op")
			row := fmt.Sprintf("| %s | %s%s | %g |", n, fmtNs(s.Center), pct(s), a.Center)
			if p, ok := r.summary(n, "payload-bytes"); ok {
				row += fmt.Sprintf(" %.0f |", p.Center)
			} else {
				row += " |"
			}
			if g, ok := r.summary(n, "gzip-bytes"); ok {
				row += fmt.Sprintf(" %.0f |", g.Center)
			} else {
				row += " |"
			}
			w("%s\n", row)
		}
		w("\n`Encode/impl=zerostat` is the SDK's `Export`: snapshot *and* encode (the others only encode ready-made structs); `impl=packer` is our format and packer on the same structs, encode only.\n\n")
	}
	writeStatsd(w, r)
	writePlugins(r, w)
	writeCollector(&b, r)
	if r.hasScale() {
		writeScale(&b, r, scaleSVGName)
	}
	if len(bsText) > 0 {
		w("## benchstat\n\n```\n%s```\n", bsText)
	}
	return b.Bytes()
}

// pluginTables are the plug-in benchmarks (benchmarks/plugins): the
// instrumentation's cost per request beside its peers'.
var pluginTables = []struct {
	bench, title, note string
	impls              []string
}{
	{"HTTPServer", "HTTP server instrumentation, per request", "One GET through a ServeMux route writing 2 bytes, served in-process to a writer that allocates nothing: `floor` is the bare mux; `zerostat` is plugin/zhttp's Handler (ochttp's default server views and the OpenTelemetry HTTP server views registered); `opencensus` is ochttp.Handler (its default server views; ochttp has no stats-only mode, so its tracing runs at OpenCensus's default sampler); `otel` is otelhttp with an SDK MeterProvider and a no-op tracer; `prometheus` is promhttp's InstrumentHandlerDuration, InstrumentHandlerCounter and InstrumentHandlerResponseSize. The column *added* is the row minus `floor`.",
		[]string{"floor", "zerostat", "opencensus", "otel", "prometheus"}},
	{"HTTPClient", "HTTP client instrumentation, per request", "One GET through a RoundTripper over a base that answers from memory (`floor`, which allocates the body's NopCloser), the body read and closed: `zerostat` is plugin/zhttp's Transport (ochttp's default client views and the OpenTelemetry HTTP client views registered; latency to the body's end, as ochttp's, which takes the body wrapper); `zerostat-atheaders` the same with `AtHeaders` (recorded at the response headers, as otelhttp and promhttp do); `opencensus` is ochttp.Transport (its default client views, tracing at OpenCensus's default sampler); `otel` is otelhttp.NewTransport with an SDK MeterProvider and a no-op tracer; `prometheus` is promhttp's InstrumentRoundTripperDuration over InstrumentRoundTripperCounter. The column *added* is the row minus `floor`.",
		[]string{"floor", "zerostat", "zerostat-atheaders", "opencensus", "otel", "prometheus"}},
	{"RPC", "gRPC instrumentation, per unary call (client and server)", "One health-service Check over an in-memory connection (bufconn), instrumented on both sides: `floor` has no stats handler; `noop_handler` a handler that does nothing (what gRPC itself allocates for stats events once any handler is installed); `zerostat` is plugin/zgrpc (ocgrpc's default views and the OpenTelemetry RPC views registered); `opencensus` is ocgrpc; `otel` is otelgrpc with an SDK MeterProvider and a no-op tracer. The column *added* is the row minus `noop_handler`.",
		[]string{"floor", "noop_handler", "zerostat", "opencensus", "otel"}},
}

func writePlugins(r *results, w func(string, ...any)) {
	for _, t := range pluginTables {
		base := "floor"
		if t.bench == "RPC" {
			base = "noop_handler"
		}
		b0, ok0 := r.summary(t.bench+"/impl="+base, "ns/op")
		a0, _ := r.summary(t.bench+"/impl="+base, "allocs/op")
		if !ok0 {
			continue
		}
		w("## %s\n\n| impl | ns/op | added ns/op | B/op | allocs/op | added allocs/op |\n|---|---|---|---|---|---|\n", t.title)
		for _, im := range t.impls {
			n := t.bench + "/impl=" + im
			ns, ok := r.summary(n, "ns/op")
			if !ok {
				continue
			}
			by, _ := r.summary(n, "B/op")
			al, _ := r.summary(n, "allocs/op")
			added := fmtNs(ns.Center - b0.Center)
			if im == base {
				added = "—"
			} else if d := ns.Center - b0.Center; math.Abs(d) <= (ns.Hi-ns.Lo)/2+(b0.Hi-b0.Lo)/2 {
				added = "within noise" // the difference is inside the two intervals
			}
			w("| %s | %s%s | %s | %.0f | %g | %g |\n", im, fmtNs(ns.Center), pct(ns), added, by.Center, al.Center, al.Center-a0.Center)
		}
		w("\n%s\n\n", t.note)
	}
}

// writeOTel writes the section on OpenTelemetry's API on zerostat (issue
// 15): each OTel scenario on the SDK and on zerostat's MeterProvider, side
// by side with their ratio, when the run has them.
func writeOTel(w func(string, ...any), r *results) {
	rec := func(sc, im string) string { return "Record/scenario=" + sc + "/impl=" + im }
	var rows []string
	for _, sc := range scenarios {
		row := "| " + sc + " |"
		any := false
		for _, pair := range [][2]string{{"otel", "zerostat_otel"}, {"otel_attrset", "zerostat_otel_attrset"}} {
			sdk, ok1 := r.summary(rec(sc, pair[0]), "ns/op")
			zs, ok2 := r.summary(rec(sc, pair[1]), "ns/op")
			if !ok1 || !ok2 {
				row += " | | |"
				continue
			}
			any = true
			row += fmt.Sprintf(" %s%s | %s%s | %.2f× |", fmtNs(sdk.Center), pct(sdk), fmtNs(zs.Center), pct(zs), zs.Center/sdk.Center)
		}
		sa, ok1 := r.summary(rec(sc, "otel"), "allocs/op")
		za, ok2 := r.summary(rec(sc, "zerostat_otel"), "allocs/op")
		if ok1 && ok2 {
			row += fmt.Sprintf(" %g / %g |", sa.Center, za.Center)
		} else {
			row += " |"
		}
		if any {
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return
	}
	w("## OpenTelemetry's API on zerostat\n\n")
	w("The OTel scenarios run twice with the same code: on the OTel SDK v1.47.0 (ManualReader) and on zerostat's MeterProvider (module `github.com/zerostat/zerostat/otel`, instruments recording into zerostat views). `WithAttributes` builds the option and the attribute set per call (the API's allocations, the same on both); `WithAttributeSet` passes a set and option slice built once. The ratio is zerostat / SDK; `counter_notags` passes no option.\n\n")
	w("| scenario | SDK, `WithAttributes` | zerostat | ratio | SDK, `WithAttributeSet` | zerostat | ratio | allocs/op with `WithAttributes`, SDK / zerostat |\n|---|---|---|---|---|---|---|---|\n")
	for _, row := range rows {
		w("%s\n", row)
	}
	w("\nWith `WithAttributes` the API's own work (copying the attributes, `attribute.NewSet`'s sorting and hashing, its allocations) is most of the time on both, so the medians differ by less than the noise of a loaded VM; a CPU profile of the two in one process (`go test -bench BenchmarkAttributesAB -cpuprofile` in otel/) separates what each implementation adds.\n\n")
}

// writeExpTargets writes issue 45's targets for the exponential
// histogram's record path: each beside the classic histogram on the same
// path, the OTel SDK's exponential histogram and client_golang's native
// one, the parallel rows, and the allocations.
func writeExpTargets(target func(string, float64, bool, string, float64, string), ratio func(a, b string) (float64, bool), r *results) {
	rec := func(sc, im string) string { return "Record/scenario=" + sc + "/impl=" + im }
	if _, ok := r.summary(rec("exphist_2tags", "zerostat"), "ns/op"); !ok {
		return
	}
	for _, p := range []struct{ impl, what string }{{"zerostat", "a kept context"}, {"zerostat_handle", "a handle"}} {
		v, ok := ratio(rec("exphist_2tags", p.impl), rec("histogram_2tags", p.impl))
		target("exponential histogram, 2 tags, through "+p.what+": ≤ 1.3× the classic 15-bound histogram on the same path", v, ok, "<=", 1.3, "×")
		v, ok = ratio(rec("exphist_2tags", "otel_attrset"), rec("exphist_2tags", p.impl))
		target("exponential histogram through "+p.what+": ≥ 10× faster than the OTel SDK's exponential histogram with a precomputed attribute set (SDK / zerostat)", v, ok, ">=", 10, "×")
		v, ok = ratio(rec("exphist_2tags", p.impl), rec("exphist_2tags", "prometheus_handle"))
		target("exponential histogram through "+p.what+": faster than client_golang's native histogram `Observe` on a kept child (zerostat / client_golang)", v, ok, "<=", 1, "×")
		v, ok = ratio(rec("exphist_2tags_parallel", p.impl), rec("exphist_2tags", p.impl))
		target("exponential histogram through "+p.what+", parallel (2 cores): no slower per op than one goroutine", v, ok, "<=", 1, "×")
	}
	worst, any := 0.0, false
	for _, sc := range []string{"exphist_2tags", "exphist_2tags_parallel"} {
		for _, im := range []string{"zerostat", "zerostat_handle", "zerostat_otel_attrset"} {
			if s, ok := r.summary(rec(sc, im), "allocs/op"); ok {
				worst, any = math.Max(worst, s.Hi), true
			}
		}
	}
	target("exponential histogram: 0 allocations per record (context, handle, OTel API with an attribute set; single and parallel; the most of any sample)", worst, any, "<=", 0, "")
}

// writeCollectHist writes BenchmarkCollect10kHistograms: 10,000 live
// histogram series snapshotted and encoded on each of zerostat's outputs
// and collected by the peers, classic beside exponential.
func writeCollectHist(w func(string, ...any), r *results) {
	impls := []struct{ impl, what string }{
		{"zerostat_export", "zerostat's msgpack exporter, `Export` (snapshot + encode)"},
		{"zerostat_otlp", "zerostat's OTLP exporter, `Export` (snapshot + protobuf)"},
		{"zerostat_prometheus", "zerostat's Prometheus handler, protobuf exposition"},
		{"otel", "OTel SDK `ManualReader.Collect`"},
		{"prometheus_gather", "client_golang `Registry.Gather`"},
		{"prometheus_proto", "client_golang `Gather` + delimited protobuf"},
	}
	name := func(kind, im string) string { return "Collect10kHistograms/kind=" + kind + "/impl=" + im }
	if _, ok := r.summary(name("exphist", "zerostat_export"), "ns/op"); !ok {
		return
	}
	w("## Histogram series: snapshot and encoding, classic and exponential\n\n")
	w("10,000 live series of one histogram with 2 tags, each holding 16 values spread over 1 to 30,000 (`BenchmarkCollect10kHistograms`): `histogram16` has 16 bounds (client_golang: classic buckets), `exphist` is exponential (zerostat's `view.ExponentialDistribution(0, 0)`, the OTel SDK's `AggregationBase2ExponentialHistogram` of MaxSize 160 and MaxScale 20, client_golang's native histogram of factor 1.1 without classic buckets). Per series: one collect's time divided by 10,000.\n\n")
	w("| impl | what | classic, per series | exponential, per series | exponential / classic | allocs/op (classic / exponential) | payload bytes (classic / exponential) |\n|---|---|---|---|---|---|---|\n")
	for _, im := range impls {
		c, ok1 := r.summary(name("histogram16", im.impl), "ns/op")
		e, ok2 := r.summary(name("exphist", im.impl), "ns/op")
		if !ok1 || !ok2 {
			continue
		}
		ca, _ := r.summary(name("histogram16", im.impl), "allocs/op")
		ea, _ := r.summary(name("exphist", im.impl), "allocs/op")
		row := fmt.Sprintf("| %s | %s | %s%s | %s%s | %.2f× | %g / %g |", im.impl, im.what,
			fmtNs(c.Center/1e4), pct(c), fmtNs(e.Center/1e4), pct(e), e.Center/c.Center, ca.Center, ea.Center)
		cp, ok1 := r.summary(name("histogram16", im.impl), "payload-bytes")
		ep, ok2 := r.summary(name("exphist", im.impl), "payload-bytes")
		if ok1 && ok2 {
			row += fmt.Sprintf(" %.0f / %.0f |", cp.Center, ep.Center)
		} else {
			row += " |"
		}
		w("%s\n", row)
	}
	w("\nAn exponential series holds its buckets from the first to the last non-empty one (about 100 at scale 3 for these values) where a classic one holds 17, so it encodes more counts.\n\n")
}
