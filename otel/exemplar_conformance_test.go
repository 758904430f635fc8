package otel_test

// Differential test of exemplars against the OTel SDK v1.47.0: one seeded
// workload, whose measurements are made outside a span, in a span not
// sampled and in sampled spans, recorded through the SDK (its
// ManualReader, with the SDK's exemplar filter of the same name) and
// through zerostat (its OTLP encoder's bytes), collected after each
// round; every point's exemplars are compared with what each side must
// keep of the measurements its filter offered.
//
// The SDK's histogram reservoir samples one of the measurements offered
// to a bucket in a collection cycle (Algorithm L, k=1: the first, then
// each later one with a decreasing probability); zerostat keeps the
// latest. Where the last cycle with offers to a bucket had one, both
// must be that measurement, identical (trace id, span id, value); where it
// had several, zerostat's must be the latest and the SDK's one of them.
// A bucket with no offer yet (or, in delta temporality, none in the
// cycle) has no exemplar on either side. The sparse histogram gets at
// most one measurement per bucket and cycle: every exemplar of it is
// compared for identity.
//
// zerostat's counters, up-down counters and gauges keep no exemplars
// (package documentation, Differences from the OTel SDK): the test checks
// that they have none and that the SDK's are among the offered
// measurements, and counts them.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	zotel "github.com/zerostat/zerostat/otel"
)

// exemplarsFromSDK brings the SDK's collection to expoints.
func exemplarsFromSDK(rm *metricdata.ResourceMetrics) expoints {
	out := expoints{}
	attrs := func(s attribute.Set) string {
		var kvs []string
		for it := s.Iter(); it.Next(); {
			kv := it.Attribute()
			kvs = append(kvs, string(kv.Key)+"="+kv.Value.Type().String()+":"+kv.Value.Emit())
		}
		return attrString(kvs)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			pts := map[string]*expoint{}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					pts[attrs(p.Attributes)] = &expoint{kind: "sum", exs: sdkExemplars(p.Exemplars)}
				}
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					pts[attrs(p.Attributes)] = &expoint{kind: "sum", exs: sdkExemplars(p.Exemplars)}
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					pts[attrs(p.Attributes)] = &expoint{kind: "gauge", exs: sdkExemplars(p.Exemplars)}
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					pts[attrs(p.Attributes)] = &expoint{kind: "gauge", exs: sdkExemplars(p.Exemplars)}
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					pts[attrs(p.Attributes)] = &expoint{kind: "histogram", bounds: p.Bounds, exs: sdkExemplars(p.Exemplars)}
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					pts[attrs(p.Attributes)] = &expoint{kind: "histogram", bounds: p.Bounds, exs: sdkExemplars(p.Exemplars)}
				}
			}
			out[m.Name] = pts
		}
	}
	return out
}

// exInst is one instrument in both SDKs.
type exInst struct {
	name          string
	kind          zotel.Kind
	isInt         bool
	bounds        []float64
	sparse        bool // at most one measurement per bucket and cycle
	sdkI, zsI     any
	sdkOpt, zsOpt []metric.HistogramOption
}

// offers are the measurements a filter offered, per instrument, point
// and cycle, in order; for histograms per bucket too (key "point#b").
type offers map[string]map[string]map[int][]nex

func (o offers) add(inst, point string, cycle int, x nex) {
	if o[inst] == nil {
		o[inst] = map[string]map[int][]nex{}
	}
	if o[inst][point] == nil {
		o[inst][point] = map[int][]nex{}
	}
	o[inst][point][cycle] = append(o[inst][point][cycle], x)
}

// last returns the offers of the latest cycle up to cycle that had some
// (only cycle itself when delta), and that cycle.
func (o offers) last(inst, point string, cycle int, delta bool) ([]nex, int) {
	byCycle := o[inst][point]
	for c := cycle; c >= 0; c-- {
		if xs := byCycle[c]; len(xs) > 0 {
			return xs, c
		}
		if delta {
			break
		}
	}
	return nil, -1
}

// exCtx is where a measurement is made: outside a span, in the span not
// sampled, or in one of the sampled ones.
type exCtx struct {
	ctx     context.Context
	sc      trace.SpanContext
	sampled bool
}

func exContexts() []exCtx {
	out := []exCtx{{ctx: ctx}, {ctx: trace.ContextWithSpanContext(ctx, unsampled), sc: unsampled}}
	for _, sc := range sampledSpans {
		out = append(out, exCtx{ctx: trace.ContextWithSpanContext(ctx, sc), sc: sc, sampled: true})
	}
	// A remote parent's sampled span context, as propagation extracts it,
	// under a request's values.
	rsc := spanCtx(5, true)
	out = append(out, exCtx{ctx: requestCtx(trace.ContextWithRemoteSpanContext(ctx, rsc)), sc: rsc.WithRemote(true), sampled: true})
	// A request's values without a span.
	return append(out, exCtx{ctx: requestCtx(ctx)})
}

// offered reports whether filter f offers a measurement made in c, and
// its exemplar's ids: those of c's span when there is one (sampled or
// not), as the SDK's measurement.exemplar writes them.
func offered(f zotel.ExemplarFilter, c exCtx, v float64) (nex, bool) {
	tr, sp := ids(c.sc)
	x := nex{trace: tr, span: sp, value: v}
	switch f {
	case zotel.ExemplarsAlwaysOn:
		return x, true
	case zotel.ExemplarsTraceBased:
		return x, c.sampled
	}
	return nex{}, false
}

var sdkFilter = map[zotel.ExemplarFilter]exemplar.Filter{
	zotel.ExemplarsTraceBased: exemplar.TraceBasedFilter,
	zotel.ExemplarsAlwaysOn:   exemplar.AlwaysOnFilter,
	zotel.ExemplarsAlwaysOff:  exemplar.AlwaysOffFilter,
}

// TestExemplarConformanceWithSDK runs the workload under each filter, in
// cumulative and delta temporality.
func TestExemplarConformanceWithSDK(t *testing.T) {
	for _, f := range []zotel.ExemplarFilter{zotel.ExemplarsTraceBased, zotel.ExemplarsAlwaysOn, zotel.ExemplarsAlwaysOff} {
		for _, temporality := range []string{"cumulative", "delta"} {
			t.Run(fmt.Sprintf("%s/%s", f, temporality), func(t *testing.T) {
				exemplarConformance(t, f, temporality == "delta", uint64(f)*2+uint64(len(temporality)))
			})
		}
	}
}

func exemplarConformance(t *testing.T, f zotel.ExemplarFilter, delta bool, seed uint64) {
	var ropts []sdkmetric.ManualReaderOption
	zt := otlp.Cumulative
	if delta {
		ropts = append(ropts, sdkmetric.WithTemporalitySelector(deltaPreference))
		zt = otlp.Delta
	}
	reader := sdkmetric.NewManualReader(ropts...)
	sdkP := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithExemplarFilter(sdkFilter[f]))
	defer sdkP.Shutdown(ctx)
	prefix := fmt.Sprintf("exconf.%s.%v.", f, delta)
	zsP := zotel.NewMeterProvider(zotel.WithViewPrefix(prefix), zotel.WithExemplarFilter(f))
	defer zsP.Shutdown(ctx)
	enc, err := otlp.NewEncoder(zt, exporter.Resource{})
	if err != nil {
		t.Fatal(err)
	}
	insts := newExInsts(t, sdkP.Meter("exemplars"), zsP.Meter("exemplars"))
	sets := []attribute.Set{*attribute.EmptySet(), attribute.NewSet(attribute.String("method", "GET")),
		attribute.NewSet(attribute.String("method", "POST"), attribute.Int("code", 500))}
	ctxs := exContexts()
	r := rand.New(rand.NewPCG(seed, 47))
	off := offers{}
	var cycleStart []int64
	identical, sampledSDK, sumsSDK := 0, 0, 0
	for cycle := range 5 {
		cycleStart = append(cycleStart, time.Now().UnixNano())
		measure := func(in *exInst, set attribute.Set, c exCtx, v float64) {
			recordIn(c.ctx, in.sdkI, v, set)
			recordIn(c.ctx, in.zsI, v, set)
			if x, ok := offered(f, c, v); ok {
				point := attrsKey(set)
				if in.kind == zotel.KindHistogram {
					point += fmt.Sprintf("#%d", bucketOf(in.bounds, v))
				}
				off.add(in.name, point, cycle, x)
			}
		}
		for range 600 {
			in := insts[r.IntN(len(insts)-1)] // not the sparse one
			// Mostly outside a span, as most measurements are; fewer
			// sampled ones in later cycles, so that buckets see one offer
			// in a cycle as well as several.
			c := ctxs[0]
			if r.IntN(3+cycle*2) == 0 {
				c = ctxs[1+r.IntN(len(ctxs)-1)]
			}
			measure(in, sets[r.IntN(len(sets))], c, exValue(r, in))
		}
		sparse := insts[len(insts)-1]
		for b := range len(sparse.bounds) + 1 {
			if r.IntN(3) == 0 {
				continue // no measurement in this bucket this cycle
			}
			v := 1000.0
			if b < len(sparse.bounds) {
				v = sparse.bounds[b]
			}
			measure(sparse, sets[r.IntN(len(sets))], ctxs[r.IntN(len(ctxs))], v)
		}
		if err := zsP.Collect(ctx); err != nil {
			t.Fatal(err)
		}
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(ctx, &rm); err != nil {
			t.Fatal(err)
		}
		zs := exemplarsFromOTLP(t, enc.Encode(time.Now()), prefix)
		sdk := exemplarsFromSDK(&rm)
		errs, n := compareExemplars(insts, sdk, zs, off, cycle, cycleStart, delta, f)
		if len(errs) > 0 {
			t.Fatalf("cycle %d: %d differences, the first:\n%s", cycle, len(errs), strings.Join(errs[:min(len(errs), 8)], "\n"))
		}
		identical += n.identical
		sampledSDK += n.sampled
		sumsSDK += n.sums
		if cycle == 0 {
			plantDifference(t, insts, sdk, zs, off, cycleStart, delta, f)
		}
	}
	t.Logf("%d exemplars identical on both sides, %d histogram exemplars the SDK sampled among several offers, %d exemplars of the SDK's sums and gauges (zerostat keeps none)",
		identical, sampledSDK, sumsSDK)
	if f != zotel.ExemplarsAlwaysOff && identical < 20 {
		t.Errorf("only %d exemplars compared for identity", identical)
	}
}

func newExInsts(t *testing.T, sdkM, zsM metric.Meter) []*exInst {
	t.Helper()
	advisory := []float64{-10, 0, 1, 2.5, 7, 100}
	insts := []*exInst{
		{name: "i.histogram", kind: zotel.KindHistogram, isInt: true, bounds: zotel.DefaultBoundaries},
		{name: "f.histogram", kind: zotel.KindHistogram, bounds: zotel.DefaultBoundaries},
		{name: "f.histogram.advisory", kind: zotel.KindHistogram, bounds: advisory},
		{name: "i.counter", kind: zotel.KindCounter, isInt: true},
		{name: "f.counter", kind: zotel.KindCounter},
		{name: "f.updowncounter", kind: zotel.KindUpDownCounter},
		{name: "i.gauge", kind: zotel.KindGauge, isInt: true},
		{name: "f.histogram.sparse", kind: zotel.KindHistogram, bounds: advisory, sparse: true}, // last
	}
	for _, in := range insts {
		for side, m := range []metric.Meter{sdkM, zsM} {
			var x any
			var err error
			switch {
			case in.kind == zotel.KindHistogram && in.isInt:
				x, err = m.Int64Histogram(in.name, metric.WithExplicitBucketBoundaries(in.bounds...))
			case in.kind == zotel.KindHistogram:
				x, err = m.Float64Histogram(in.name, metric.WithExplicitBucketBoundaries(in.bounds...))
			case in.kind == zotel.KindCounter && in.isInt:
				x, err = m.Int64Counter(in.name)
			case in.kind == zotel.KindCounter:
				x, err = m.Float64Counter(in.name)
			case in.kind == zotel.KindUpDownCounter:
				x, err = m.Float64UpDownCounter(in.name)
			default:
				x, err = m.Int64Gauge(in.name)
			}
			if err != nil {
				t.Fatal(err)
			}
			if side == 0 {
				in.sdkI = x
			} else {
				in.zsI = x
			}
		}
	}
	return insts
}

// exValue draws a measurement, often exactly on a histogram's bound.
func exValue(r *rand.Rand, in *exInst) float64 {
	var v float64
	switch {
	case in.kind == zotel.KindHistogram && r.IntN(2) == 0:
		v = in.bounds[r.IntN(len(in.bounds))]
	case in.kind == zotel.KindHistogram:
		v = r.Float64() * 1.2 * in.bounds[len(in.bounds)-1]
	case in.kind == zotel.KindUpDownCounter || in.kind == zotel.KindGauge:
		v = r.NormFloat64() * 100
	default:
		v = r.ExpFloat64() * 50
	}
	if in.isInt {
		v = float64(int64(v))
	}
	return v
}

// recordIn is record with a context.
func recordIn(c context.Context, x any, v float64, set attribute.Set) {
	add := metric.WithAttributeSet(set)
	switch i := x.(type) {
	case metric.Int64Counter:
		i.Add(c, int64(v), add)
	case metric.Float64Counter:
		i.Add(c, v, add)
	case metric.Float64UpDownCounter:
		i.Add(c, v, add)
	case metric.Int64Histogram:
		i.Record(c, int64(v), add)
	case metric.Float64Histogram:
		i.Record(c, v, add)
	case metric.Int64Gauge:
		i.Record(c, int64(v), add)
	default:
		panic(fmt.Sprintf("recordIn: %T", x))
	}
}

// attrsKey is set as attrString writes a point's attributes.
func attrsKey(set attribute.Set) string {
	var kvs []string
	for it := set.Iter(); it.Next(); {
		kv := it.Attribute()
		kvs = append(kvs, string(kv.Key)+"="+kv.Value.Type().String()+":"+kv.Value.Emit())
	}
	return attrString(kvs)
}

type exCounts struct{ identical, sampled, sums int }

// compareExemplars checks both sides' exemplars of the cycle against the
// offers, as the file's comment says.
func compareExemplars(insts []*exInst, sdk, zs expoints, off offers, cycle int, cycleStart []int64, delta bool, f zotel.ExemplarFilter) ([]string, exCounts) {
	var errs []string
	var n exCounts
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	for _, in := range insts {
		sp, zp := sdk[in.name], zs[in.name]
		var keys []string
		for k := range sp {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			s, z := sp[k], zp[k]
			if z == nil {
				if !delta { // zerostat's delta export leaves out points that added 0
					bad("%s{%s}: no zerostat point", in.name, k)
				}
				continue
			}
			if f == zotel.ExemplarsAlwaysOff && len(s.exs)+len(z.exs) > 0 {
				bad("%s{%s}: always_off: SDK %v, zerostat %v", in.name, k, s.exs, z.exs)
				continue
			}
			if in.kind != zotel.KindHistogram {
				// zerostat keeps none; the SDK's are offered measurements.
				if len(z.exs) > 0 {
					bad("%s{%s}: zerostat exemplars %v on a %s", in.name, k, z.exs, z.kind)
				}
				xs, _ := off.last(in.name, k, cycle, delta)
				for _, x := range s.exs {
					if !slices.ContainsFunc(offersOf(off, in.name, k), x.same) {
						bad("%s{%s}: the SDK's exemplar %v was not offered (offers of the cycle %v)", in.name, k, x, xs)
					}
					n.sums++
				}
				continue
			}
			byBucket := func(side string, exs []nex) map[int]nex {
				m := map[int]nex{}
				for _, x := range exs {
					b := bucketOf(in.bounds, x.value)
					if _, dup := m[b]; dup {
						bad("%s{%s}: %s has two exemplars in bucket %d: %v", in.name, k, side, b, exs)
					}
					m[b] = x
				}
				return m
			}
			sb, zb := byBucket("the SDK", s.exs), byBucket("zerostat", z.exs)
			for b := range len(in.bounds) + 1 {
				xs, c := off.last(in.name, fmt.Sprintf("%s#%d", k, b), cycle, delta)
				sx, sok := sb[b]
				zx, zok := zb[b]
				switch {
				case len(xs) == 0:
					if sok || zok {
						bad("%s{%s} bucket %d: nothing offered; SDK %v (%v), zerostat %v (%v)", in.name, k, b, sx, sok, zx, zok)
					}
					continue
				case !sok || !zok:
					bad("%s{%s} bucket %d: offered %v in cycle %d; SDK %v (%v), zerostat %v (%v)", in.name, k, b, xs, c, sx, sok, zx, zok)
					continue
				}
				if want := xs[len(xs)-1]; !zx.same(want) {
					bad("%s{%s} bucket %d: zerostat %v; want the latest offer %v of %v", in.name, k, b, zx, want, xs)
				}
				if zx.time < cycleStart[c] {
					bad("%s{%s} bucket %d: zerostat's exemplar time %d before its cycle's start %d", in.name, k, b, zx.time, cycleStart[c])
				}
				switch {
				case len(xs) == 1 && !sx.same(zx):
					bad("%s{%s} bucket %d: one offer %v; SDK %v, zerostat %v", in.name, k, b, xs[0], sx, zx)
				case len(xs) == 1:
					n.identical++
				case !slices.ContainsFunc(xs, sx.same):
					bad("%s{%s} bucket %d: the SDK's %v is not among the offers %v", in.name, k, b, sx, xs)
				default:
					n.sampled++
				}
				if in.sparse && len(xs) != 1 {
					bad("%s{%s} bucket %d: the sparse histogram had %d offers", in.name, k, b, len(xs))
				}
			}
		}
		for k := range zp {
			if sp[k] == nil {
				if !delta || in.kind != zotel.KindGauge {
					bad("%s{%s}: only in zerostat", in.name, k)
				}
			}
		}
	}
	return errs, n
}

// offersOf returns every offer of a point, of every cycle.
func offersOf(off offers, inst, point string) []nex {
	var out []nex
	for _, xs := range off[inst][point] {
		out = append(out, xs...)
	}
	return out
}

// plantDifference checks that compareExemplars sees a changed exemplar:
// another span id, another value, an exemplar dropped.
func plantDifference(t *testing.T, insts []*exInst, sdk, zs expoints, off offers, cycleStart []int64, delta bool, f zotel.ExemplarFilter) {
	t.Helper()
	if f == zotel.ExemplarsAlwaysOff {
		return
	}
	for _, plant := range []struct {
		name   string
		change func(*expoint)
	}{
		{"span id", func(p *expoint) { p.exs[0].span = "00f067aa000000ff" }},
		{"value", func(p *expoint) { p.exs[0].value = p.exs[0].value + 1e-9 }},
		{"dropped", func(p *expoint) { p.exs = p.exs[1:] }},
	} {
		pt := zs["f.histogram.sparse"]
		var k string
		found := false
		for key, p := range pt {
			if len(p.exs) > 0 && (!found || key < k) { // the same point each time
				k, found = key, true
			}
		}
		if !found {
			t.Fatal("cycle 0 left the sparse histogram without exemplars")
		}
		orig := pt[k]
		c := *orig
		c.exs = slices.Clone(orig.exs)
		plant.change(&c)
		pt[k] = &c
		if errs, _ := compareExemplars(insts, sdk, zs, off, 0, cycleStart, delta, f); len(errs) == 0 {
			t.Errorf("a planted difference (%s) went unnoticed", plant.name)
		}
		pt[k] = orig
	}
}
