package otel_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	otelglobal "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/zerostat/zerostat/exporter/prometheus"
	zotel "github.com/zerostat/zerostat/otel"
	"github.com/zerostat/zerostat/view"
)

var ctx = context.Background()

// rowsOf returns the rows of the view of instrument name as
// "k=v,k=v: data" strings, sorted.
func rowsOf(t *testing.T, p *zotel.MeterProvider, name string) []string {
	t.Helper()
	rows, err := view.RetrieveData(p.ViewName(name))
	if err != nil {
		t.Fatalf("RetrieveData(%q): %v", p.ViewName(name), err)
	}
	var out []string
	for _, r := range rows {
		var tags []string
		for _, tg := range r.Tags {
			tags = append(tags, tg.Key.Name()+"="+tg.Value)
		}
		var data string
		switch d := r.Data.(type) {
		case *view.SumData:
			data = fmt.Sprint(d.Value)
		case *view.LastValueData:
			data = fmt.Sprint(d.Value)
		case *view.DistributionData:
			data = fmt.Sprintf("n=%d min=%v max=%v sum=%v %v", d.Count, d.Min, d.Max, d.Sum(), d.CountPerBucket)
		default:
			data = fmt.Sprintf("%T", d)
		}
		out = append(out, strings.Join(tags, ",")+": "+data)
	}
	slices.Sort(out)
	return out
}

func newProvider(t *testing.T, opts ...zotel.Option) *zotel.MeterProvider {
	t.Helper()
	p := zotel.NewMeterProvider(append([]zotel.Option{zotel.WithViewPrefix(t.Name() + ".")}, opts...)...)
	t.Cleanup(func() { p.Shutdown(ctx) })
	return p
}

func check(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// TestDistinctIsHash: the instrument table keys sets by the hash inside
// attribute.Distinct; equal sets share it, different sets do not.
func TestDistinctIsHash(t *testing.T) {
	p := newProvider(t)
	c, _ := p.Meter("m").Int64Counter("c")
	a := attribute.NewSet(attribute.String("k", "a"), attribute.Int("n", 1))
	a2 := attribute.NewSet(attribute.Int("n", 1), attribute.String("k", "a"))
	b := attribute.NewSet(attribute.String("k", "b"), attribute.Int("n", 1))
	c.Add(ctx, 1, metric.WithAttributeSet(a))
	c.Add(ctx, 2, metric.WithAttributeSet(a2))
	c.Add(ctx, 4, metric.WithAttributeSet(b))
	check(t, "rows", rowsOf(t, p, "c"), "k=a,n=1: 3", "k=b,n=1: 4")
}

// TestSyncInstruments: every synchronous instrument's view and values,
// with OTel's bucket rule and default boundaries.
func TestSyncInstruments(t *testing.T) {
	p := newProvider(t)
	m := p.Meter("test")
	get := metric.WithAttributeSet(attribute.NewSet(attribute.String("method", "GET")))
	post := metric.WithAttributes(attribute.String("method", "POST"))

	ic, _ := m.Int64Counter("ic")
	ic.Add(ctx, 2, get)
	ic.Add(ctx, 3, get)
	ic.Add(ctx, 5, post)
	check(t, "Int64Counter", rowsOf(t, p, "ic"), "method=GET: 5", "method=POST: 5")

	fc, _ := m.Float64Counter("fc")
	fc.Add(ctx, 0.25, get)
	fc.Add(ctx, 0.5)
	check(t, "Float64Counter", rowsOf(t, p, "fc"), ": 0.5", "method=GET: 0.25")

	iu, _ := m.Int64UpDownCounter("iu")
	iu.Add(ctx, 3, get)
	iu.Add(ctx, -5, get)
	check(t, "Int64UpDownCounter", rowsOf(t, p, "iu"), "method=GET: -2")
	fu, _ := m.Float64UpDownCounter("fu")
	fu.Add(ctx, -1.5)
	check(t, "Float64UpDownCounter", rowsOf(t, p, "fu"), ": -1.5")
	if v := view.Find(p.ViewName("iu")); v == nil || !v.Aggregation.UpDown {
		t.Errorf("up-down counter view %+v; want an UpDownSum", v)
	}

	ig, _ := m.Int64Gauge("ig")
	ig.Record(ctx, 7, get)
	ig.Record(ctx, 4, get)
	check(t, "Int64Gauge", rowsOf(t, p, "ig"), "method=GET: 4")
	fg, _ := m.Float64Gauge("fg")
	fg.Record(ctx, 1.5)
	check(t, "Float64Gauge", rowsOf(t, p, "fg"), ": 1.5")

	// Default boundaries: 0, 5, 10, 25, ...; a value on a bound counts in
	// the bucket it closes.
	fh, _ := m.Float64Histogram("fh")
	for _, v := range []float64{0, 5, 5.5, 10, 10000, 10001} {
		fh.Record(ctx, v, get)
	}
	check(t, "Float64Histogram", rowsOf(t, p, "fh"),
		"method=GET: n=6 min=0 max=10001 sum=20021.5 [1 1 2 0 0 0 0 0 0 0 0 0 0 0 1 1]")
	ih, _ := m.Int64Histogram("ih", metric.WithExplicitBucketBoundaries(1, 2))
	for _, v := range []int64{1, 2, 3} {
		ih.Record(ctx, v)
	}
	check(t, "Int64Histogram advisory", rowsOf(t, p, "ih"), ": n=3 min=1 max=3 sum=6 [1 1 1]")
	if got := view.Find(p.ViewName("fh")).Aggregation.Buckets; !slices.Equal(got, zotel.DefaultBoundaries) {
		t.Errorf("default boundaries %v; want %v", got, zotel.DefaultBoundaries)
	}
	for _, in := range []interface{ Enabled(context.Context) bool }{ic, fc, iu, fu, ig, fg, fh, ih} {
		if !in.Enabled(ctx) {
			t.Errorf("%T not enabled", in)
		}
	}
}

// TestSameInstrument: asking again (from any meter) returns the same
// instrument; a different definition under the name is an error.
func TestSameInstrument(t *testing.T) {
	h := &handler{}
	otelglobal.SetErrorHandler(h)
	defer otelglobal.SetErrorHandler(otelglobal.ErrorHandlerFunc(func(error) {}))
	p := newProvider(t)
	a, err1 := p.Meter("a").Int64Counter("x", metric.WithUnit("s"))
	b, err2 := p.Meter("b").Int64Counter("x", metric.WithUnit("s"))
	if err1 != nil || err2 != nil {
		t.Fatalf("errors %v %v", err1, err2)
	}
	a.Add(ctx, 1)
	b.Add(ctx, 1)
	check(t, "shared", rowsOf(t, p, "x"), ": 2")
	if _, err := p.Meter("a").Float64Counter("x"); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("redefinition: error %v; want one naming x", err)
	}
	if _, err := p.Meter("a").Int64Counter("9bad"); err == nil {
		t.Error("name 9bad accepted")
	}
	// Bad advisory boundaries: the defaults are used and the error
	// returned, as the OTel SDK does (TestCornersWithSDK).
	if _, err := p.Meter("a").Int64Histogram("h", metric.WithExplicitBucketBoundaries(2, 1)); err == nil || !strings.Contains(err.Error(), "not strictly increasing") {
		t.Errorf("bad advisory boundaries: %v; want the boundaries' error", err)
	}
}

// TestCardinalityLimit: limit-1 sets, then one overflow point; totals stay
// exact.
func TestCardinalityLimit(t *testing.T) {
	p := newProvider(t, zotel.WithCardinalityLimit(3))
	c, _ := p.Meter("m").Int64Counter("c")
	for i := range 5 {
		c.Add(ctx, int64(i+1), metric.WithAttributes(attribute.Int("i", i)))
	}
	c.Add(ctx, 10, metric.WithAttributes(attribute.Int("i", 0)))
	check(t, "rows", rowsOf(t, p, "c"), "i=0: 11", "i=1: 2", "otel.metric.overflow=true: 12")
}

type handler struct {
	mu   sync.Mutex
	errs []error
}

func (h *handler) Handle(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errs = append(h.errs, err)
}

// TestAttributeKeysGrow: a key the view did not group by yet is added to
// its keys when a set brings it, as the OTel SDK keeps every attribute
// set apart; the points recorded before keep their own. Only a key or a
// value that cannot be a tag's is left out of the grouping (counted in the
// point without it) and reported, once per key.
func TestAttributeKeysGrow(t *testing.T) {
	h := &handler{}
	otelglobal.SetErrorHandler(h)
	defer otelglobal.SetErrorHandler(otelglobal.ErrorHandlerFunc(func(error) {}))
	p := newProvider(t, zotel.WithAttributeKeys("c", "declared"))
	c, _ := p.Meter("m").Int64Counter("c")
	c.Add(ctx, 1, metric.WithAttributes(attribute.String("k", "a")))
	c.Add(ctx, 2, metric.WithAttributes(attribute.String("k", "a"), attribute.String("late", "x")))
	c.Add(ctx, 4, metric.WithAttributes(attribute.String("k", "a"), attribute.String("late", "y")))
	c.Add(ctx, 8, metric.WithAttributes(attribute.String("declared", "d")))
	c.Add(ctx, 16, metric.WithAttributes(attribute.String("k", "\xff")))
	c.Add(ctx, 32, metric.WithAttributes(attribute.String("k", "a"), attribute.String("bad\x01key", "v")))
	c.Add(ctx, 64, metric.WithAttributes(attribute.Int("later", 7), attribute.String("late", "x")))
	c.Add(ctx, 128, metric.WithAttributes(attribute.String("k", "a")))
	check(t, "rows", rowsOf(t, p, "c"), ": 16", "declared=d: 8", "k=a,late=x: 2", "k=a,late=y: 4", "k=a: 161", "late=x,later=7: 64")
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.errs) != 2 || !strings.Contains(h.errs[0].Error(), `"k"`) || !strings.Contains(h.errs[1].Error(), `"bad\x01key"`) {
		t.Errorf("handled errors %v; want one naming k (its value), one naming bad\\x01key", h.errs)
	}
}

// TestAttributeKeyLimit: an instrument whose sets bring more keys than
// MaxAttributeKeys groups by the first MaxAttributeKeys; a measurement's
// attribute past them is left out of its point (which still counts it),
// reported once per key.
func TestAttributeKeyLimit(t *testing.T) {
	h := &handler{}
	otelglobal.SetErrorHandler(h)
	defer otelglobal.SetErrorHandler(otelglobal.ErrorHandlerFunc(func(error) {}))
	p := newProvider(t)
	c, _ := p.Meter("m").Int64Counter("keys")
	const n = zotel.MaxAttributeKeys + 10
	for i := range n {
		for range 2 {
			c.Add(ctx, 1, metric.WithAttributes(attribute.String(fmt.Sprintf("key%03d", i), "v")))
		}
	}
	rows := rowsOf(t, p, "keys")
	want := []string{": 20"} // the measurements of the 10 keys past the bound
	for i := range zotel.MaxAttributeKeys {
		want = append(want, fmt.Sprintf("key%03d=v: 2", i))
	}
	check(t, "rows", rows, want...)
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.errs) != 10 || !strings.Contains(h.errs[0].Error(), fmt.Sprintf(`"key%03d"`, zotel.MaxAttributeKeys)) {
		t.Errorf("handled errors %v; want 10, the first naming key%03d", h.errs, zotel.MaxAttributeKeys)
	}
}

// TestConventionKeys: an instrument of the HTTP semantic conventions keeps
// the attributes its first measurement lacked (http.route, error.type),
// and a key the convention does not define too, with nothing reported.
func TestConventionKeys(t *testing.T) {
	h := &handler{}
	otelglobal.SetErrorHandler(h)
	defer otelglobal.SetErrorHandler(otelglobal.ErrorHandlerFunc(func(error) {}))
	p := newProvider(t)
	d, _ := p.Meter("m").Float64Histogram("http.server.request.duration")
	get := attribute.String("http.request.method", "GET")
	d.Record(ctx, 1, metric.WithAttributes(get, attribute.Int("http.response.status_code", 404)))
	d.Record(ctx, 2, metric.WithAttributes(get, attribute.Int("http.response.status_code", 200), attribute.String("http.route", "/users/{id}")))
	d.Record(ctx, 4, metric.WithAttributes(get, attribute.Int("http.response.status_code", 500), attribute.String("http.route", "/users/{id}"),
		attribute.String("error.type", "500")))
	d.Record(ctx, 8, metric.WithAttributes(get, attribute.Int("http.response.status_code", 200), attribute.String("tenant", "t")))
	// OTel's default bounds (0, 5, 10, ...), upper bound inclusive.
	check(t, "rows", rowsOf(t, p, "http.server.request.duration"),
		"error.type=500,http.request.method=GET,http.response.status_code=500,http.route=/users/{id}: n=1 min=4 max=4 sum=4 [0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"http.request.method=GET,http.response.status_code=200,http.route=/users/{id}: n=1 min=2 max=2 sum=2 [0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"http.request.method=GET,http.response.status_code=200,tenant=t: n=1 min=8 max=8 sum=8 [0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"http.request.method=GET,http.response.status_code=404: n=1 min=1 max=1 sum=1 [0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0]")
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.errs) != 0 {
		t.Errorf("handled errors %v; want none", h.errs)
	}
}

// TestShutdown: the views go away, measurements are dropped.
func TestShutdown(t *testing.T) {
	p := zotel.NewMeterProvider(zotel.WithViewPrefix("shutdown."))
	c, _ := p.Meter("m").Int64Counter("c")
	c.Add(ctx, 1)
	if view.Find("shutdown.c") == nil {
		t.Fatal("no view")
	}
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	c.Add(ctx, 1)
	if view.Find("shutdown.c") != nil || c.Enabled(ctx) {
		t.Error("view still registered or instrument enabled after Shutdown")
	}
	if _, err := p.Meter("m").Int64Counter("d"); !errors.Is(err, zotel.ErrShutdown) {
		t.Errorf("creation after Shutdown: %v; want ErrShutdown", err)
	}
}

// TestAddAllocs: a measurement of a set seen before allocates nothing.
func TestAddAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations differ under -race")
	}
	p := newProvider(t)
	m := p.Meter("m")
	c, _ := m.Int64Counter("c")
	f, _ := m.Float64Counter("f")
	h, _ := m.Float64Histogram("h")
	g, _ := m.Int64Gauge("g")
	// The options slice is built once: a variadic call through the API's
	// interfaces allocates its slice (for any implementation, the SDK's
	// too), which the OTel docs advise hoisting.
	set := attribute.NewSet(attribute.String("method", "GET"), attribute.Int("code", 200))
	opt := []metric.AddOption{metric.WithAttributeSet(set)}
	ropt := []metric.RecordOption{metric.WithAttributeSet(set)}
	for name, fn := range map[string]func(){
		"Int64Counter.Add":         func() { c.Add(ctx, 1, opt...) },
		"Float64Counter.Add":       func() { f.Add(ctx, 1.5, opt...) },
		"Float64Histogram.Record":  func() { h.Record(ctx, 12, ropt...) },
		"Int64Gauge.Record":        func() { g.Record(ctx, 3, ropt...) },
		"Int64Counter.Add no attr": func() { c.Add(ctx, 1) },
	} {
		fn()
		if n := testing.AllocsPerRun(1000, fn); n != 0 {
			t.Errorf("%s: %v allocs/op; want 0", name, n)
		}
	}
}

// TestInstrumentsConcurrentSafe: goroutines released together record
// through shared and new attribute sets; the totals are exact.
func TestInstrumentsConcurrentSafe(t *testing.T) {
	p := newProvider(t)
	m := p.Meter("m")
	c, _ := m.Int64Counter("c")
	h, _ := m.Float64Histogram("h", metric.WithExplicitBucketBoundaries(10))
	const workers, each = 4, 2000
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				opt := metric.WithAttributes(attribute.Int("k", i%7))
				c.Add(ctx, 1, opt)
				h.Record(ctx, float64(w*i%20), metric.WithAttributes(attribute.Int("k", i%3)))
			}
		}()
	}
	close(start)
	wg.Wait()
	var total, n int64
	rows, _ := view.RetrieveData(p.ViewName("c"))
	for _, r := range rows {
		total += int64(r.Data.(*view.SumData).Value)
	}
	hrows, _ := view.RetrieveData(p.ViewName("h"))
	for _, r := range hrows {
		n += r.Data.(*view.DistributionData).Count
	}
	if total != workers*each || len(rows) != 7 || n != workers*each || len(hrows) != 3 {
		t.Errorf("counter total %d over %d rows, histogram count %d over %d rows; want %d over 7, %d over 3",
			total, len(rows), n, len(hrows), workers*each, workers*each)
	}
}

// TestBindConcurrentSafe: goroutines bind hundreds of new sets at once
// (the table grows under readers) and cross the cardinality limit; every
// measurement is counted once, in its set's point or the overflow point.
func TestBindConcurrentSafe(t *testing.T) {
	p := newProvider(t, zotel.WithCardinalityLimit(501))
	c, _ := p.Meter("m").Int64Counter("c")
	const workers, each, sets = 4, 3000, 700
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				c.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.Int("k", (i*13+w)%sets))))
			}
		}()
	}
	close(start)
	wg.Wait()
	rows, _ := view.RetrieveData(p.ViewName("c"))
	var total, overflow int64
	for _, r := range rows {
		v := int64(r.Data.(*view.SumData).Value)
		total += v
		if len(r.Tags) == 1 && r.Tags[0].Key == view.OverflowKey {
			overflow = v
		}
	}
	if total != workers*each || len(rows) != 501 || overflow == 0 {
		t.Errorf("total %d over %d rows (overflow %d); want %d over 500 sets and the overflow point", total, len(rows), overflow, workers*each)
	}
}

// TestPrometheusScrape: the instruments are exported by zerostat's
// Prometheus handler with OTel's types (a counter, an up-down counter as a
// gauge, a histogram with le buckets).
func TestPrometheusScrape(t *testing.T) {
	p := zotel.NewMeterProvider(zotel.WithViewPrefix("promscrape."))
	defer p.Shutdown(ctx)
	m := p.Meter("m")
	c, _ := m.Int64Counter("requests")
	u, _ := m.Int64UpDownCounter("active")
	h, _ := m.Float64Histogram("latency", metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(0.1, 1))
	get := metric.WithAttributes(attribute.String("method", "GET"))
	c.Add(ctx, 3, get)
	u.Add(ctx, 2)
	u.Add(ctx, -1)
	h.Record(ctx, 0.1, get)
	h.Record(ctx, 0.5, get)
	srv := httptest.NewServer(prometheus.NewHandler(prometheus.Options{}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		"# TYPE promscrape_requests_total counter\n",
		`promscrape_requests_total{method="GET"} 3`,
		"# TYPE promscrape_active gauge\n",
		"promscrape_active 1\n",
		`promscrape_latency_seconds_bucket{method="GET",le="0.1"} 1`,
		`promscrape_latency_seconds_bucket{method="GET",le="1.0"} 2`,
		`promscrape_latency_seconds_count{method="GET"} 2`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("scrape lacks %q; got:\n%s", want, body)
		}
	}
}

// TestFastOptionPath: the one-WithAttributeSet fast path is on for this
// otel release, and its records land where the API's path puts them
// (mixed with WithAttributes, several options and an empty set).
func TestFastOptionPath(t *testing.T) {
	if !zotel.FastOptionPath() {
		t.Fatal("the WithAttributeSet fast path is off: the otel release's option layout changed")
	}
	p := newProvider(t, zotel.WithAttributeKeys("c", "k", "n"))
	c, _ := p.Meter("m").Float64Counter("c")
	h, _ := p.Meter("m").Int64Histogram("h", metric.WithExplicitBucketBoundaries(1))
	s := attribute.NewSet(attribute.String("k", "a"))
	c.Add(ctx, 1, metric.WithAttributeSet(s))                                               // binds through the API path
	c.Add(ctx, 2, metric.WithAttributeSet(s))                                               // fast
	c.Add(ctx, 4, metric.WithAttributes(attribute.String("k", "a")))                        // API
	c.Add(ctx, 8, metric.WithAttributeSet(s), metric.WithAttributes(attribute.Int("n", 1))) // merged
	c.Add(ctx, 16, metric.WithAttributeSet(*attribute.EmptySet()))                          // empty
	c.Add(ctx, 32, metric.WithAttributeSet(attribute.Set{}))                                // zero Set
	h.Record(ctx, 1, metric.WithAttributeSet(s))
	h.Record(ctx, 2, metric.WithAttributeSet(s))
	check(t, "counter", rowsOf(t, p, "c"), ": 48", "k=a,n=1: 8", "k=a: 7")
	check(t, "histogram", rowsOf(t, p, "h"), "k=a: n=2 min=1 max=2 sum=3 [1 1]")
}
