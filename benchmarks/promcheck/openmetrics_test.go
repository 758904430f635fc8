package promcheck

import (
	"context"
	"fmt"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"

	zsprom "github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// Accept headers of a scrape: OpenMetrics 1.0.0 (as Prometheus asks for
// it) and the text format 0.0.4.
const (
	omAccept   = "application/openmetrics-text; version=1.0.0"
	textAccept = "text/plain; version=0.0.4"
)

// scrape serves one GET with the Accept header through h and returns the
// body and the media type and version of its Content-Type (client_golang
// adds an "escaping" parameter, zerostat a charset: neither compared).
func scrape(t testing.TB, h http.Handler, accept string) (body, mediaType, version string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", accept)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %.300s", rec.Code, rec.Body.String())
	}
	mt, params, err := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type %q: %v", rec.Header().Get("Content-Type"), err)
	}
	return rec.Body.String(), mt, params["version"]
}

// promHandler serves g as client_golang's promhttp does with OpenMetrics
// negotiable and its "_created" lines on (client_golang v1.25.0 writes
// them only with EnableOpenMetricsTextCreatedSamples).
func promHandler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{EnableOpenMetrics: true, EnableOpenMetricsTextCreatedSamples: true})
}

// createdAt gives client_golang's series zerostat's creation times, so
// that "_created" lines compare exactly (not normalised): it wraps g,
// setting the created timestamp of every counter and histogram series of
// family name to starts[name]. client_golang stamps a series with the
// time its child was created; zerostat with its view's start, when the
// view was registered (delta.CumulativeStart; no series here is
// re-created), which viewStarts reads and checks. A counter or histogram
// family without a start fails the scrape (status 500), so no series
// keeps client_golang's own time.
func createdAt(g prometheus.Gatherer, starts map[string]time.Time) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := g.Gather()
		if err != nil {
			return nil, err
		}
		for _, mf := range mfs {
			if t := mf.GetType(); t != dto.MetricType_COUNTER && t != dto.MetricType_HISTOGRAM {
				continue
			}
			start, ok := starts[mf.GetName()]
			if !ok {
				return nil, fmt.Errorf("no start for family %s", mf.GetName())
			}
			for _, m := range mf.Metric {
				if m.Counter != nil {
					m.Counter.CreatedTimestamp = timestamppb.New(start)
				}
				if m.Histogram != nil {
					m.Histogram.CreatedTimestamp = timestamppb.New(start)
				}
			}
		}
		return mfs, nil
	})
}

// viewStarts returns, per client_golang family name, the start of the
// zerostat view views[name] names, and fails t unless it lies within
// [from, to] (when the views were registered).
func viewStarts(t testing.TB, views map[string]string, from, to time.Time) map[string]time.Time {
	t.Helper()
	registered := map[string]*core.View{}
	for _, v := range core.Views() {
		registered[v.Name] = v
	}
	starts := map[string]time.Time{}
	for fam, name := range views {
		v := registered[name]
		if v == nil {
			t.Fatalf("view %s not registered", name)
		}
		start := v.Agg.Start()
		if start.Before(from) || start.After(to) {
			t.Fatalf("view %s starts at %v; registered between %v and %v", name, start, from, to)
		}
		starts[fam] = start
	}
	return starts
}

// countLines returns the number of lines of text that start with prefix
// and contain sub.
func countLines(text, prefix, sub string) int {
	n := 0
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(l, prefix) && strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

// zerostat's OpenMetrics exposition of the fixture (5,000 counter and
// 5,000 histogram series) is byte for byte what client_golang's promhttp
// handler writes for the same series, "# UNIT" and "_created" lines
// included, both negotiated by the same Accept header.
func TestOpenMetricsMatchesClientGolang(t *testing.T) {
	zerostatFixture(t)
	views := map[string]string{}
	for j := range nMetrics {
		views[promName(j)] = viewName(j)
	}
	starts := viewStarts(t, views, zsRegistered[0], zsRegistered[1])
	ours, omt, over := scrape(t, zsprom.NewHandler(zsprom.Options{}), omAccept)
	theirs, tmt, tver := scrape(t, promHandler(createdAt(promRegistry(), starts)), omAccept)
	if omt != "application/openmetrics-text" || omt != tmt || over != "1.0.0" || over != tver {
		t.Fatalf("Content-Type %s version %s; client_golang %s version %s", omt, over, tmt, tver)
	}
	for _, b := range []string{ours, theirs} {
		if !strings.HasSuffix(b, "\n# EOF\n") {
			t.Fatalf("no final # EOF: ...%s", b[max(0, len(b)-100):])
		}
	}
	// Unlike the text format, "le" needs no respelling: client_golang
	// writes OpenMetrics's canonical numbers too.
	o, th := only([]byte(ours)), only([]byte(theirs))
	sameLines(t, o, th)
	// What the comparison covered: every series' sample and _created
	// line, each histogram's # UNIT.
	if n := countLines(th, namePrefix, "_created{"); n != nSeries {
		t.Errorf("client_golang wrote %d _created lines; want %d", n, nSeries)
	}
	if n := countLines(th, "# UNIT "+namePrefix, " milliseconds"); n != nMetrics-nCounters {
		t.Errorf("client_golang wrote %d # UNIT lines; want %d", n, nMetrics-nCounters)
	}
	if n := countLines(th, namePrefix, "_total{"); n != nCounters*perMetric {
		t.Errorf("client_golang wrote %d counter samples; want %d", n, nCounters*perMetric)
	}
}

// kindsSeries is what one series of the every-kind fixture records: the
// two tag values and the values of each measure.
type kindsSeries struct {
	code, route string
	latency     []float64 // kinds/latency (ms): the Count and the Distribution
	halfMs      int       // that many more latencies of 0.5 ms
	bytes       []int64   // kinds/bytes (By): a Sum of an Int64 measure
	busy        []float64 // kinds/busy (s): a Sum of a Float64 measure
	queue       []int64   // kinds/queue (1): an UpDownSum
	heap        []int64   // kinds/heap (By): a LastValue of an Int64 measure
	temp        []float64 // kinds/temp (Cel): a LastValue of a Float64 measure
}

// kindsFixture: small values (printed "3" in the text format and "3.0" in
// OpenMetrics), fractions, counts and values of a million or more (where
// client_golang's floats switch to an exponent, "1.000001e+06", but
// OpenMetrics' bucket counts stay integers), values on histogram bounds
// (upper-inclusive buckets, client_golang's rule), a negative gauge, a
// gauge last set to -0 (client_golang writes 0).
var kindsFixture = []kindsSeries{
	{code: "200", route: "/a", latency: []float64{0.5, 1, 7}, bytes: []int64{1024, 512}, busy: []float64{0.25, 1.5},
		queue: []int64{5, -8}, heap: []int64{4096, 2_000_000}, temp: []float64{21.5}},
	{code: "500", route: "/b", halfMs: 1_000_001, bytes: []int64{1_000_000, 500_000}, busy: []float64{2, 1},
		queue: []int64{2}, heap: []int64{7}, temp: []float64{3, math.Copysign(0, -1)}},
}

// kindsBounds are the Distribution's bounds, the histogram's buckets.
var kindsBounds = []float64{0.5, 1, 2.5, 1000}

// kindsViews are the client_golang family names of the every-kind
// fixture's counters and histograms and the zerostat views they mirror.
var kindsViews = map[string]string{
	"kinds_requests_total":       "kinds/requests",
	"kinds_read_bytes_total":     "kinds/read",
	"kinds_busy_seconds_total":   "kinds/busy",
	"kinds_latency_milliseconds": "kinds/latency",
}

// registerKinds registers a view of every kind (Count, Sum of an Int64
// and of a Float64 measure, UpDownSum, LastValue of an Int64 and of a
// Float64 measure, Distribution), with units, and records kindsFixture.
// It returns when the views were registered.
func registerKinds(t *testing.T) (from, to time.Time) {
	lat := stats.Float64("kinds/latency", "Request latency", stats.UnitMilliseconds)
	byt := stats.Int64("kinds/bytes", "Bytes read", stats.UnitBytes)
	busy := stats.Float64("kinds/busy", "Busy time", stats.UnitSeconds)
	queue := stats.Int64("kinds/queue", "Queue changes", stats.UnitDimensionless)
	heap := stats.Int64("kinds/heap", "Heap in use", stats.UnitBytes)
	temp := stats.Float64("kinds/temp", "Temperature", "Cel")
	code, route := tag.MustNewKey("code"), tag.MustNewKey("route")
	keys := func() []tag.Key { return []tag.Key{route, code} } // Register sorts them in place
	vs := []*view.View{
		{Name: "kinds/requests", Description: "Requests served.", Measure: lat, Aggregation: view.Count(), TagKeys: keys()},
		{Name: "kinds/read", Description: "Bytes read.", Measure: byt, Aggregation: view.Sum(), TagKeys: keys()},
		{Name: "kinds/busy", Description: `Time "busy" \ total.`, Measure: busy, Aggregation: view.Sum(), TagKeys: keys()},
		{Name: "kinds/queue", Description: "Queue length.", Measure: queue, Aggregation: view.UpDownSum(), TagKeys: keys()},
		{Name: "kinds/heap", Description: "Heap in use.", Measure: heap, Aggregation: view.LastValue(), TagKeys: keys()},
		{Name: "kinds/temp", Description: "Temperature.", Measure: temp, Aggregation: view.LastValue(), TagKeys: keys()},
		{Name: "kinds/latency", Description: "Request latency.", Measure: lat, Aggregation: view.DistributionUpperInclusive(kindsBounds...), TagKeys: keys()},
	}
	from = time.Now()
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	to = time.Now()
	t.Cleanup(func() { view.Unregister(vs...) })
	for _, s := range kindsFixture {
		ctx, err := tag.New(context.Background(), tag.Upsert(code, s.code), tag.Upsert(route, s.route))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range s.latency {
			stats.Record(ctx, lat.M(v))
		}
		for range s.halfMs {
			stats.Record(ctx, lat.M(0.5))
		}
		for _, v := range s.bytes {
			stats.Record(ctx, byt.M(v))
		}
		for _, v := range s.busy {
			stats.Record(ctx, busy.M(v))
		}
		for _, v := range s.queue {
			stats.Record(ctx, queue.M(v))
		}
		for _, v := range s.heap {
			stats.Record(ctx, heap.M(v))
		}
		for _, v := range s.temp {
			stats.Record(ctx, temp.M(v))
		}
	}
	return from, to
}

// kindsRegistry builds the every-kind fixture in a fresh client_golang
// registry: the names, help, units and constant label zerostat gives the
// views (Options.ConstLabels env="test"), counters, gauges and a
// histogram holding the same values.
func kindsRegistry() *prometheus.Registry {
	labels := []string{"code", "route"}
	cl := prometheus.Labels{"env": "test"}
	counter := func(name, help, unit string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help, Unit: unit, ConstLabels: cl}, labels)
	}
	gauge := func(name, help, unit string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help, Unit: unit, ConstLabels: cl}, labels)
	}
	requests := counter("kinds_requests_total", "Requests served.", "") // a Count's unit is "1": no # UNIT
	read := counter("kinds_read_bytes_total", "Bytes read.", "bytes")
	busy := counter("kinds_busy_seconds_total", `Time "busy" \ total.`, "seconds")
	queue := gauge("kinds_queue", "Queue length.", "")
	heap := gauge("kinds_heap_bytes", "Heap in use.", "bytes")
	temp := gauge("kinds_temp_celsius", "Temperature.", "celsius")
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kinds_latency_milliseconds", Help: "Request latency.",
		Unit: "milliseconds", ConstLabels: cl, Buckets: kindsBounds}, labels)
	reg := prometheus.NewRegistry()
	reg.MustRegister(requests, read, busy, queue, heap, temp, latency)
	for _, s := range kindsFixture {
		ls := prometheus.Labels{"code": s.code, "route": s.route}
		for _, v := range s.latency {
			requests.With(ls).Inc()
			latency.With(ls).Observe(v)
		}
		for range s.halfMs {
			requests.With(ls).Inc()
			latency.With(ls).Observe(0.5)
		}
		for _, v := range s.bytes {
			read.With(ls).Add(float64(v))
		}
		for _, v := range s.busy {
			busy.With(ls).Add(v)
		}
		for _, v := range s.queue {
			queue.With(ls).Add(float64(v))
		}
		for _, v := range s.heap {
			heap.With(ls).Set(float64(v))
		}
		for _, v := range s.temp {
			temp.With(ls).Set(v)
		}
	}
	return reg
}

// For a view of every kind, with units and a constant label, zerostat's
// exposition is byte for byte client_golang's promhttp handler's in both
// formats (but for "le" in the text format, spelled as in OpenMetrics:
// TestTextMatchesClientGolang), OpenMetrics with its "# UNIT" and
// "_created" lines.
func TestEveryKindMatchesClientGolang(t *testing.T) {
	from, to := registerKinds(t)
	starts := viewStarts(t, kindsViews, from, to)
	ours := zsprom.NewHandler(zsprom.Options{ConstLabels: map[string]string{"env": "test"}})
	theirs := promHandler(createdAt(kindsRegistry(), starts))
	for _, c := range []struct {
		name, accept, mediaType, version string
		le                               func(string) string
		// want are lines client_golang writes (so the comparison
		// covers them): a Count's sample under a million and above, a
		// histogram's bucket count above, an Int64 Sum above, a gauge
		// last set to -0.
		want []string
	}{
		{"text", textAccept, "text/plain", "0.0.4", canonicalLe, []string{
			`kinds_requests_total{code="200",env="test",route="/a"} 3`,
			`kinds_requests_total{code="500",env="test",route="/b"} 1.000001e+06`,
			`kinds_latency_milliseconds_bucket{code="500",env="test",route="/b",le="0.5"} 1.000001e+06`,
			`kinds_latency_milliseconds_count{code="500",env="test",route="/b"} 1.000001e+06`,
			`kinds_read_bytes_total{code="500",env="test",route="/b"} 1.5e+06`,
			`kinds_temp_celsius{code="500",env="test",route="/b"} 0`,
		}},
		{"openmetrics", omAccept, "application/openmetrics-text", "1.0.0", func(s string) string { return s }, []string{
			`kinds_requests_total{code="200",env="test",route="/a"} 3.0`,
			`kinds_requests_total{code="500",env="test",route="/b"} 1.000001e+06`,
			`kinds_latency_milliseconds_bucket{code="500",env="test",route="/b",le="0.5"} 1000001`,
			`kinds_latency_milliseconds_count{code="500",env="test",route="/b"} 1000001`,
			`kinds_read_bytes_total{code="500",env="test",route="/b"} 1.5e+06`,
			`kinds_temp_celsius{code="500",env="test",route="/b"} 0.0`,
			`# UNIT kinds_read_bytes bytes`,
			`kinds_latency_milliseconds_created{code="200",env="test",route="/a"} ` + omSeconds(starts["kinds_latency_milliseconds"]),
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, omt, over := scrape(t, ours, c.accept)
			th, tmt, tver := scrape(t, theirs, c.accept)
			if omt != c.mediaType || tmt != c.mediaType || over != c.version || tver != c.version {
				t.Fatalf("Content-Type %s version %s; client_golang %s version %s; want %s version %s", omt, over, tmt, tver, c.mediaType, c.version)
			}
			o, th = linesOf(o, "kinds_"), c.le(linesOf(th, "kinds_"))
			for _, w := range c.want {
				if !slices.Contains(strings.Split(th, "\n"), w) {
					t.Errorf("client_golang wrote no line %s:\n%s", w, th)
				}
			}
			sameLines(t, o, th)
			if n := countLines(th, "# TYPE ", ""); n != 7 {
				t.Errorf("%d families; want 7:\n%s", n, th)
			}
			om := c.name == "openmetrics"
			// # UNIT: the Sums in By and s, the LastValues in By and Cel,
			// the Distribution in ms; _created: the 3 counters' and the
			// histogram's 2 series each.
			if n, want := countLines(th, "# UNIT ", ""), map[bool]int{true: 5}[om]; n != want {
				t.Errorf("%d # UNIT lines; want %d", n, want)
			}
			if n, want := countLines(th, "kinds_", "_created{"), map[bool]int{true: 8}[om]; n != want {
				t.Errorf("%d _created lines; want %d", n, want)
			}
		})
	}
}

// omSeconds formats t as client_golang writes a _created value, in
// seconds (the line holding it is looked for in client_golang's output).
func omSeconds(t time.Time) string {
	return string(promname.AppendOpenMetricsFloat(nil, float64(t.UnixNano())/1e9))
}
