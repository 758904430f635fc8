package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/otlp/otlpgrpc"
	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/hostile"
	"github.com/zerostat/zerostat/internal/testbackend"
)

// hostileJobs are the paths through the Collector, each a job in
// Prometheus (the sender's service.name).
var hostileJobs = []string{"msgpack", "otlphttp", "otlpgrpc"}

// TestCollectorHostile pushes the hostile workload (internal/hostile, the
// one exporter/remotewrite's TestBackendEveryPathAgrees pushes into
// Prometheus and VictoriaMetrics directly) through the built Collector on
// every path zerostat has into it: msgpack to the zerostat receiver,
// zerostat's OTLP over HTTP and over gRPC to the otlp receiver; each into
// the fileexporter (pdata) and by prometheusremotewrite into a real
// Prometheus, which also scrapes zerostat's own Prometheus handler (text
// format) for the same views. The series the Collector makes are the
// handler's, value for value (NaN, ±Inf, negatives, both bucket rules,
// escaped labels), once the differences of the Collector's translation
// (otlptranslator) listed in collectorSeries are applied; each is
// asserted, and docs/collector.md lists them.
func TestCollectorHostile(t *testing.T) {
	bin := collectorBinary(t)
	w := hostile.Register(t, "hostile")
	env := w.Consts["env"]
	handler := prometheus.NewHandler(prometheus.Options{ConstLabels: map[string]string{"env": env}, Format: prometheus.FormatText})
	own := httptest.NewServer(handler)
	defer own.Close()
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{RemoteWriteReceiver: true,
		Jobs: []testbackend.ScrapeJob{{Name: "zerostat", Target: own.Listener.Addr().String()}}})

	dir := t.TempDir()
	zsAddr, httpAddr, grpcAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	cfg := fmt.Sprintf(`
receivers:
  zerostat: {endpoint: %q}
  otlp: {protocols: {http: {endpoint: %q}, grpc: {endpoint: %q}}}
exporters:
  file: {path: %q}
  prometheusremotewrite:
    endpoint: %q
    target_info: {enabled: false}
    resource_constant_labels: {included: [env]}
service:
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    metrics: {receivers: [zerostat, otlp], exporters: [file, prometheusremotewrite]}
`, zsAddr, httpAddr, grpcAddr, filepath.Join(dir, "pdata.json"), prom.URL+"/api/v1/write")
	col := startCollector(t, bin, cfg, zsAddr, httpAddr, grpcAddr)

	// The constant label env is a resource attribute, which
	// resource_constant_labels makes a label of every series.
	res := func(job string) exporter.Resource {
		return exporter.Resource{ServiceName: job, Host: "h", PID: 1, Attributes: []wire.Attribute{{Key: "env", Value: env}}}
	}
	ms, err := exporter.New(&exporter.HTTPSink{URL: "http://" + zsAddr + "/"}, exporter.Options{
		Timeout: 5 * time.Second, Resource: res("msgpack")})
	if err != nil {
		t.Fatal(err)
	}
	oh, err := otlp.New(otlp.Options{Endpoint: "http://" + httpAddr, Timeout: 5 * time.Second, Resource: res("otlphttp")})
	if err != nil {
		t.Fatal(err)
	}
	og, err := otlpgrpc.New(otlp.Options{Protocol: otlp.ProtocolGRPC, Endpoint: grpcAddr, TLS: otlp.TLS{Insecure: true},
		Timeout: 5 * time.Second, Resource: res("otlpgrpc")})
	if err != nil {
		t.Fatal(err)
	}
	defer og.Stop(context.Background())
	for i, e := range []interface{ Export(context.Context) error }{ms, oh, og} {
		// No path refuses the colliding views: their OTLP names differ
		// (col.x, col_x); only their Prometheus name is one.
		if err := e.Export(context.Background()); err != nil {
			t.Errorf("%s: %v", hostileJobs[i], err)
		}
	}

	// zerostat's handler, scraped: the reference. Its first scrape comes
	// about 5 s after Prometheus starts, with the workload's 43 series.
	sel := func(job string) string { return fmt.Sprintf(`{__name__=~"%s_.+",job=%q}`, w.NS, job) }
	ref := map[string]string{}
	for _, s := range prom.WaitQuery(t, sel("zerostat"), 43, 60*time.Second) {
		ref[hostile.Key(s.Metric["__name__"], s.Metric)] = s.Value
	}
	if err := handler.Err(); err == nil || !strings.Contains(err.Error(), w.Refused) || !strings.Contains(err.Error(), w.First) {
		t.Errorf("zerostat's handler: Err() = %v; want the collision of %s with %s", err, w.Refused, w.First)
	}
	for k, v := range w.Want(map[string]string{"env": env}) {
		if ref[k] != v {
			t.Errorf("zerostat's handler: %s = %q; recorded %s", k, ref[k], v)
		}
	}
	want := expectedThroughCollector(t, w, ref)
	for _, job := range hostileJobs {
		got := map[string]string{}
		for _, s := range prom.WaitQuery(t, sel(job), len(want), 30*time.Second) {
			if s.Metric["otel_scope_name"] != "github.com/zerostat/zerostat" {
				t.Errorf("job %s: %v: otel_scope_name %q; want github.com/zerostat/zerostat", job, s.Metric, s.Metric["otel_scope_name"])
			}
			delete(s.Metric, "otel_scope_name")
			got[hostile.Key(s.Metric["__name__"], s.Metric)] = s.Value
		}
		diffSeries(t, "job "+job, got, want)
	}

	col.stop(t)
	checkHostilePdata(t, w, readFile(t, filepath.Join(dir, "pdata.json")), metadata(t, prom))
}

// expectedThroughCollector maps the series zerostat's handler exposes
// (ref, by hostile.Key) to those the Collector's prometheusremotewrite
// gives for the same views, asserting each difference where it applies.
// The differences are otlptranslator's rules, applied to zerostat's
// pdata (docs/collector.md, "Through the Collector to Prometheus"):
//
//  1. every series has otel_scope_name (removed by the caller);
//  2. a bucket bound is spelled as Go's 'g' format does ("1"), the
//     handler's as OpenMetrics's canonical float ("1.0");
//  3. a Sum that is non-monotonic in pdata (a value is negative or NaN) is
//     a gauge: no _total suffix (balance, odd_sum), where the handler
//     keeps every Sum a counter;
//  4. a gauge in unit "1" gets _ratio (odd_last, ninf_last); a
//     non-monotonic Sum in "1" does not (otlptranslator adds _ratio to
//     pdata Gauges only);
//  5. a histogram with a negative value has no sum in pdata, so no _sum
//     series (the handler's text format writes it; its OpenMetrics
//     format does not either);
//
// (balance_dist, Distribution(0), has only the +Inf bucket on every
// path: Register drops a zero bound under OpenCensus's rule.)
//
// The colliding views are both in pdata (col.x counting 12, col_x 2) and
// both become hostile_col_x_total{…}: prometheusremotewrite appends both
// points to one series, two samples at one timestamp, col.x's first (the
// views go sorted by name, and "." sorts before "_"). Prometheus 2.42
// stores the first and drops the second without an error (its
// out-of-order counters stay 0), so the series is the handler's, which
// refuses col_x; but the Collector's choice is by name order, not by
// registration as zerostat's Namer decides.
func expectedThroughCollector(t *testing.T, w *hostile.Workload, ref map[string]string) map[string]string {
	t.Helper()
	ns := w.NS + "_"
	rename := map[string]string{ // rules 3 and 4
		ns + "balance_total":  ns + "balance",
		ns + "odd_sum_total":  ns + "odd_sum",
		ns + "odd_last":       ns + "odd_last_ratio",
		ns + "ninf_last":      ns + "ninf_last_ratio",
		ns + "pinf_sum_total": ns + "pinf_sum_total", // +Inf is not negative: monotonic, a counter
	}
	out := map[string]string{}
	applied := map[string]bool{}
	for k, v := range ref {
		name, labels, _ := strings.Cut(k, "{")
		if to, ok := rename[name]; ok {
			applied[name] = true
			name = to
		}
		switch {
		case name == ns+"balance_dist_sum": // rule 5
			applied["sum"] = true
			continue
		}
		if le := strings.Index(labels, `le="`); le >= 0 { // rule 2
			end := strings.IndexByte(labels[le+4:], '"') + le + 4
			bound := labels[le+4 : end]
			if f, err := strconv.ParseFloat(bound, 64); err == nil && !math.IsInf(f, 0) {
				applied["le"] = true
				labels = labels[:le+4] + strconv.FormatFloat(f, 'g', -1, 64) + labels[end:]
			}
		}
		out[name+"{"+labels] = v
	}
	for rule := range rename {
		if !applied[rule] {
			t.Errorf("zerostat's handler has no %s, which the Collector renames", rule)
		}
	}
	for _, rule := range []string{"sum", "le"} {
		if !applied[rule] {
			t.Errorf("zerostat's handler: rule %s applies nowhere; the workload or the handler changed", rule)
		}
	}
	return out
}

// diffSeries reports the series and values got and want do not share.
func diffSeries(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	var missing, extra, wrong []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			missing = append(missing, k+" "+v)
		} else if g != v {
			wrong = append(wrong, k+" "+g+", want "+v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k+" "+v)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	slices.Sort(wrong)
	if len(missing)+len(extra)+len(wrong) > 0 {
		t.Errorf("%s: missing %d:\n%s\nnot expected %d:\n%s\nwrong values %d:\n%s", what,
			len(missing), strings.Join(missing, "\n"), len(extra), strings.Join(extra, "\n"), len(wrong), strings.Join(wrong, "\n"))
	}
}

// promMeta is a metric family's metadata as Prometheus keeps it from a
// scrape (/api/v1/metadata): type, help (unescaped), unit.
type promMeta struct{ Type, Help, Unit string }

// metadata returns Prometheus's metadata of the families it scraped.
// Remote write's metadata is not kept by Prometheus 2.42, so only the
// handler's families are here.
func metadata(t *testing.T, prom *testbackend.Server) map[string]promMeta {
	t.Helper()
	body, err := prom.Get("/api/v1/metadata")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Data map[string][]promMeta `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]promMeta{}
	for name, ms := range r.Data {
		if len(ms) > 0 {
			out[name] = ms[0]
		}
	}
	return out
}

// checkHostilePdata checks the pdata each path gave the Collector: every
// view of the workload, with the type, monotonicity, unit and description
// the mapping gives, the description equal to the help Prometheus read
// from zerostat's handler (escaping undone on both), for each job.
func checkHostilePdata(t *testing.T, w *hostile.Workload, mds []pmetric.Metrics, meta map[string]promMeta) {
	t.Helper()
	ns := w.NS
	// view → pdata type (monotonic sums "sum+", others "sum"), unit, the
	// handler's family (whose help is the description) and the type
	// Prometheus read for it. prometheusremotewrite makes a "sum+" a
	// counter (_total), a "sum" and a gauge a gauge, a histogram a
	// histogram; Prometheus 2.42 keeps no metadata from remote write, so
	// the Collector's types are read from pdata and the series names.
	type want struct{ typ, unit, family, ownType string }
	wants := map[string]want{
		ns + "/requests":     {"sum+", "1", ns + "_requests_total", "counter"},
		ns + "/lat_oc":       {"histogram", "s", ns + "_lat_oc_seconds", "histogram"},
		ns + "/lat_le":       {"histogram", "s", ns + "_lat_le_seconds", "histogram"},
		ns + "/total":        {"sum+", "s", ns + "_seconds_total", "counter"},
		ns + "/last":         {"gauge", "s", ns + "_last_seconds", "gauge"},
		w.First:              {"sum+", "1", ns + "_col_x_total", "counter"},
		w.Refused:            {"sum+", "1", "", ""},                          // the handler refuses it
		ns + "/balance":      {"sum", "1", ns + "_balance_total", "unknown"}, // untyped: a counter cannot go negative
		ns + "/balance_dist": {"histogram", "1", ns + "_balance_dist", "histogram"},
		ns + "/odd_last":     {"gauge", "1", ns + "_odd_last", "gauge"},
		ns + "/odd_sum":      {"sum", "1", ns + "_odd_sum_total", "unknown"}, // untyped: NaN
		ns + "/pinf_sum":     {"sum+", "1", ns + "_pinf_sum_total", "counter"},
		ns + "/ninf_last":    {"gauge", "1", ns + "_ninf_last", "gauge"},
	}
	for name, wt := range wants {
		if m := meta[wt.family]; wt.family != "" && m.Type != wt.ownType {
			t.Errorf("%s: Prometheus read %s from zerostat's handler as %q; want %q", name, wt.family, m.Type, wt.ownType)
		}
	}
	if len(wants) != len(w.Views) {
		t.Fatalf("%d views registered; the test knows %d", len(w.Views), len(wants))
	}
	if m := meta[ns+"_requests_total"]; m.Help != w.Description || m.Type != "counter" {
		t.Errorf("Prometheus read %s as %+v from zerostat's handler; want a counter with help %q", ns+"_requests_total", m, w.Description)
	}
	seen := map[string]int{}
	colliding := map[string]int64{}
	for _, md := range mds {
		for _, rm := range md.ResourceMetrics().All() {
			job, _ := rm.Resource().Attributes().Get("service.name")
			if e, _ := rm.Resource().Attributes().Get("env"); e.Str() != w.Consts["env"] {
				t.Errorf("%s: resource env %q; want %q", job.Str(), e.Str(), w.Consts["env"])
			}
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					wt, ok := wants[m.Name()]
					if !ok {
						continue
					}
					seen[job.Str()+" "+m.Name()]++
					if m.Name() == w.First || m.Name() == w.Refused {
						colliding[job.Str()+" "+m.Name()] = m.Sum().DataPoints().At(0).IntValue()
					}
					typ := strings.ToLower(m.Type().String())
					if m.Type() == pmetric.MetricTypeSum && m.Sum().IsMonotonic() {
						typ += "+"
					}
					var help string
					if wt.family != "" {
						help = meta[wt.family].Help
						if _, ok := meta[wt.family]; !ok {
							t.Errorf("Prometheus has no metadata for %s", wt.family)
						}
					} else {
						help = "" // no description, as its measure has none
					}
					if typ != wt.typ || m.Unit() != wt.unit || m.Description() != help {
						t.Errorf("%s: %s is %s in %q, description %q; want %s in %q, description %q",
							job.Str(), m.Name(), typ, m.Unit(), m.Description(), wt.typ, wt.unit, help)
					}
				}
			}
		}
	}
	for _, job := range hostileJobs {
		// Both colliding views reach the Collector, each with its count.
		if c, r := colliding[job+" "+w.First], colliding[job+" "+w.Refused]; c != 12 || r != 2 {
			t.Errorf("%s: %s counts %d, %s %d; want 12 and 2", job, w.First, c, w.Refused, r)
		}
		for name := range wants {
			if seen[job+" "+name] != 1 {
				t.Errorf("%s: %s is in %d batches of the fileexporter; want 1", job, name, seen[job+" "+name])
			}
		}
	}
}
