package otel_test

// Differential conformance against the OTel SDK v1.47.0: seeded random
// workloads are recorded through the SDK (collected with its ManualReader)
// and through zerostat (collected with zerostat's OTLP encoder, the bytes
// its OTLP exporter sends, decoded with the official protobuf types); the
// metric data must be identical: names, units, kinds, monotonicity,
// temporality, attributes, counts, bucket bounds and counts, sums, min and
// max, values (floats to 1e-9 relative).

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	colpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	cpb "go.opentelemetry.io/proto/otlp/common/v1"
	mpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	zotel "github.com/zerostat/zerostat/otel"
)

// npoint and nmetric are the data both sides are brought to.
type npoint struct {
	isInt     bool
	value     float64 // sums and gauges
	count     uint64  // histograms
	sum       float64
	hasMinMax bool
	min, max  float64
	bounds    []float64
	buckets   []uint64
	hasSum    bool
}

type nmetric struct {
	name, unit, desc string
	kind             string // sum, gauge, histogram
	monotonic        bool
	temporality      string // cumulative, delta ("" for gauges)
	points           map[string]npoint
}

// attrString is a set as sorted key=value pairs (values as Emit writes
// them, which is what zerostat's tags hold).
func attrString(kvs []string) string {
	slices.Sort(kvs)
	return strings.Join(kvs, ",")
}

func fromSDK(rm *metricdata.ResourceMetrics) map[string]*nmetric {
	out := map[string]*nmetric{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			nm := &nmetric{name: m.Name, unit: m.Unit, desc: m.Description, points: map[string]npoint{}}
			attrs := func(s attribute.Set) string {
				var kvs []string
				for it := s.Iter(); it.Next(); {
					kv := it.Attribute()
					kvs = append(kvs, string(kv.Key)+"="+kv.Value.Type().String()+":"+kv.Value.Emit())
				}
				return attrString(kvs)
			}
			tempo := func(t metricdata.Temporality) string {
				if t == metricdata.DeltaTemporality {
					return "delta"
				}
				return "cumulative"
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				nm.kind, nm.monotonic, nm.temporality = "sum", d.IsMonotonic, tempo(d.Temporality)
				for _, p := range d.DataPoints {
					nm.points[attrs(p.Attributes)] = npoint{isInt: true, value: float64(p.Value)}
				}
			case metricdata.Sum[float64]:
				nm.kind, nm.monotonic, nm.temporality = "sum", d.IsMonotonic, tempo(d.Temporality)
				for _, p := range d.DataPoints {
					nm.points[attrs(p.Attributes)] = npoint{value: p.Value}
				}
			case metricdata.Gauge[int64]:
				nm.kind = "gauge"
				for _, p := range d.DataPoints {
					nm.points[attrs(p.Attributes)] = npoint{isInt: true, value: float64(p.Value)}
				}
			case metricdata.Gauge[float64]:
				nm.kind = "gauge"
				for _, p := range d.DataPoints {
					nm.points[attrs(p.Attributes)] = npoint{value: p.Value}
				}
			case metricdata.Histogram[int64]:
				nm.kind, nm.temporality = "histogram", tempo(d.Temporality)
				for _, p := range d.DataPoints {
					mn, okn := p.Min.Value()
					mx, okx := p.Max.Value()
					nm.points[attrs(p.Attributes)] = npoint{count: p.Count, sum: float64(p.Sum), hasSum: true, hasMinMax: okn && okx,
						min: float64(mn), max: float64(mx), bounds: p.Bounds, buckets: p.BucketCounts}
				}
			case metricdata.Histogram[float64]:
				nm.kind, nm.temporality = "histogram", tempo(d.Temporality)
				for _, p := range d.DataPoints {
					mn, okn := p.Min.Value()
					mx, okx := p.Max.Value()
					nm.points[attrs(p.Attributes)] = npoint{count: p.Count, sum: p.Sum, hasSum: true, hasMinMax: okn && okx,
						min: mn, max: mx, bounds: p.Bounds, buckets: p.BucketCounts}
				}
			default:
				panic(fmt.Sprintf("unexpected SDK data %T", d))
			}
			if len(nm.points) > 0 {
				out[nm.name] = nm
			}
		}
	}
	return out
}

// anyString is an AnyValue as fromSDK writes an attribute's value: its
// type as attribute.Type names it, then its value as Emit writes it (a
// slice as JSON), so that a value of another type never compares equal.
func anyString(v *cpb.AnyValue) string {
	switch x := v.Value.(type) {
	case *cpb.AnyValue_StringValue:
		return "STRING:" + x.StringValue
	case *cpb.AnyValue_BoolValue:
		return "BOOL:" + fmt.Sprint(x.BoolValue)
	case *cpb.AnyValue_IntValue:
		return "INT64:" + fmt.Sprint(x.IntValue)
	case *cpb.AnyValue_DoubleValue:
		return "FLOAT64:" + fmt.Sprint(x.DoubleValue)
	case *cpb.AnyValue_ArrayValue:
		var elems []any
		typ := "STRING"
		for _, e := range x.ArrayValue.Values {
			t, val, _ := strings.Cut(anyString(e), ":")
			typ = t
			switch t {
			case "STRING":
				elems = append(elems, val)
			default:
				elems = append(elems, json.RawMessage(val))
			}
		}
		if typ == "BOOL" { // Emit writes a bool slice with fmt
			bs := make([]bool, len(elems))
			for i, e := range elems {
				bs[i] = string(e.(json.RawMessage)) == "true"
			}
			return "BOOLSLICE:" + fmt.Sprint(bs)
		}
		js, _ := json.Marshal(elems)
		return typ + "SLICE:" + string(js)
	}
	return fmt.Sprintf("%v", v)
}

// fromOTLP decodes zerostat's OTLP request, keeping the metrics whose name
// has prefix (stripped).
func fromOTLP(t *testing.T, body []byte, prefix string) map[string]*nmetric {
	t.Helper()
	var req colpb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		t.Fatalf("decoding zerostat's OTLP request: %v", err)
	}
	out := map[string]*nmetric{}
	attrs := func(kvs []*cpb.KeyValue) string {
		var s []string
		for _, kv := range kvs {
			s = append(s, kv.Key+"="+anyString(kv.Value))
		}
		return attrString(s)
	}
	tempo := func(t mpb.AggregationTemporality) string {
		if t == mpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA {
			return "delta"
		}
		return "cumulative"
	}
	num := func(p *mpb.NumberDataPoint) npoint {
		if i, ok := p.Value.(*mpb.NumberDataPoint_AsInt); ok {
			return npoint{isInt: true, value: float64(i.AsInt)}
		}
		return npoint{value: p.GetAsDouble()}
	}
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				name, ok := strings.CutPrefix(m.Name, prefix)
				if !ok {
					continue
				}
				nm := &nmetric{name: name, unit: m.Unit, desc: m.Description, points: map[string]npoint{}}
				switch d := m.Data.(type) {
				case *mpb.Metric_Sum:
					nm.kind, nm.monotonic, nm.temporality = "sum", d.Sum.IsMonotonic, tempo(d.Sum.AggregationTemporality)
					for _, p := range d.Sum.DataPoints {
						nm.points[attrs(p.Attributes)] = num(p)
					}
				case *mpb.Metric_Gauge:
					nm.kind = "gauge"
					for _, p := range d.Gauge.DataPoints {
						nm.points[attrs(p.Attributes)] = num(p)
					}
				case *mpb.Metric_Histogram:
					nm.kind, nm.temporality = "histogram", tempo(d.Histogram.AggregationTemporality)
					for _, p := range d.Histogram.DataPoints {
						nm.points[attrs(p.Attributes)] = npoint{count: p.Count, sum: p.GetSum(), hasSum: p.Sum != nil,
							hasMinMax: p.Min != nil && p.Max != nil, min: p.GetMin(), max: p.GetMax(),
							bounds: p.ExplicitBounds, buckets: p.BucketCounts}
					}
				default:
					t.Fatalf("zerostat OTLP metric %q: unexpected data %T", m.Name, d)
				}
				if len(nm.points) > 0 {
					out[name] = nm
				}
			}
		}
	}
	return out
}

func close9(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// history is what earlier rounds showed, for the documented differences
// of zerostat's delta export: a gauge point goes out every export with
// its last value (the SDK sends only the sets measured in the interval), a
// sum point whose interval added 0 is left out, and a histogram point
// after a series' first read has no min and max (zerostat keeps
// whole-life extremes), nor a sum once the series ever held a negative
// value (OTLP: sum "SHOULD NOT" be set then; the SDK sends it).
type history struct {
	lastGauge map[string]float64
	lifeMin   map[string]float64
	allowed   int // points or fields that differed as documented (delta only, but for sums of negative histograms)
}

// diff compares the two collections and returns what differs.
func diff(sdk, zs map[string]*nmetric, delta bool, h *history) []string {
	var errs []string
	names := func(m map[string]*nmetric) []string {
		var n []string
		for k := range m {
			n = append(n, k)
		}
		slices.Sort(n)
		return n
	}
	if a, b := names(sdk), names(zs); !slices.Equal(a, b) {
		errs = append(errs, fmt.Sprintf("metrics: SDK %q, zerostat %q", a, b))
	}
	for _, name := range names(sdk) {
		s, z := sdk[name], zs[name]
		if z == nil {
			continue
		}
		if s.kind != z.kind || s.monotonic != z.monotonic || s.temporality != z.temporality || s.unit != z.unit || s.desc != z.desc {
			errs = append(errs, fmt.Sprintf("%s: SDK %s monotonic=%v %s unit %q desc %q; zerostat %s monotonic=%v %s unit %q desc %q",
				name, s.kind, s.monotonic, s.temporality, s.unit, s.desc, z.kind, z.monotonic, z.temporality, z.unit, z.desc))
		}
		for k, zp := range z.points {
			if _, ok := s.points[k]; ok {
				continue
			}
			if last, ok := h.lastGauge[name+"{"+k+"}"]; ok && delta && s.kind == "gauge" && last == zp.value {
				h.allowed++
				continue
			}
			errs = append(errs, fmt.Sprintf("%s{%s}: only in zerostat: %+v", name, k, zp))
		}
		var keys []string
		for k := range s.points {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			sp := s.points[k]
			id := name + "{" + k + "}"
			if s.kind == "gauge" {
				defer func() { h.lastGauge[id] = sp.value }()
			}
			if s.kind == "histogram" && sp.hasMinMax {
				if m, ok := h.lifeMin[id]; !ok || sp.min < m {
					h.lifeMin[id] = sp.min
				}
			}
			zp, ok := z.points[k]
			if !ok {
				if delta && s.kind == "sum" && sp.value == 0 {
					h.allowed++
					continue
				}
				errs = append(errs, fmt.Sprintf("%s{%s}: only in the SDK: %+v", name, k, sp))
				continue
			}
			if s.kind == "histogram" {
				if sp.hasSum && !zp.hasSum && h.lifeMin[id] < 0 {
					h.allowed++
					zp.hasSum, zp.sum = true, sp.sum
				}
				if delta && !zp.hasMinMax && sp.hasMinMax {
					h.allowed++
					zp.hasMinMax, zp.min, zp.max = true, sp.min, sp.max
				}
			}
			bad := sp.isInt != zp.isInt || !close9(sp.value, zp.value) || sp.count != zp.count ||
				sp.hasSum != zp.hasSum || !close9(sp.sum, zp.sum) ||
				!slices.Equal(sp.bounds, zp.bounds) || !slices.Equal(sp.buckets, zp.buckets) ||
				sp.hasMinMax != zp.hasMinMax || sp.min != zp.min || sp.max != zp.max
			if bad {
				errs = append(errs, fmt.Sprintf("%s{%s}:\n  SDK      %+v\n  zerostat %+v", name, k, sp, zp))
			}
		}
	}
	return errs
}

// pair is one instrument in both SDKs.
type pair struct {
	name          string
	kind          zotel.Kind
	isInt         bool
	bounds        []float64 // advisory; nil: the defaults
	sdkI, zsI     any
	sdkObs, zsObs any
}

var confKeys = []attribute.Key{"method", "code", "ok", "route"}

// attrsOf draws an attribute set: a random subset of the keys with values
// from small pools (strings, ints, bools), and with late a key no set had
// before (an instrument's view grows it after exports read it); or, for
// the wide instrument, one of many sets.
func attrsOf(r *rand.Rand, wide, late bool) attribute.Set {
	if wide {
		return attribute.NewSet(attribute.Int("user", r.IntN(120)))
	}
	var kvs []attribute.KeyValue
	if r.IntN(4) > 0 {
		kvs = append(kvs, attribute.String("method", []string{"GET", "POST", "PUT"}[r.IntN(3)]))
	}
	if r.IntN(3) > 0 {
		kvs = append(kvs, attribute.Int("code", []int{200, 404, 500}[r.IntN(3)]))
	}
	if r.IntN(2) > 0 {
		kvs = append(kvs, attribute.Bool("ok", r.IntN(2) == 0))
	}
	if r.IntN(5) == 0 {
		kvs = append(kvs, attribute.String("route", "/a/{id}"))
	}
	if r.IntN(4) == 0 {
		kvs = append(kvs, attribute.Float64("ratio", []float64{0.5, 1e21, -3.25}[r.IntN(3)]))
	}
	if r.IntN(6) == 0 {
		kvs = append(kvs, attribute.StringSlice("tags", []string{"a", "b,c"}[:1+r.IntN(2)]),
			attribute.Int64Slice("ids", []int64{7, -1}[:1+r.IntN(2)]),
			attribute.BoolSlice("flags", []bool{true, false}), attribute.Float64Slice("ws", []float64{0.25, 2}))
	}
	if late && r.IntN(6) == 0 {
		kvs = append(kvs, attribute.Int("late", r.IntN(2)))
	}
	return attribute.NewSet(kvs...)
}

// value draws a measurement for kind: non-negative for counters and
// histograms, often exactly on a bound for histograms.
func value(r *rand.Rand, p *pair) float64 {
	var v float64
	switch p.kind {
	case zotel.KindHistogram:
		b := p.bounds
		if b == nil {
			b = zotel.DefaultBoundaries
		}
		switch r.IntN(3) {
		case 0:
			v = b[r.IntN(len(b))]
		case 1:
			v = r.Float64() * 1.2 * b[len(b)-1]
		default:
			v = r.ExpFloat64() * 10
		}
	case zotel.KindUpDownCounter, zotel.KindGauge:
		v = r.NormFloat64() * 100
	default:
		v = r.ExpFloat64() * 50
	}
	if p.isInt {
		v = math.Round(v)
	}
	return v
}

func newPairs(t *testing.T, sdkM, zsM metric.Meter) []*pair {
	t.Helper()
	var ps []*pair
	add := func(p *pair) { ps = append(ps, p) }
	must := func(x any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatalf("creating an instrument: %v", err)
		}
		return x
	}
	for _, isInt := range []bool{true, false} {
		for _, k := range []zotel.Kind{zotel.KindCounter, zotel.KindUpDownCounter, zotel.KindHistogram, zotel.KindGauge} {
			for _, advisory := range []bool{false, true} {
				if advisory && k != zotel.KindHistogram {
					continue
				}
				typ := map[bool]string{true: "i", false: "f"}[isInt]
				p := &pair{name: fmt.Sprintf("%s.%s", typ, strings.ToLower(k.String())), kind: k, isInt: isInt}
				var hopts []metric.HistogramOption
				if advisory {
					p.name += ".advisory"
					p.bounds = []float64{-10, 0, 1, 2.5, 7, 100}
					hopts = append(hopts, metric.WithExplicitBucketBoundaries(p.bounds...))
				}
				desc, unit := metric.WithDescription("conformance "+p.name), metric.WithUnit("ms")
				for side, m := range []metric.Meter{sdkM, zsM} {
					var x any
					switch {
					case isInt && k == zotel.KindCounter:
						x = must(m.Int64Counter(p.name, desc, unit))
					case isInt && k == zotel.KindUpDownCounter:
						x = must(m.Int64UpDownCounter(p.name, desc, unit))
					case isInt && k == zotel.KindHistogram:
						x = must(m.Int64Histogram(p.name, append([]metric.Int64HistogramOption{desc, unit}, toI(hopts)...)...))
					case isInt && k == zotel.KindGauge:
						x = must(m.Int64Gauge(p.name, desc, unit))
					case k == zotel.KindCounter:
						x = must(m.Float64Counter(p.name, desc, unit))
					case k == zotel.KindUpDownCounter:
						x = must(m.Float64UpDownCounter(p.name, desc, unit))
					case k == zotel.KindHistogram:
						x = must(m.Float64Histogram(p.name, append([]metric.Float64HistogramOption{desc, unit}, toF(hopts)...)...))
					default:
						x = must(m.Float64Gauge(p.name, desc, unit))
					}
					if side == 0 {
						p.sdkI = x
					} else {
						p.zsI = x
					}
				}
				add(p)
			}
		}
	}
	return ps
}

func toI(o []metric.HistogramOption) []metric.Int64HistogramOption {
	var r []metric.Int64HistogramOption
	for _, x := range o {
		r = append(r, x)
	}
	return r
}

func toF(o []metric.HistogramOption) []metric.Float64HistogramOption {
	var r []metric.Float64HistogramOption
	for _, x := range o {
		r = append(r, x)
	}
	return r
}

func record(x any, v float64, set attribute.Set) {
	add := []metric.AddOption{metric.WithAttributeSet(set)}
	rec := []metric.RecordOption{metric.WithAttributeSet(set)}
	switch i := x.(type) {
	case metric.Int64Counter:
		i.Add(ctx, int64(v), add...)
	case metric.Int64UpDownCounter:
		i.Add(ctx, int64(v), add...)
	case metric.Int64Histogram:
		i.Record(ctx, int64(v), rec...)
	case metric.Int64Gauge:
		i.Record(ctx, int64(v), rec...)
	case metric.Float64Counter:
		i.Add(ctx, v, add...)
	case metric.Float64UpDownCounter:
		i.Add(ctx, v, add...)
	case metric.Float64Histogram:
		i.Record(ctx, v, rec...)
	case metric.Float64Gauge:
		i.Record(ctx, v, rec...)
	default:
		panic(fmt.Sprintf("record: %T", x))
	}
}

// TestConformanceWithSDK runs seeded workloads through both, in cumulative
// and delta temporality, collecting after each of several rounds.
func TestConformanceWithSDK(t *testing.T) {
	for _, temporality := range []string{"cumulative", "delta"} {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%s/seed=%d", temporality, seed), func(t *testing.T) {
				conformance(t, temporality, seed)
			})
		}
	}
}

func conformance(t *testing.T, temporality string, seed uint64) {
	// Cumulative: the limit is crossed by every instrument (96 key
	// subsets and values, 120 sets for the wide one). Delta: the SDK's
	// limit applies per collection cycle (its table is cleared each
	// Collect), zerostat's to the sets an instrument has bound, whatever
	// the exporter's temporality; the limit is then above the sets drawn.
	limit, wantWide := 40, 40
	var ropts []sdkmetric.ManualReaderOption
	zt := otlp.Cumulative
	if temporality == "delta" {
		limit, wantWide = 1000, 0
		// The specification's "delta" preference (the SDK's OTLP
		// exporters' selector for it): up-down counters stay cumulative,
		// as zerostat exports an up-down sum whatever the temporality
		// (delta.Kinds.Reads).
		ropts = append(ropts, sdkmetric.WithTemporalitySelector(deltaPreference))
		zt = otlp.Delta
	}
	reader := sdkmetric.NewManualReader(ropts...)
	sdkP := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithCardinalityLimit(limit))
	defer sdkP.Shutdown(ctx)
	prefix := fmt.Sprintf("conf%s%d.", temporality, seed)
	// Seed 0 declares the keys of the workload up front; the others let
	// every view start with the keys of its first set and grow the rest.
	var declared []zotel.Option
	if seed == 0 {
		declared = declareKeys()
	}
	zsP := zotel.NewMeterProvider(append(declared, zotel.WithViewPrefix(prefix), zotel.WithCardinalityLimit(limit))...)
	defer zsP.Shutdown(ctx)
	enc, err := otlp.NewEncoder(zt, exporter.Resource{})
	if err != nil {
		t.Fatal(err)
	}
	pairs := newPairs(t, sdkP.Meter("conformance"), zsP.Meter("conformance"))
	// The wide instrument crosses the cardinality limit.
	wide := &pair{name: "wide", kind: zotel.KindCounter, isInt: true}
	wide.sdkI, _ = sdkP.Meter("conformance").Int64Counter("wide")
	wide.zsI, _ = zsP.Meter("conformance").Int64Counter("wide")
	pairs = append(pairs, wide)

	r := rand.New(rand.NewPCG(seed, 15))
	obs := newObservables(t, r, sdkP.Meter("conformance"), zsP.Meter("conformance"))
	h := &history{lastGauge: map[string]float64{}, lifeMin: map[string]float64{}}
	for round := range 4 {
		for range 3000 {
			p := pairs[r.IntN(len(pairs))]
			set := attrsOf(r, p == wide, round >= 2)
			v := value(r, p)
			record(p.sdkI, v, set)
			record(p.zsI, v, set)
		}
		obs.advance(r)
		if err := zsP.Collect(ctx); err != nil {
			t.Fatal(err)
		}
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(ctx, &rm); err != nil {
			t.Fatal(err)
		}
		got := fromOTLP(t, enc.Encode(time.Now()), prefix)
		want := fromSDK(&rm)
		if errs := diff(want, got, temporality == "delta", h); len(errs) > 0 {
			t.Fatalf("round %d: %d differences, the first:\n%s", round, len(errs), strings.Join(errs[:min(len(errs), 8)], "\n"))
		}
		for _, n := range []string{"o.i.counter", "o.i.gauge", "o.f.updowncounter", "o.f.gauge"} {
			if m := want[n]; m == nil || len(m.points) != len(obs.sets) && !(n == "o.i.counter" && temporality == "delta") {
				t.Fatalf("round %d: the SDK's %s: %+v; want %d points", round, n, m, len(obs.sets))
			}
		}
		if n := len(want["wide"].points); wantWide > 0 && n != wantWide {
			t.Fatalf("round %d: the wide instrument has %d points; want the limit, %d", round, n, wantWide)
		}
	}
	t.Logf("%d points or fields differed as documented (see history)", h.allowed)
}

// observables are observable instruments in both SDKs whose callbacks
// report the same values: cumulative totals (counters), a random walk
// (up-down counters) and random levels (gauges), for a fixed list of
// attribute sets each collection.
type observables struct {
	sets   []attribute.Set
	totals [2][]float64 // int counter, float up-down counter
	levels [2][]float64 // int gauge, float gauge
}

func newObservables(t *testing.T, r *rand.Rand, sdkM, zsM metric.Meter) *observables {
	t.Helper()
	o := &observables{}
	for range 6 {
		o.sets = append(o.sets, attrsOf(r, false, false))
	}
	slices.SortFunc(o.sets, func(a, b attribute.Set) int {
		return strings.Compare(a.Encoded(attribute.DefaultEncoder()), b.Encoded(attribute.DefaultEncoder()))
	})
	o.sets = slices.CompactFunc(o.sets, func(a, b attribute.Set) bool { return a.Equals(&b) })
	for i := range o.totals {
		o.totals[i] = make([]float64, len(o.sets))
		o.levels[i] = make([]float64, len(o.sets))
	}
	for _, m := range []metric.Meter{sdkM, zsM} {
		_, err1 := m.Int64ObservableCounter("o.i.counter", metric.WithUnit("1"), metric.WithInt64Callback(func(_ context.Context, ob metric.Int64Observer) error {
			for i, s := range o.sets {
				ob.Observe(int64(o.totals[0][i]), metric.WithAttributeSet(s))
			}
			return nil
		}))
		_, err2 := m.Int64ObservableGauge("o.i.gauge", metric.WithInt64Callback(func(_ context.Context, ob metric.Int64Observer) error {
			for i, s := range o.sets {
				ob.Observe(int64(o.levels[0][i]), metric.WithAttributeSet(s))
			}
			return nil
		}))
		ud, err3 := m.Float64ObservableUpDownCounter("o.f.updowncounter")
		g, err4 := m.Float64ObservableGauge("o.f.gauge", metric.WithDescription("levels"))
		_, err5 := m.RegisterCallback(func(_ context.Context, ob metric.Observer) error {
			for i, s := range o.sets {
				ob.ObserveFloat64(ud, o.totals[1][i], metric.WithAttributeSet(s))
				ob.ObserveFloat64(g, o.levels[1][i], metric.WithAttributeSet(s))
			}
			return nil
		}, ud, g)
		for _, err := range []error{err1, err2, err3, err4, err5} {
			if err != nil {
				t.Fatalf("creating the observable instruments: %v", err)
			}
		}
	}
	return o
}

// advance draws the values the callbacks report next.
func (o *observables) advance(r *rand.Rand) {
	for i := range o.sets {
		o.totals[0][i] += float64(r.IntN(4)) // sometimes unchanged
		o.totals[1][i] += r.NormFloat64() * 10
		o.levels[0][i] = float64(r.IntN(200) - 100)
		o.levels[1][i] = r.NormFloat64() * 50
	}
}

// declareKeys declares the workload's attribute keys for every
// instrument: its measurements use random subsets of them.
func declareKeys() []zotel.Option {
	var opts []zotel.Option
	for _, n := range []string{"i.counter", "i.updowncounter", "i.histogram", "i.histogram.advisory", "i.gauge",
		"f.counter", "f.updowncounter", "f.histogram", "f.histogram.advisory", "f.gauge",
		"o.i.counter", "o.i.gauge", "o.f.updowncounter", "o.f.gauge"} {
		opts = append(opts, zotel.WithAttributeKeys(n, confKeys...))
	}
	return opts
}

// deltaPreference is the SDK's temporality selector for the
// specification's "delta" preference (its OTLP exporters'): up-down
// counters stay cumulative, as zerostat exports an up-down sum whatever
// the temporality (delta.Kinds.Reads).
func deltaPreference(k sdkmetric.InstrumentKind) metricdata.Temporality {
	switch k {
	case sdkmetric.InstrumentKindUpDownCounter, sdkmetric.InstrumentKindObservableUpDownCounter:
		return metricdata.CumulativeTemporality
	}
	return metricdata.DeltaTemporality
}
