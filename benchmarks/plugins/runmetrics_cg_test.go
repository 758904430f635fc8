package plugins

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"

	zprom "github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/testbackend"
	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/plugin/runmetrics"
)

// A listed difference between runmetrics' families and client_golang
// v1.25.0's: what differs (absent, the type, the bucket bounds) and why.
type rmDifference struct{ what, why string }

// runmetricsDifferences are the families in which runmetrics' exposition
// differs from client_golang's collectors.NewGoCollector() and
// collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})
// (and, beyond their defaults, NewGoCollector with MetricsAll), with
// their reasons; plugin/runmetrics' doc.go and
// docs/migrating-from-opencensus.md list the same.
// TestRunmetricsMatchClientGolang fails on any other difference, and on a
// listed one that no longer exists.
var runmetricsDifferences = map[string]rmDifference{
	"go_memstats_alloc_bytes": {"absent", "the gauge would share its OpenMetrics family name with go_memstats_alloc_bytes_total " +
		"(two HELP lines, as client_golang's OpenMetrics output has); its value is go_memstats_heap_alloc_bytes'"},
	"go_sched_latencies_seconds":       {"buckets", "runmetrics' bounds (1 µs to 10 s), not client_golang's powers of 10 of the runtime's buckets"},
	"go_sched_pauses_total_gc_seconds": {"buckets", "runmetrics' bounds (1 µs to 10 s), not client_golang's powers of 10 of the runtime's buckets"},
}

// rmExact are the families whose values must be client_golang's exactly
// in the same process; every other family's must lie between the values
// of client_golang's scrapes just before and just after runmetrics' (GC
// is off between them, so the GC history and last GC time stand still).
var rmExact = map[string]bool{
	"go_goroutines": true, "go_threads": true, "process_open_fds": true, "process_start_time_seconds": true,
	"go_sched_gomaxprocs_threads": true, "go_gc_gogc_percent": true, "go_gc_gomemlimit_bytes": true,
	"process_max_fds": true, "process_virtual_memory_max_bytes": true, "go_info": true,
	"go_gc_duration_seconds": true, "go_memstats_last_gc_time_seconds": true,
}

type families = map[string]*dto.MetricFamily

// replay is a collector that sends metrics already collected, so that a
// registry turns them into families without collecting anew.
type replay []prometheus.Metric

func (r replay) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(r, ch) }
func (r replay) Collect(ch chan<- prometheus.Metric) {
	for _, m := range r {
		ch <- m
	}
}

// collectClientGolang collects cs on one goroutine of its own, as
// runmetrics' snapshot reads on one goroutine of its own (core.Collect
// runs each callback so): both count the program's goroutines plus that
// one. Registry.Gather would run a varying number (a worker per collector
// as needed, and one more to close the channel).
func collectClientGolang(t *testing.T, cs ...prometheus.Collector) families {
	t.Helper()
	ch := make(chan prometheus.Metric, 512) // more than the collectors send: Collect never waits
	done := make(chan struct{})
	go func() {
		for _, c := range cs {
			c.Collect(ch)
		}
		close(done)
	}()
	<-done
	close(ch)
	var ms replay
	for m := range ch {
		ms = append(ms, m)
	}
	return gatherFamilies(t, ms)
}

func gatherFamilies(t *testing.T, cs ...prometheus.Collector) families {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(cs...)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := families{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// isRuntimeFamily tells runmetrics' families from other views' that
// tests may have left registered.
func isRuntimeFamily(name string) bool {
	return strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_")
}

// parseOurs parses a text exposition and keeps runmetrics' families.
func parseOurs(t *testing.T, text []byte) families {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	for name := range mfs {
		if !isRuntimeFamily(name) {
			delete(mfs, name)
		}
	}
	return mfs
}

// labelPairs lists the family's series' labels, "name=value" sorted, one
// string per series.
func labelPairs(mf *dto.MetricFamily) []string {
	var out []string
	for _, m := range mf.Metric {
		var ls []string
		for _, l := range m.Label {
			ls = append(ls, l.GetName()+"="+l.GetValue())
		}
		slices.Sort(ls)
		out = append(out, strings.Join(ls, ","))
	}
	slices.Sort(out)
	return out
}

func bounds(mf *dto.MetricFamily) []float64 {
	if len(mf.Metric) == 0 || mf.Metric[0].Histogram == nil {
		return nil
	}
	var bs []float64
	for _, b := range mf.Metric[0].Histogram.Bucket {
		bs = append(bs, b.GetUpperBound())
	}
	return bs
}

// diffFamilies compares runmetrics' families with client_golang's:
// theirs from the default collectors, all from the Go collector with
// MetricsAll (for runmetrics' families beyond the defaults). It returns
// one line per difference that runmetricsDifferences does not list, and
// one per listed difference that is not found.
func diffFamilies(ours, theirs, all families) []string {
	var probs []string
	found := map[string]string{} // family: the difference found
	names := map[string]bool{}
	for n := range ours {
		names[n] = true
	}
	for n := range theirs {
		names[n] = true
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		o, ref := ours[name], theirs[name]
		if ref == nil {
			ref = all[name]
		}
		switch {
		case o == nil:
			found[name] = "absent"
			continue
		case ref == nil:
			probs = append(probs, fmt.Sprintf("%s (%s): client_golang has no such family, even with MetricsAll", name, o.GetType()))
			continue
		}
		if o.GetType() != ref.GetType() {
			found[name] = "type"
		}
		if o.GetHelp() != ref.GetHelp() {
			probs = append(probs, fmt.Sprintf("%s: HELP %q; client_golang %q", name, o.GetHelp(), ref.GetHelp()))
		}
		if a, b := labelPairs(o), labelPairs(ref); !slices.Equal(a, b) {
			probs = append(probs, fmt.Sprintf("%s: series labelled %q; client_golang %q", name, a, b))
		}
		if o.GetType() == dto.MetricType_HISTOGRAM && ref.GetType() == dto.MetricType_HISTOGRAM && !slices.Equal(bounds(o), bounds(ref)) {
			found[name] = "buckets"
		}
		if o.GetType() == dto.MetricType_SUMMARY && ref.GetType() == dto.MetricType_SUMMARY {
			if a, b := quantiles(o), quantiles(ref); !slices.Equal(a, b) {
				probs = append(probs, fmt.Sprintf("%s: quantiles %v; client_golang %v", name, a, b))
			}
		}
	}
	for name, what := range found {
		if d, ok := runmetricsDifferences[name]; !ok || d.what != what {
			probs = append(probs, fmt.Sprintf("%s: %s differs from client_golang's, and runmetricsDifferences does not list it", name, what))
		}
	}
	for name, d := range runmetricsDifferences {
		if found[name] != d.what {
			probs = append(probs, fmt.Sprintf("%s: listed as differing (%s) but does not: remove it from runmetricsDifferences and the docs", name, d.what))
		}
	}
	slices.Sort(probs)
	return probs
}

// quantiles lists a summary family's quantiles (its "quantile" labels),
// one list per series, flattened.
func quantiles(mf *dto.MetricFamily) []float64 {
	var qs []float64
	for _, m := range mf.Metric {
		for _, q := range m.GetSummary().GetQuantile() {
			qs = append(qs, q.GetQuantile())
		}
	}
	return qs
}

// values returns the value of a family's one series: a counter's or a
// gauge's, a histogram's count and sum, a summary's count, sum and the
// value of each quantile.
func values(mf *dto.MetricFamily) []float64 {
	if len(mf.Metric) != 1 {
		return nil
	}
	m := mf.Metric[0]
	switch {
	case m.Counter != nil:
		return []float64{m.Counter.GetValue()}
	case m.Gauge != nil:
		return []float64{m.Gauge.GetValue()}
	case m.Summary != nil:
		vs := []float64{float64(m.Summary.GetSampleCount()), m.Summary.GetSampleSum()}
		for _, q := range m.Summary.Quantile {
			vs = append(vs, q.GetValue())
		}
		return vs
	case m.Histogram != nil:
		return []float64{float64(m.Histogram.GetSampleCount()), m.Histogram.GetSampleSum()}
	}
	return nil
}

// diffValues compares the values of runmetrics' families (ours) with
// client_golang's read just before (a) and just after (b): exactly for
// rmExact's families (which must then be equal in a and b too: otherwise
// the process changed between the scrapes, and the caller retries), and
// within [min(a, b), max(a, b)] for the others, a histogram's sum to
// 1e-9 of its value. go_gc_duration_seconds is exact: its count, sum
// and each quantile's value (runmetrics sets the summary from
// debug.ReadGCStats as client_golang does).
func diffValues(a, ours, b families) []string {
	var probs []string
	for _, name := range slices.Sorted(maps.Keys(a)) {
		o := ours[name]
		if o == nil || b[name] == nil {
			continue // diffFamilies reports it
		}
		va, vo, vb := values(a[name]), values(o), values(b[name])
		if len(vo) != len(va) || len(vb) != len(va) {
			probs = append(probs, fmt.Sprintf("%s: values %v; client_golang %v, %v", name, vo, va, vb))
			continue
		}
		for i := range va {
			lo, hi := min(va[i], vb[i]), max(va[i], vb[i])
			tol := 0.0
			if i == 1 { // a sum
				tol = 1e-9 * math.Abs(hi)
			}
			if rmExact[name] {
				if va[i] != vb[i] {
					probs = append(probs, fmt.Sprintf("%s: client_golang's changed between its scrapes (%v, %v): not settled", name, va[i], vb[i]))
				} else if vo[i] != va[i] {
					probs = append(probs, fmt.Sprintf("%s: %v; client_golang %v", name, vo[i], va[i]))
				}
				continue
			}
			if vo[i] < lo-tol || vo[i] > hi+tol {
				probs = append(probs, fmt.Sprintf("%s: %v; client_golang %v before and %v after", name, vo[i], va[i], vb[i]))
			}
		}
	}
	return probs
}

var rmSink [][]byte

// runmetricsTraffic is the fixed workload both sides report on: 2,000
// live allocations of 16 B to 32 KiB, two GC cycles, 8 goroutines parked
// on a channel, 4 open files, and 1 MiB over a loopback TCP connection
// (which moves the network namespace's octet counts). stop ends it: the
// goroutines return, the files close.
func runmetricsTraffic(t *testing.T) (stop func()) {
	t.Helper()
	for i := range 2000 {
		rmSink = append(rmSink, make([]byte, 16<<(i%12)))
	}
	runtime.GC()
	rmSink = rmSink[:1000]
	runtime.GC()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var served sync.WaitGroup
	served.Go(func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		io.Copy(io.Discard, c)
		c.Close()
	})
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	served.Wait() // the server read everything and closed: its goroutine is gone
	ln.Close()

	var files []*os.File
	for range 4 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	park := make(chan struct{})
	var parked sync.WaitGroup
	for range 8 {
		parked.Go(func() { <-park })
	}
	return func() {
		close(park)
		parked.Wait()
		for _, f := range files {
			f.Close()
		}
		rmSink = nil
	}
}

// TestRunmetricsMatchClientGolang runs runmetrics beside client_golang's
// default Go and process collectors in one process, on one fixed workload,
// and compares each family: names, TYPE, HELP, labels (diffFamilies; the
// families runmetrics adds beyond the defaults against client_golang's
// MetricsAll), and values (diffValues): goroutines, threads, open fds,
// start time and the settings exactly, the others within client_golang's
// scrapes just before and just after runmetrics'. A value can move
// between the scrapes (a thread started, a page released): the scrapes
// are then taken again, up to 40 times; a real difference fails them all.
func TestRunmetricsMatchClientGolang(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process collectors read /proc: Linux only")
	}
	goc := collectors.NewGoCollector()
	pc := collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})
	all := gatherFamilies(t, collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsAll)))
	metric.SetTimeout(10 * time.Second) // a loaded machine must not time the callback out
	defer metric.SetTimeout(0)
	if err := runmetrics.Enable(runmetrics.Options{}); err != nil {
		t.Fatal(err)
	}
	defer runmetrics.Disable()
	if cbs := core.Callbacks(); len(cbs) != 1 {
		var names []string
		for _, c := range cbs {
			names = append(names, c.Name)
		}
		t.Fatalf("callbacks %q registered; want runmetrics' alone (each runs on a goroutine of its own, counted in go_goroutines)", names)
	}
	stop := runmetricsTraffic(t)
	defer stop()
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no GC cycle between the scrapes

	h := zprom.NewHandler(zprom.Options{})
	const attempts = 40
	for i := 1; ; i++ {
		before := collectClientGolang(t, goc, pc)
		ours := parseOurs(t, h.AppendFormat(nil, zprom.FormatText))
		after := collectClientGolang(t, goc, pc)
		if i == 1 {
			for _, p := range diffFamilies(ours, before, all) {
				t.Error(p)
			}
			t.Logf("%d families; client_golang's defaults %d", len(ours), len(before))
			for _, name := range slices.Sorted(maps.Keys(runmetricsDifferences)) {
				t.Logf("listed: %s: %s", name, runmetricsDifferences[name].why)
			}
		}
		probs := diffValues(before, ours, after)
		if len(probs) == 0 {
			t.Logf("values agree (scrapes taken %d times)", i)
			break
		}
		if i == attempts {
			for _, p := range probs {
				t.Errorf("after %d scrapes: %s", attempts, p)
			}
			break
		}
		t.Logf("scrapes %d: %q; again", i, probs)
		time.Sleep(25 * time.Millisecond) // let the change that moved a value finish; the retry decides
	}
	if err := h.Err(); err != nil {
		t.Errorf("views left out of the exposition: %v", err)
	}
	if err := runmetrics.Err(); err != nil {
		t.Errorf("runmetrics: %v", err)
	}
}

// TestRunmetricsComparisonCatchesDifferences plants differences into
// runmetrics' families and checks that diffFamilies and diffValues report
// each.
func TestRunmetricsComparisonCatchesDifferences(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process collectors read /proc: Linux only")
	}
	metric.SetTimeout(10 * time.Second)
	defer metric.SetTimeout(0)
	if err := runmetrics.Enable(runmetrics.Options{}); err != nil {
		t.Fatal(err)
	}
	defer runmetrics.Disable()
	theirs := gatherFamilies(t, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	all := gatherFamilies(t, collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsAll)))
	text := zprom.NewHandler(zprom.Options{}).AppendFormat(nil, zprom.FormatText)
	if probs := diffFamilies(parseOurs(t, text), theirs, all); len(probs) != 0 {
		t.Fatalf("unplanted: %q", probs)
	}
	plant := []struct {
		name  string
		edit  func(families)
		wants string
	}{
		{"help", func(f families) { f["go_threads"].Help = new("Number of threads.") }, "go_threads: HELP"},
		{"type", func(f families) { f["process_open_fds"].Type = dto.MetricType_COUNTER.Enum() }, "process_open_fds: type differs"},
		{"label", func(f families) { f["go_info"].Metric[0].Label[0].Name = new("go_version") }, "go_info: series labelled"},
		{"absent", func(f families) { delete(f, "process_max_fds") }, "process_max_fds: absent"},
		{"extra", func(f families) { f["go_made_up"] = f["go_threads"] }, "go_made_up"},
		{"listed gone", func(f families) { f["go_memstats_alloc_bytes"] = theirs["go_memstats_alloc_bytes"] }, "go_memstats_alloc_bytes: listed"},
		{"summary type", func(f families) { f["go_gc_duration_seconds"].Type = dto.MetricType_HISTOGRAM.Enum() }, "go_gc_duration_seconds: type differs"},
		{"summary help", func(f families) { f["go_gc_duration_seconds"].Help = new("A summary.") }, "go_gc_duration_seconds: HELP"},
		{"quantile label", func(f families) { f["go_gc_duration_seconds"].Metric[0].Summary.Quantile[1].Quantile = new(0.3) }, "go_gc_duration_seconds: quantiles"},
		{"quantile dropped", func(f families) {
			s := f["go_gc_duration_seconds"].Metric[0].Summary
			s.Quantile = s.Quantile[:4]
		}, "go_gc_duration_seconds: quantiles"},
	}
	for _, p := range plant {
		ours := parseOurs(t, text)
		p.edit(ours)
		probs := diffFamilies(ours, theirs, all)
		if !slices.ContainsFunc(probs, func(s string) bool { return strings.Contains(s, p.wants) }) {
			t.Errorf("planted %s: got %q; want a line with %q", p.name, probs, p.wants)
		}
	}
	// Values: one goroutine more, and a memory gauge past both scrapes.
	ours := parseOurs(t, text)
	ours["go_goroutines"].Metric[0].Gauge.Value = new(theirs["go_goroutines"].Metric[0].Gauge.GetValue() + 1)
	ours["go_memstats_heap_alloc_bytes"].Metric[0].Gauge.Value = new(math.MaxFloat64)
	probs := diffValues(theirs, ours, theirs)
	for _, want := range []string{"go_goroutines: ", "go_memstats_heap_alloc_bytes: "} {
		if !slices.ContainsFunc(probs, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("planted value: got %q; want a line starting %q", probs, want)
		}
	}
	// go_gc_duration_seconds: client_golang's own summary with one
	// quantile's value, then its sum, then its count moved by the least
	// step: each is reported (the summary is compared exactly).
	for i, edit := range []func(s *dto.Summary){
		func(s *dto.Summary) { s.Quantile[2].Value = new(math.Nextafter(s.Quantile[2].GetValue(), 1)) },
		func(s *dto.Summary) { s.SampleSum = new(math.Nextafter(s.GetSampleSum(), 1)) },
		func(s *dto.Summary) { s.SampleCount = new(s.GetSampleCount() + 1) },
	} {
		ours := parseOurs(t, text)
		ours["go_gc_duration_seconds"] = cloneFamily(t, theirs["go_gc_duration_seconds"])
		if probs := diffValues(theirs, ours, theirs); slices.ContainsFunc(probs, func(s string) bool { return strings.HasPrefix(s, "go_gc_duration_seconds: ") }) {
			t.Fatalf("client_golang's own summary reported: %q", probs)
		}
		edit(ours["go_gc_duration_seconds"].Metric[0].Summary)
		probs := diffValues(theirs, ours, theirs)
		if !slices.ContainsFunc(probs, func(s string) bool { return strings.HasPrefix(s, "go_gc_duration_seconds: ") }) {
			t.Errorf("planted summary value %d: got %q; want a go_gc_duration_seconds line", i, probs)
		}
	}
}

// cloneFamily returns a deep copy of mf (through its text form).
func cloneFamily(t *testing.T, mf *dto.MetricFamily) *dto.MetricFamily {
	t.Helper()
	var b bytes.Buffer
	if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(&b)
	if err != nil {
		t.Fatal(err)
	}
	return mfs[mf.GetName()]
}

// TestRunmetricsPromtool checks runmetrics' text exposition with
// promtool check metrics (Debian's prometheus package, which
// scripts/install-backends.sh installs; the test skips without it unless
// ZEROSTAT_REQUIRE_BACKENDS=1), and its OpenMetrics exposition with
// Prometheus's OpenMetrics parser and one HELP and one TYPE per family.
func TestRunmetricsPromtool(t *testing.T) {
	promtool := testbackend.Require(t, "promtool")
	metric.SetTimeout(10 * time.Second)
	defer metric.SetTimeout(0)
	if err := runmetrics.Enable(runmetrics.Options{}); err != nil {
		t.Fatal(err)
	}
	defer runmetrics.Disable()
	runtime.GC() // a GC cycle in each GC histogram
	h := zprom.NewHandler(zprom.Options{})
	text := runtimeBlocks(h.AppendFormat(nil, zprom.FormatText))
	for _, want := range []string{"# TYPE go_info gauge", "# TYPE go_gc_duration_seconds summary", "\ngo_gc_duration_seconds{quantile=\"0.0\"} ",
		"\ngo_gc_duration_seconds{quantile=\"0.5\"} ", "\ngo_gc_duration_seconds{quantile=\"1.0\"} ", "\ngo_gc_duration_seconds_sum ", "\ngo_gc_duration_seconds_count "} {
		if !bytes.Contains(text, []byte(want)) {
			t.Fatalf("exposition lacks %q:\n%s", want, text)
		}
	}
	if out, err := promtoolCheck(promtool, text); err != nil || len(out) != 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	// promtool does check a summary: the same family with a "quantile"
	// label on a gauge fails.
	gauges := bytes.Replace(text, []byte("# TYPE go_gc_duration_seconds summary"), []byte("# TYPE go_gc_duration_seconds gauge"), 1)
	if out, err := promtoolCheck(promtool, gauges); err == nil || !bytes.Contains(out, []byte(`"quantile" label`)) {
		t.Errorf("promtool accepts go_gc_duration_seconds as a gauge with a quantile label (%v, %s): the check above would not see a broken summary", err, out)
	}

	om := h.AppendFormat(nil, zprom.FormatOpenMetrics)
	if err := oneHeadPerFamily(om, true); err != nil {
		t.Errorf("OpenMetrics: %v", err)
	}
	// client_golang's OpenMetrics output of its default collectors names
	// two families go_memstats_alloc_bytes (the gauge, and the counter
	// go_memstats_alloc_bytes_total, whose OpenMetrics family drops
	// "_total"): the reason runmetrics leaves the gauge out.
	var cg bytes.Buffer
	for _, mf := range gatherFamilies(t, collectors.NewGoCollector()) {
		if _, err := expfmt.MetricFamilyToOpenMetrics(&cg, mf); err != nil {
			t.Fatal(err)
		}
	}
	if err := oneHeadPerFamily(cg.Bytes(), false); err == nil || !strings.Contains(err.Error(), "go_memstats_alloc_bytes") {
		t.Errorf("client_golang's OpenMetrics output: %v; want two HELP lines for go_memstats_alloc_bytes (runmetrics' doc gives them as the reason to leave its gauge out)", err)
	}
}

// runtimeBlocks keeps the families of a text exposition that are
// runmetrics' (go_*, process_*), leaving out other tests' views.
func runtimeBlocks(text []byte) []byte {
	var out []byte
	keep := false
	for line := range bytes.Lines(text) {
		if name, ok := bytes.CutPrefix(line, []byte("# HELP ")); ok {
			name, _, _ = bytes.Cut(name, []byte(" "))
			keep = isRuntimeFamily(string(name))
		}
		if keep {
			out = append(out, line...)
		}
	}
	return out
}

func promtoolCheck(promtool string, text []byte) ([]byte, error) {
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	return cmd.CombinedOutput()
}

// oneHeadPerFamily checks that an OpenMetrics exposition has at most one
// HELP and one TYPE line per family, and, with parse, that Prometheus's
// OpenMetrics parser reads it to the end.
func oneHeadPerFamily(om []byte, parse bool) error {
	helps, types := map[string]int{}, map[string]int{}
	for line := range bytes.Lines(om) {
		f := strings.Fields(string(line))
		if len(f) >= 3 && f[0] == "#" && f[1] == "HELP" {
			helps[f[2]]++
		}
		if len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]]++
		}
	}
	var errs []error
	for name, n := range helps {
		if n > 1 {
			errs = append(errs, fmt.Errorf("%d HELP lines for %s", n, name))
		}
	}
	for name, n := range types {
		if n > 1 {
			errs = append(errs, fmt.Errorf("%d TYPE lines for %s", n, name))
		}
	}
	if parse {
		p := textparse.NewOpenMetricsParser(om, labels.NewSymbolTable())
		for {
			if _, err := p.Next(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				errs = append(errs, fmt.Errorf("Prometheus's OpenMetrics parser: %w", err))
				break
			}
		}
	}
	return errors.Join(errs...)
}
