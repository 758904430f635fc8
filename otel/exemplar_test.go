package otel_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"
	colpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	cpb "go.opentelemetry.io/proto/otlp/common/v1"
	mpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/internal/otelenv"
	zotel "github.com/zerostat/zerostat/otel"
	"github.com/zerostat/zerostat/view"
)

// nex is an exemplar as both sides are brought to: the span's ids in hex
// ("" without them), the value and the time.
type nex struct {
	trace, span string
	value       float64
	time        int64 // Unix ns
}

func (x nex) String() string {
	return fmt.Sprintf("%v{trace=%q span=%q}", x.value, x.trace, x.span)
}

// same reports whether x and y are one measurement's exemplar (not
// comparing times, which each side reads itself).
func (x nex) same(y nex) bool { return x.trace == y.trace && x.span == y.span && x.value == y.value }

// expoint is a point's exemplars, and a histogram's bounds.
type expoint struct {
	kind   string // sum, gauge, histogram
	bounds []float64
	exs    []nex
}

// expoints are the exemplars of a collection: metric name, then the
// point's attributes (attrString), then its exemplars.
type expoints map[string]map[string]*expoint

func hexOf(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return hex.EncodeToString(b)
}

// exemplarsFromOTLP decodes zerostat's OTLP request, keeping the metrics
// whose name has prefix (stripped).
func exemplarsFromOTLP(t *testing.T, body []byte, prefix string) expoints {
	t.Helper()
	var req colpb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		t.Fatalf("decoding zerostat's OTLP request: %v", err)
	}
	attrs := func(kvs []*cpb.KeyValue) string {
		var s []string
		for _, kv := range kvs {
			s = append(s, kv.Key+"="+anyString(kv.Value))
		}
		return attrString(s)
	}
	exs := func(es []*mpb.Exemplar) []nex {
		var out []nex
		for _, e := range es {
			v := e.GetAsDouble()
			if i, ok := e.Value.(*mpb.Exemplar_AsInt); ok {
				v = float64(i.AsInt)
			}
			out = append(out, nex{trace: hexOf(e.TraceId), span: hexOf(e.SpanId), value: v, time: int64(e.TimeUnixNano)})
		}
		return out
	}
	out := expoints{}
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				name, ok := strings.CutPrefix(m.Name, prefix)
				if !ok {
					continue
				}
				pts := map[string]*expoint{}
				switch d := m.Data.(type) {
				case *mpb.Metric_Sum:
					for _, p := range d.Sum.DataPoints {
						pts[attrs(p.Attributes)] = &expoint{kind: "sum", exs: exs(p.Exemplars)}
					}
				case *mpb.Metric_Gauge:
					for _, p := range d.Gauge.DataPoints {
						pts[attrs(p.Attributes)] = &expoint{kind: "gauge", exs: exs(p.Exemplars)}
					}
				case *mpb.Metric_Histogram:
					for _, p := range d.Histogram.DataPoints {
						pts[attrs(p.Attributes)] = &expoint{kind: "histogram", bounds: p.ExplicitBounds, exs: exs(p.Exemplars)}
					}
				}
				out[name] = pts
			}
		}
	}
	return out
}

// sdkExemplars brings the SDK's exemplars of one point to nex.
func sdkExemplars[N int64 | float64](es []metricdata.Exemplar[N]) []nex {
	var out []nex
	for _, e := range es {
		out = append(out, nex{trace: hexOf(e.TraceID), span: hexOf(e.SpanID), value: float64(e.Value), time: e.Time.UnixNano()})
	}
	return out
}

// span contexts of the workloads: sampled ones, and one that is not.
var (
	sampledSpans = []trace.SpanContext{spanCtx(1, true), spanCtx(2, true), spanCtx(3, true), spanCtx(4, true)}
	unsampled    = spanCtx(9, false)
)

func spanCtx(n byte, sampled bool) trace.SpanContext {
	cfg := trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 14: n, 15: 0x01},
		SpanID:  trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 7: n},
	}
	if sampled {
		cfg.TraceFlags = trace.FlagsSampled
	}
	return trace.NewSpanContext(cfg)
}

// ids returns sc's ids as nex spells them.
func ids(sc trace.SpanContext) (string, string) {
	if !sc.IsValid() {
		return "", ""
	}
	tid, sid := sc.TraceID(), sc.SpanID()
	return hex.EncodeToString(tid[:]), hex.EncodeToString(sid[:])
}

// TestExemplarFilter: the filter comes from WithExemplarFilter, else
// OTEL_METRICS_EXEMPLAR_FILTER (any case, spaces trimmed), else
// trace_based; an unrecognised value is reported through otel.Handle and
// ignored. Each filter keeps what the SDK's keeps: trace_based the
// measurements in a sampled span, always_on every one (with the span's
// ids when there is a span, sampled or not), always_off none.
func TestExemplarFilter(t *testing.T) {
	in := trace.ContextWithSpanContext(ctx, sampledSpans[0])
	inUnsampled := trace.ContextWithSpanContext(ctx, unsampled)
	tr0, sp0 := ids(sampledSpans[0])
	tr9, sp9 := ids(unsampled)
	kept := map[string][]nex{
		"trace_based": {{trace: tr0, span: sp0, value: 1}},
		"always_on":   {{trace: tr0, span: sp0, value: 1}, {trace: tr9, span: sp9, value: 20}, {value: 200}},
		"always_off":  nil,
	}
	for _, tc := range []struct {
		name string
		env  string
		opts []zotel.Option
		want string
		warn bool
	}{
		{name: "default", want: "trace_based"},
		{name: "env_always_on", env: "always_on", want: "always_on"},
		{name: "env_always_off_case", env: " ALWAYS_OFF ", want: "always_off"},
		{name: "env_trace_based", env: "Trace_Based", want: "trace_based"},
		{name: "env_unknown", env: "sometimes", want: "trace_based", warn: true},
		{name: "option_over_env", env: "always_off", opts: []zotel.Option{zotel.WithExemplarFilter(zotel.ExemplarsAlwaysOn)}, want: "always_on"},
		{name: "option_trace_based", env: "always_on", opts: []zotel.Option{zotel.WithExemplarFilter(zotel.ExemplarsTraceBased)}, want: "trace_based"},
		{name: "option_always_off", opts: []zotel.Option{zotel.WithExemplarFilter(zotel.ExemplarsAlwaysOff)}, want: "always_off"},
		{name: "option_invalid", opts: []zotel.Option{zotel.WithExemplarFilter(7)}, want: "trace_based", warn: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(zotel.EnvExemplarFilter, tc.env)
			h := &handler{}
			otel.SetErrorHandler(h)
			defer otel.SetErrorHandler(&handler{})
			p := newProvider(t, tc.opts...)
			h.mu.Lock()
			errs := h.errs
			h.mu.Unlock()
			var ignored otelenv.Ignored
			switch {
			case !tc.warn && len(errs) > 0:
				t.Errorf("reported %v", errs)
			case tc.warn && len(errs) != 1:
				t.Errorf("reported %v; want one warning", errs)
			case tc.warn && tc.env != "" && !errors.As(errs[0], &ignored):
				t.Errorf("reported %v; want an otelenv.Ignored", errs[0])
			case tc.warn && tc.env != "" && !strings.Contains(errs[0].Error(), zotel.EnvExemplarFilter):
				t.Errorf("reported %v; want the variable named", errs[0])
			}
			hist, _ := p.Meter("m").Float64Histogram("h", metric.WithExplicitBucketBoundaries(10, 100))
			enc, err := otlp.NewEncoder(otlp.Cumulative, exporter.Resource{})
			if err != nil {
				t.Fatal(err)
			}
			hist.Record(in, 1)
			hist.Record(inUnsampled, 20)
			hist.Record(ctx, 200)
			got := exemplarsFromOTLP(t, enc.Encode(time.Now()), p.ViewName(""))["h"][""]
			if got == nil {
				t.Fatal("no histogram point")
			}
			want := kept[tc.want]
			if len(got.exs) != len(want) {
				t.Fatalf("exemplars %v; want %v (%s)", got.exs, want, tc.want)
			}
			for i := range want {
				if !got.exs[i].same(want[i]) {
					t.Errorf("exemplar %d: %v; want %v (%s)", i, got.exs[i], want[i], tc.want)
				}
			}
		})
	}
	if s := zotel.ExemplarsAlwaysOff.String(); s != "always_off" {
		t.Errorf("String: %q", s)
	}
}

// TestExemplarsExported: a histogram keeps, per point and bucket, the
// latest measurement made in a sampled span, with the span's ids; a
// counter and a gauge keep theirs in a reservoir per point (here, of at
// least 2 slots, the first offers in order); zerostat's OTLP encoder
// writes them all (bytes that are protobuf-go's for the message they
// decode to), its Prometheus handler (OpenMetrics) the histogram's and
// the counter's newest (none on a gauge's line); the measurements
// outside a span or in one not sampled keep none (see Exemplars in the
// package documentation).
func TestExemplarsExported(t *testing.T) {
	atLeastProcs(t, 2)
	p := newProvider(t)
	m := p.Meter("m")
	h, _ := m.Int64Histogram("latency", metric.WithUnit("ms"), metric.WithExplicitBucketBoundaries(10, 100))
	c, _ := m.Float64Counter("requests")
	g, _ := m.Int64Gauge("level")
	get := metric.WithAttributeSet(attribute.NewSet(attribute.String("method", "GET")))
	in := func(sc trace.SpanContext) context.Context { return trace.ContextWithSpanContext(ctx, sc) }
	before := time.Now()
	h.Record(in(sampledSpans[0]), 7, get)  // le=10, replaced
	h.Record(in(sampledSpans[1]), 10, get) // le=10 (upper-inclusive), the latest
	h.Record(in(unsampled), 3, get)        // le=10, not sampled: not kept
	h.Record(ctx, 5, get)                  // no span
	h.Record(in(sampledSpans[2]), 50, get) // le=100
	h.Record(in(sampledSpans[3]), 500)     // +Inf, another point
	c.Add(in(sampledSpans[0]), 1, get)
	c.Add(in(unsampled), 8, get) // not sampled: not offered
	c.Add(in(sampledSpans[1]), 2, get)
	c.Add(ctx, 4, get) // no span
	g.Record(in(sampledSpans[2]), 4, get)
	after := time.Now()

	enc, err := otlp.NewEncoder(otlp.Cumulative, exporter.Resource{})
	if err != nil {
		t.Fatal(err)
	}
	body := enc.Encode(time.Now())
	got := exemplarsFromOTLP(t, body, p.ViewName(""))
	var req colpb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	if canon, err := (proto.MarshalOptions{Deterministic: true}).Marshal(&req); err != nil || string(canon) != string(body) {
		t.Errorf("zerostat's %d bytes are not protobuf-go's %d for the message they decode to (%v)", len(body), len(canon), err)
	}
	want := func(sc trace.SpanContext, v float64) nex {
		tr, sp := ids(sc)
		return nex{trace: tr, span: sp, value: v}
	}
	for _, tc := range []struct {
		metric, attrs string
		want          []nex
	}{
		{"latency", "method=STRING:GET", []nex{want(sampledSpans[1], 10), want(sampledSpans[2], 50)}},
		{"latency", "", []nex{want(sampledSpans[3], 500)}},
		{"requests", "method=STRING:GET", []nex{want(sampledSpans[0], 1), want(sampledSpans[1], 2)}},
		{"level", "method=STRING:GET", []nex{want(sampledSpans[2], 4)}},
	} {
		pt := got[tc.metric][tc.attrs]
		if pt == nil {
			t.Fatalf("%s{%s}: no point in %v", tc.metric, tc.attrs, got)
		}
		if len(pt.exs) != len(tc.want) {
			t.Errorf("%s{%s}: exemplars %v; want %v", tc.metric, tc.attrs, pt.exs, tc.want)
			continue
		}
		for i, x := range pt.exs {
			if !x.same(tc.want[i]) || x.time < before.UnixNano() || x.time > after.UnixNano() {
				t.Errorf("%s{%s}: exemplar %d: %v at %v; want %v between %v and %v", tc.metric, tc.attrs, i, x, x.time, tc.want[i], before, after)
			}
		}
	}

	// OpenMetrics: the same exemplars on the bucket lines, the counter's
	// newest on its _total line, none on the gauge's (OpenMetrics has no
	// gauge exemplars).
	name := strings.ReplaceAll(p.ViewName("latency"), ".", "_") + "_milliseconds_bucket"
	om := string(prometheus.NewHandler(prometheus.Options{}).AppendFormat(nil, prometheus.FormatOpenMetrics))
	var lines []string
	for l := range strings.SplitSeq(om, "\n") {
		if strings.HasPrefix(l, name+"{") {
			// Cut the exemplar's timestamp, checked below.
			if i := strings.LastIndexByte(l, ' '); strings.Contains(l, "#") {
				sec, err := strconv.ParseFloat(l[i+1:], 64)
				if err != nil || sec < float64(before.UnixNano())/1e9-1e-3 || sec > float64(after.UnixNano())/1e9+1e-3 {
					t.Errorf("line %q: exemplar timestamp not within the records' time", l)
				}
				l = l[:i]
			}
			lines = append(lines, l)
		}
	}
	check(t, "OpenMetrics bucket lines", lines,
		name+`{le="10.0"} 0`,
		name+`{le="100.0"} 0`,
		name+`{le="+Inf"} 1 # {trace_id="4bf92f35000000000000000000000401",span_id="00f067aa00000004"} 500.0`,
		name+`{method="GET",le="10.0"} 4 # {trace_id="4bf92f35000000000000000000000201",span_id="00f067aa00000002"} 10.0`,
		name+`{method="GET",le="100.0"} 5 # {trace_id="4bf92f35000000000000000000000301",span_id="00f067aa00000003"} 50.0`,
		name+`{method="GET",le="+Inf"} 5`,
	)
	counter := strings.ReplaceAll(p.ViewName("requests"), ".", "_") + "_total"
	prefix := counter + `{method="GET"} 15.0 # {trace_id="4bf92f35000000000000000000000201",span_id="00f067aa00000002"} 2.0 `
	line := ""
	for l := range strings.SplitSeq(om, "\n") {
		if strings.HasPrefix(l, counter+"{") {
			line = l
		}
	}
	if sec, err := strconv.ParseFloat(strings.TrimPrefix(line, prefix), 64); !strings.HasPrefix(line, prefix) || err != nil ||
		sec < float64(before.UnixNano())/1e9-1e-3 || sec > float64(after.UnixNano())/1e9+1e-3 {
		t.Errorf("OpenMetrics counter line %q; want %q and the record's time", line, prefix)
	}
	if gauge := strings.ReplaceAll(p.ViewName("level"), ".", "_"); !strings.Contains(om, gauge+`{method="GET"} 4.0`+"\n") {
		t.Errorf("OpenMetrics lacks %s without an exemplar:\n%s", gauge, om)
	}
}

// atLeastProcs raises GOMAXPROCS to n for the test, when it is lower: a
// reservoir made meanwhile has n slots at least (the SDK's size), so a
// test's first n offers to a point are all kept, in order.
func atLeastProcs(t *testing.T, n int) {
	if was := runtime.GOMAXPROCS(0); was < n {
		runtime.GOMAXPROCS(n)
		t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	}
}

// TestExemplarAllocs: a measurement outside a span, in a span not
// sampled, or under always_off allocates nothing; one kept as an
// exemplar (a histogram's, a counter's or a gauge's) allocates the
// exemplar (48 bytes), as a record with attachments does in zerostat's
// core.
func TestExemplarAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations differ under -race")
	}
	in := trace.ContextWithSpanContext(ctx, sampledSpans[0])
	inUnsampled := trace.ContextWithSpanContext(ctx, unsampled)
	values := requestCtx(ctx)
	set := attribute.NewSet(attribute.String("method", "GET"))
	opt := []metric.AddOption{metric.WithAttributeSet(set)}
	ropt := []metric.RecordOption{metric.WithAttributeSet(set)}
	for _, f := range []zotel.ExemplarFilter{zotel.ExemplarsTraceBased, zotel.ExemplarsAlwaysOn, zotel.ExemplarsAlwaysOff} {
		p := newProvider(t, zotel.WithViewPrefix(fmt.Sprintf("%s.%s.", t.Name(), f)), zotel.WithExemplarFilter(f))
		m := p.Meter("m")
		c, _ := m.Int64Counter("c")
		ud, _ := m.Float64UpDownCounter("ud")
		g, _ := m.Int64Gauge("g")
		h, _ := m.Float64Histogram("h")
		ih, _ := m.Int64Histogram("ih")
		kept := 0.0
		if f != zotel.ExemplarsAlwaysOff {
			kept = 1
		}
		on := 0.0
		if f == zotel.ExemplarsAlwaysOn {
			on = 1
		}
		for _, tc := range []struct {
			name string
			fn   func()
			want float64
		}{
			{"counter no span", func() { c.Add(ctx, 1, opt...) }, on},
			{"counter values no span", func() { c.Add(values, 1, opt...) }, on},
			{"counter TODO", func() { c.Add(context.TODO(), 1, opt...) }, on},
			{"counter unsampled", func() { c.Add(inUnsampled, 1, opt...) }, on},
			{"counter sampled", func() { c.Add(in, 1, opt...) }, kept},
			{"counter no attributes sampled", func() { c.Add(in, 1) }, kept},
			{"updowncounter no span", func() { ud.Add(values, -1, opt...) }, on},
			{"updowncounter sampled", func() { ud.Add(in, -1, opt...) }, kept},
			{"gauge no span", func() { g.Record(values, 3, ropt...) }, on},
			{"gauge sampled", func() { g.Record(in, 3, ropt...) }, kept},
			{"histogram no span", func() { h.Record(ctx, 12, ropt...) }, on},
			{"histogram values no span", func() { h.Record(values, 12, ropt...) }, on},
			{"histogram nil context", func() { h.Record(nil, 12, ropt...) }, on}, //nolint:staticcheck // the API allows it
			{"histogram unsampled", func() { h.Record(inUnsampled, 12, ropt...) }, on},
			{"histogram sampled", func() { h.Record(in, 12, ropt...) }, kept},
			{"int histogram sampled", func() { ih.Record(in, 12, ropt...) }, kept},
		} {
			tc.fn()
			if n := testing.AllocsPerRun(1000, tc.fn); n != tc.want {
				t.Errorf("%s, %s: %v allocs/op; want %v", f, tc.name, n, tc.want)
			}
		}
		if f == zotel.ExemplarsTraceBased {
			r := testing.Benchmark(func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					h.Record(in, 12, ropt...)
				}
			})
			if r.AllocedBytesPerOp() != 48 {
				t.Errorf("histogram sampled: %d B/op; want 48 (the exemplar)", r.AllocedBytesPerOp())
			}
			r = testing.Benchmark(func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					c.Add(in, 1, opt...)
				}
			})
			if r.AllocedBytesPerOp() != 48 {
				t.Errorf("counter sampled: %d B/op; want 48 (the exemplar)", r.AllocedBytesPerOp())
			}
		}
	}
}

// TestExemplarsConcurrentSafe: goroutines released together record into
// one histogram in sampled spans of their own; the counts are exact and
// every bucket's exemplar is one of the measurements of that bucket, with
// its goroutine's span.
func TestExemplarsConcurrentSafe(t *testing.T) {
	p := newProvider(t)
	h, _ := p.Meter("m").Int64Histogram("h", metric.WithExplicitBucketBoundaries(10, 100))
	set := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("k", "v")))}
	const workers, each = 4, 3000
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := trace.ContextWithSpanContext(ctx, sampledSpans[w])
			<-start
			for i := range each {
				// Worker w records values whose last digit is w.
				h.Record(c, int64((i%30)*10+w), set...)
			}
		}()
	}
	close(start)
	wg.Wait()
	enc, err := otlp.NewEncoder(otlp.Cumulative, exporter.Resource{})
	if err != nil {
		t.Fatal(err)
	}
	pt := exemplarsFromOTLP(t, enc.Encode(time.Now()), p.ViewName(""))["h"]["k=STRING:v"]
	if pt == nil || len(pt.exs) != 3 {
		t.Fatalf("exemplars %+v; want one per bucket", pt)
	}
	for i, x := range pt.exs {
		w := int(x.value) % 10
		tr, sp := ids(sampledSpans[w])
		if x.trace != tr || x.span != sp || bucketOf(pt.bounds, x.value) != i {
			t.Errorf("bucket %d: exemplar %v; want a value of that bucket with worker %d's span", i, x, w)
		}
	}
	rows, _ := view.RetrieveData(p.ViewName("h"))
	if len(rows) != 1 || rows[0].Data.(*view.DistributionData).Count != workers*each {
		t.Errorf("rows %v; want one of count %d", rows, workers*each)
	}
}

// bucketOf is the index of v's bucket among bounds, b[i-1] < v <= b[i]
// (the SDK's sort.SearchFloat64s).
func bucketOf(bounds []float64, v float64) int {
	i, _ := slices.BinarySearch(bounds, v)
	if math.IsNaN(v) {
		return len(bounds)
	}
	return i
}
