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
// A counter's, an up-down counter's and a gauge's point keep, on both
// sides, a reservoir of k = GOMAXPROCS slots (the SDK's
// FixedSizeReservoir, zerostat's core reservoir): each collection ends a
// sampling cycle, whose first offers fill the slots in order, later ones
// replacing a slot at random (Algorithm L). Each side is checked against
// that model, cycle by cycle, from its own previous collection: with n
// offers in the cycle, its first min(n, k) slots are the cycle's offers,
// exactly the first n in order when n <= k (then the SDK's and
// zerostat's are identical), some of them otherwise; in cumulative
// temporality the other slots are the previous collection's, unchanged;
// in delta temporality (counters and gauges; up-down counters stay
// cumulative on both sides) a point holds its cycle's only. A sparse
// counter gets at most k measurements per point and cycle, so that
// always_on compares its exemplars for identity too.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
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
	sparseSets := []attribute.Set{*attribute.EmptySet()}
	for _, route := range []string{"/a", "/b", "/c", "/d", "/e"} {
		sparseSets = append(sparseSets, attribute.NewSet(attribute.String("route", route)))
	}
	ctxs := exContexts()
	r := rand.New(rand.NewPCG(seed, 47))
	off := offers{}
	var cycleStart []int64
	var total exCounts
	var prev [2]expoints // the previous collection: the SDK's, zerostat's
	var plantedH, plantedC bool
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
			in := insts[r.IntN(len(insts)-2)] // not the sparse ones
			// Mostly outside a span, as most measurements are; fewer
			// sampled ones in later cycles, so that buckets see one offer
			// in a cycle as well as several.
			c := ctxs[0]
			if r.IntN(3+cycle*2) == 0 {
				c = ctxs[1+r.IntN(len(ctxs)-1)]
			}
			measure(in, sets[r.IntN(len(sets))], c, exValue(r, in))
		}
		// The sparse counter: at most k measurements per point and cycle
		// (k the reservoir's size; none, sometimes), in any context, of
		// values that are not 0 (a delta point of 0 is left out), on
		// points of their own.
		for _, set := range sparseSets {
			for range r.IntN(min(reservoirSize(), 3) + 1) {
				measure(insts[len(insts)-2], set, ctxs[r.IntN(len(ctxs))], float64(1+r.IntN(9)))
			}
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
		errs, n := compareExemplars(insts, sdk, zs, prev, off, cycle, cycleStart, delta, f)
		if len(errs) > 0 {
			t.Fatalf("cycle %d: %d differences, the first:\n%s", cycle, len(errs), strings.Join(errs[:min(len(errs), 8)], "\n"))
		}
		total.identical += n.identical
		total.sampled += n.sampled
		total.sumsIdentical += n.sumsIdentical
		total.sumsSampled += n.sumsSampled
		h, c := plantDifference(t, insts, sdk, zs, prev, off, cycle, cycleStart, delta, f)
		plantedH, plantedC = plantedH || h, plantedC || c
		prev = [2]expoints{sdk, zs}
	}
	if f != zotel.ExemplarsAlwaysOff && !(plantedH && plantedC) {
		t.Errorf("differences planted in the sparse histogram: %v, in the sparse counter: %v; want both", plantedH, plantedC)
	}
	t.Logf("histograms: %d exemplars identical on both sides, %d the SDK sampled among several offers; "+
		"sums and gauges (reservoirs of %d): %d exemplars identical on both sides, %d points of cycles with more offers than slots",
		total.identical, total.sampled, reservoirSize(), total.sumsIdentical, total.sumsSampled)
	if f != zotel.ExemplarsAlwaysOff && (total.identical < 20 || total.sumsIdentical < 5) {
		t.Errorf("only %d histogram and %d sum exemplars compared for identity", total.identical, total.sumsIdentical)
	}
}

// reservoirSize is the size of a sum's or a gauge's reservoir on both
// sides: GOMAXPROCS, at least 1 (DefaultExemplarReservoirProviderSelector).
func reservoirSize() int { return max(runtime.GOMAXPROCS(0), 1) }

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
		{name: "i.updowncounter", kind: zotel.KindUpDownCounter, isInt: true},
		{name: "i.gauge", kind: zotel.KindGauge, isInt: true},
		// The sparse ones last.
		{name: "i.counter.sparse", kind: zotel.KindCounter, isInt: true, sparse: true},
		{name: "f.histogram.sparse", kind: zotel.KindHistogram, bounds: advisory, sparse: true},
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
			case in.kind == zotel.KindUpDownCounter && in.isInt:
				x, err = m.Int64UpDownCounter(in.name)
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
	case metric.Int64UpDownCounter:
		i.Add(c, int64(v), add)
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

// exCounts counts the exemplars compared: a histogram's identical on
// both sides or sampled by the SDK among several offers; a sum's or a
// gauge's identical (the first slots of a cycle with no more offers
// than slots), and the points of cycles with more (sampled).
type exCounts struct{ identical, sampled, sumsIdentical, sumsSampled int }

// exsOf returns the exemplars of the point of instrument name with
// attributes k, none when p or the point is nil.
func (p expoints) exsOf(name, k string) []nex {
	if pt := p[name][k]; pt != nil {
		return pt.exs
	}
	return nil
}

// checkReservoir checks a reservoir's collection, got, against the model
// (the file's comment): xs are the cycle's offers, prev the previous
// collection's exemplars (cumulative), cycleOnly whether a collection
// holds its cycle's offers only (delta). It returns what differs.
func checkReservoir(got, prev, xs []nex, cycleOnly bool) []string {
	k := reservoirSize()
	m := min(len(xs), k) // the slots the cycle's offers fill
	want := m
	if !cycleOnly {
		want = max(len(prev), m)
	}
	if len(got) != want {
		return []string{fmt.Sprintf("%d exemplars; want %d (offers %v, previously %v)", len(got), want, xs, prev)}
	}
	var errs []string
	for i, x := range got {
		switch {
		case i < m && len(xs) <= k && !x.same(xs[i]):
			errs = append(errs, fmt.Sprintf("slot %d: %v; want the offer %v (offers %v)", i, x, xs[i], xs))
		case i < m && !slices.ContainsFunc(xs, x.same):
			errs = append(errs, fmt.Sprintf("slot %d: %v is not among the cycle's offers %v", i, x, xs))
		case i >= m && !(x.same(prev[i]) && x.time == prev[i].time):
			errs = append(errs, fmt.Sprintf("slot %d: %v; want it unchanged, %v", i, x, prev[i]))
		}
	}
	return errs
}

// compareExemplars checks both sides' exemplars of the cycle against the
// offers and, for reservoirs, against each side's previous collection
// prev (nil at the first), as the file's comment says.
func compareExemplars(insts []*exInst, sdk, zs expoints, prev [2]expoints, off offers, cycle int, cycleStart []int64, delta bool, f zotel.ExemplarFilter) ([]string, exCounts) {
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
				// A reservoir on each side, checked against the model
				// (checkReservoir) from that side's previous collection.
				xs := off[in.name][k][cycle]
				cycleOnly := delta && in.kind != zotel.KindUpDownCounter
				var ps, pz []nex
				if !cycleOnly {
					ps, pz = prev[0].exsOf(in.name, k), prev[1].exsOf(in.name, k)
				}
				for _, e := range checkReservoir(s.exs, ps, xs, cycleOnly) {
					bad("%s{%s}: the SDK's %v: %s", in.name, k, s.exs, e)
				}
				for _, e := range checkReservoir(z.exs, pz, xs, cycleOnly) {
					bad("%s{%s}: zerostat's %v: %s", in.name, k, z.exs, e)
				}
				for i, x := range z.exs[:min(len(xs), len(z.exs))] {
					if x.time < cycleStart[cycle] {
						bad("%s{%s}: zerostat's exemplar %d at %d, before its cycle's start %d", in.name, k, i, x.time, cycleStart[cycle])
					}
				}
				switch kk := reservoirSize(); {
				case len(xs) <= kk:
					n.sumsIdentical += len(xs) // each side's first slots are exactly the offers
				case in.sparse:
					bad("%s{%s}: the sparse counter had %d offers in the cycle", in.name, k, len(xs))
				default:
					n.sumsSampled++
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
		for k, z := range zp {
			switch {
			case sp[k] != nil:
			case !delta || in.kind != zotel.KindGauge:
				bad("%s{%s}: only in zerostat", in.name, k)
			case len(z.exs) > 0: // a delta gauge not measured in the cycle
				bad("%s{%s}: only in zerostat, with exemplars %v", in.name, k, z.exs)
			}
		}
	}
	return errs, n
}

// plantDifference checks that compareExemplars sees a changed exemplar
// of the sparse histogram's (zerostat's side) and of the sparse
// counter's (either side, two of them at least): another span id,
// another value, an exemplar dropped, two slots swapped. It returns
// whether it found a point with exemplars to change for each, false
// under always_off.
func plantDifference(t *testing.T, insts []*exInst, sdk, zs expoints, prev [2]expoints, off offers, cycle int, cycleStart []int64, delta bool, f zotel.ExemplarFilter) (histogram, counter bool) {
	t.Helper()
	if f == zotel.ExemplarsAlwaysOff {
		return false, false
	}
	type plant struct {
		name   string
		min    int // exemplars the point needs
		change func(*expoint)
	}
	plants := []plant{
		{"span id", 1, func(p *expoint) { p.exs[0].span = "00f067aa000000ff" }},
		{"value", 1, func(p *expoint) { p.exs[0].value = p.exs[0].value + 1e-9 }},
		{"dropped", 1, func(p *expoint) { p.exs = p.exs[1:] }},
		{"swapped", 2, func(p *expoint) { p.exs[0], p.exs[1] = p.exs[1], p.exs[0] }},
	}
	try := func(side expoints, name string, pl plant) bool {
		pt := side[name]
		var k string
		found := false
		for key, p := range pt {
			ok := len(p.exs) >= pl.min
			if pl.name == "swapped" && ok {
				ok = !p.exs[0].same(p.exs[1])
			}
			if ok && (!found || key < k) { // the same point each time
				k, found = key, true
			}
		}
		if !found {
			return false
		}
		orig := pt[k]
		c := *orig
		c.exs = slices.Clone(orig.exs)
		pl.change(&c)
		pt[k] = &c
		if errs, _ := compareExemplars(insts, sdk, zs, prev, off, cycle, cycleStart, delta, f); len(errs) == 0 {
			t.Errorf("cycle %d: a planted difference (%s) in %s{%s} went unnoticed", cycle, pl.name, name, k)
		}
		pt[k] = orig
		return true
	}
	for _, pl := range plants[:3] {
		histogram = try(zs, "f.histogram.sparse", pl) || histogram
	}
	n := 0
	for _, pl := range plants {
		for _, side := range []expoints{zs, sdk} {
			if try(side, "i.counter.sparse", pl) {
				n++
			}
		}
	}
	return histogram, n >= 2
}
