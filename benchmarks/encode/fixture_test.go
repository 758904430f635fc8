package encode

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// The snapshot: 20 views × 500 rows, half of the views distributions with
// 16 bounds, the rest count, sum and last value; 3 tag keys per view, the
// values drawn from a vocabulary of 60 strings.
const (
	nViews      = 20
	rowsPerView = 500
	nRows       = nViews * rowsPerView
	nBounds     = 16
	seed        = 20240229
)

// vocabulary is the tag values (60 strings).
var vocabulary = []string{
	"GET", "POST", "PUT", "DELETE", "PATCH",
	"200", "201", "204", "301", "304", "400", "401", "403", "404", "409", "429", "500", "502", "503", "504",
	"us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "ap-northeast-1",
	"/api/v1/users", "/api/v1/users/{id}", "/api/v1/orders", "/api/v1/orders/{id}", "/api/v1/cart",
	"/api/v1/checkout", "/api/v1/search", "/healthz", "/metrics", "/api/v2/items", "/api/v2/items/{id}",
	"/login", "/logout", "/static/{path}",
	"web-01", "web-02", "web-03", "web-04", "web-05", "web-06", "web-07", "web-08",
	"gold", "silver", "bronze", "free",
	"postgres", "redis", "kafka", "s3", "elasticsearch", "memcached", "mysql", "grpc-gateway",
}

// tagKeys are the keys; view i uses three of them.
var tagKeys = []string{"method", "route", "status", "region", "host", "tier", "peer", "client"}

var (
	latencyBounds = []float64{0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000}
	sizeBounds    = func() []float64 { // 64 B to 2 MiB
		bs := make([]float64, nBounds)
		for i := range bs {
			bs[i] = math.Ldexp(1, 6+i)
		}
		return bs
	}()
)

// viewSpec describes one of the 20 views.
type viewSpec struct {
	name, desc, unit string
	agg              wire.Aggregation
	bounds           []float64
	value            func(r *rand.Rand) float64 // one recorded value
}

func latency(r *rand.Rand) float64 { // 0.2 ms to 60 s, log-uniform, to the microsecond
	return math.Round(math.Exp(math.Log(0.2)+r.Float64()*math.Log(60000/0.2))*1000) / 1000
}

func size(r *rand.Rand) float64 { // 10 B to 4 MB, log-uniform, whole bytes
	return math.Round(math.Exp(math.Log(10) + r.Float64()*math.Log(4e6/10)))
}

func intn(n int) func(r *rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return float64(r.IntN(n)) }
}

// specs alternate distributions (even indexes) and the other aggregations.
var specs = []viewSpec{
	{"http/server/latency", "Latency of HTTP requests served", "ms", wire.Distribution, latencyBounds, latency},
	{"http/server/requests", "HTTP requests served", "1", wire.Count, nil, nil},
	{"http/client/latency", "Latency of outgoing HTTP requests", "ms", wire.Distribution, latencyBounds, latency},
	{"http/server/bytes_sent", "Bytes sent in HTTP responses", "By", wire.Sum, nil, size},
	{"rpc/server/latency", "Latency of RPCs served", "ms", wire.Distribution, latencyBounds, latency},
	{"pool/connections_open", "Open connections in the pool", "1", wire.LastValue, nil, intn(200)},
	{"rpc/client/latency", "Latency of outgoing RPCs", "ms", wire.Distribution, latencyBounds, latency},
	{"rpc/server/calls", "RPCs served", "1", wire.Count, nil, nil},
	{"db/query/latency", "Latency of database queries", "ms", wire.Distribution, latencyBounds, latency},
	{"rpc/server/bytes_received", "Bytes received in RPC requests", "By", wire.Sum, nil, size},
	{"cache/get/latency", "Latency of cache lookups", "ms", wire.Distribution, latencyBounds, latency},
	{"queue/depth", "Messages waiting in the queue", "1", wire.LastValue, nil, intn(10000)},
	{"queue/wait_time", "Time messages wait in the queue", "ms", wire.Distribution, latencyBounds, latency},
	{"db/query/errors", "Failed database queries", "1", wire.Count, nil, nil},
	{"http/server/request_size", "Size of HTTP request bodies", "By", wire.Distribution, sizeBounds, size},
	{"queue/processed_items", "Items processed from the queue", "1", wire.Sum, nil, intn(1000)},
	{"http/server/response_size", "Size of HTTP response bodies", "By", wire.Distribution, sizeBounds, size},
	{"process/memory_rss", "Resident set size of the process", "By", wire.LastValue, nil, func(r *rand.Rand) float64 { return float64(1e8 + r.IntN(9e8)) }},
	{"gc/pause", "Garbage collector pauses", "ms", wire.Distribution, latencyBounds, latency},
	{"cache/misses", "Cache lookups that missed", "1", wire.Count, nil, nil},
}

// expectRow is what one row must hold after the recordings.
type expectRow struct {
	count         uint64
	sum, min, max float64
	last          float64
	buckets       []uint64
}

// fixture is the registered snapshot and its encodings.
type fixture struct {
	resource exporter.Resource
	expect   []map[string]*expectRow // by view index, by row key (values joined by "\x00" in key order)
	payload  []byte                  // one zerostat payload of the snapshot
	wire     *wire.Payload           // the payload decoded
	snap     *Snapshot               // the same data for the other encoders
	msgp     []byte                  // snap encoded by the msgp generated code
	otlp     *metricspb.MetricsData  // the same data as OTLP
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
)

// getFixture registers the 20 views and records the 10,000 series once per
// process (the views stay registered), then builds the other encoders'
// data from zerostat's own payload so every encoder writes the same numbers.
func getFixture(tb testing.TB) *fixture {
	tb.Helper()
	fixOnce.Do(func() { fix, fixErr = newFixture() })
	if fixErr != nil {
		tb.Fatal(fixErr)
	}
	return fix
}

func newFixture() (*fixture, error) {
	f := &fixture{
		resource: exporter.Resource{ServiceName: "checkout", Host: "web-01.example.internal", PID: 4242},
		expect:   make([]map[string]*expectRow, nViews),
	}
	r := rand.New(rand.NewPCG(seed, seed))
	if len(specs) != nViews {
		return nil, fmt.Errorf("%d view specs; want %d", len(specs), nViews)
	}
	for vi, sp := range specs {
		keys := []string{tagKeys[vi%8], tagKeys[(vi+3)%8], tagKeys[(vi+5)%8]}
		tks := make([]tag.Key, len(keys))
		for i, k := range keys {
			tks[i] = tag.MustNewKey(k)
		}
		var agg *view.Aggregation
		switch sp.agg {
		case wire.Count:
			agg = view.Count()
		case wire.Sum:
			agg = view.Sum()
		case wire.LastValue:
			agg = view.LastValue()
		default:
			agg = view.Distribution(sp.bounds...)
		}
		m := stats.Float64("bench/encode/"+sp.name, sp.desc, sp.unit)
		// Register sorts TagKeys in place (as OpenCensus does): give it a copy.
		if err := view.Register(&view.View{Name: sp.name, Description: sp.desc, Measure: m, Aggregation: agg, TagKeys: slices.Clone(tks)}); err != nil {
			return nil, fmt.Errorf("Register(%q): %w", sp.name, err)
		}
		sorted := slices.Clone(keys)
		slices.Sort(sorted)
		exp := map[string]*expectRow{}
		f.expect[vi] = exp
		for len(exp) < rowsPerView {
			vals := map[string]string{}
			muts := make([]tag.Mutator, len(keys))
			for i, k := range keys {
				vals[k] = vocabulary[r.IntN(len(vocabulary))]
				muts[i] = tag.Upsert(tks[i], vals[k])
			}
			rk := rowKey(sorted, vals)
			if exp[rk] != nil {
				continue // that combination is taken: draw another
			}
			ctx, err := tag.New(context.Background(), muts...)
			if err != nil {
				return nil, fmt.Errorf("tag.New: %w", err)
			}
			e := &expectRow{min: math.Inf(1), max: math.Inf(-1)}
			if sp.agg == wire.Distribution {
				e.buckets = make([]uint64, len(sp.bounds)+1)
			}
			exp[rk] = e
			var n int
			switch sp.agg {
			case wire.Count:
				n = 1 + r.IntN(40)
			case wire.Sum:
				n = 1 + r.IntN(5)
			case wire.LastValue:
				n = 1 + r.IntN(2)
			default:
				n = 1 + r.IntN(8)
			}
			for range n {
				v := 1.0
				if sp.value != nil {
					v = sp.value(r)
				}
				stats.Record(ctx, m.M(v))
				e.count++
				e.sum += v
				e.min, e.max, e.last = min(e.min, v), max(e.max, v), v
				if e.buckets != nil {
					i, _ := slices.BinarySearch(sp.bounds, v)
					if i < len(sp.bounds) && sp.bounds[i] == v {
						i++ // a value on a bound counts in the bucket above
					}
					e.buckets[i]++
				}
			}
		}
	}

	// One export, kept.
	var err error
	ex, err := newExporter(f.resource, func(p exporter.Payload) {
		f.payload = append([]byte(nil), p.Data...)
	})
	if err != nil {
		return nil, err
	}
	if err := ex.Export(context.Background()); err != nil {
		return nil, fmt.Errorf("Export: %w", err)
	}
	if f.wire, err = wire.Decode(f.payload); err != nil {
		return nil, fmt.Errorf("decoding our payload: %w", err)
	}
	if err := f.checkWire(f.wire); err != nil {
		return nil, err
	}
	f.snap = mirror(f.wire)
	if f.msgp, err = f.snap.MarshalMsg(nil); err != nil {
		return nil, fmt.Errorf("msgp MarshalMsg: %w", err)
	}
	f.otlp = toOTLP(f.snap)
	return f, nil
}

func rowKey(keys []string, vals map[string]string) string {
	var sb strings.Builder
	for _, k := range keys {
		sb.WriteString(vals[k])
		sb.WriteByte(0)
	}
	return sb.String()
}

// newExporter returns an exporter whose sink calls fn with each payload
// (and checks each export is one payload: the cap is well above its size).
func newExporter(res exporter.Resource, fn func(p exporter.Payload)) (*exporter.Exporter, error) {
	sink := exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
		if p.Part != 0 || !p.Last {
			return fmt.Errorf("payload %d.%d (last %v): the snapshot was split", p.Sequence, p.Part, p.Last)
		}
		fn(p)
		return nil
	})
	return exporter.New(sink, exporter.Options{MaxPayloadBytes: 64 << 20, Resource: res, Timeout: 2 * time.Hour})
}

// checkWire checks a decoded payload holds exactly the 10,000 recorded
// rows (views not in specs, e.g. the record benchmark's counter, are
// skipped).
func (f *fixture) checkWire(p *wire.Payload) error {
	rows, views := 0, 0
	for _, v := range p.Views {
		vi := slices.IndexFunc(specs, func(s viewSpec) bool { return s.name == v.Name })
		if vi < 0 {
			continue
		}
		views++
		sp := specs[vi]
		// The description the one mapping gives (a Count view whose
		// description is its measure's says it counts recordings).
		desc := promname.Desc{Kind: core.Kind(sp.agg), // wire's numbering is OpenCensus's, as core's
			Description: sp.desc,
			MeasureName: "bench/encode/" + sp.name, MeasureDescription: sp.desc}.Metric().Help
		if v.Aggregation != sp.agg || v.Unit != sp.unit || v.Description != desc || len(v.Keys) != 3 {
			return fmt.Errorf("view %q: got %v %q %q keys %v", v.Name, v.Aggregation, v.Unit, v.Description, v.Keys)
		}
		if sp.agg == wire.Distribution && !slices.Equal(v.Bounds, sp.bounds) {
			return fmt.Errorf("view %q: got bounds %v; want %v", v.Name, v.Bounds, sp.bounds)
		}
		if len(v.Rows) != rowsPerView {
			return fmt.Errorf("view %q: got %d rows; want %d", v.Name, len(v.Rows), rowsPerView)
		}
		for _, row := range v.Rows {
			vals := map[string]string{}
			for i, k := range v.Keys {
				vals[k] = row.Values[i]
			}
			e := f.expect[vi][rowKey(v.Keys, vals)]
			if e == nil {
				return fmt.Errorf("view %q: unexpected row %v", v.Name, row.Values)
			}
			var bad bool
			switch sp.agg {
			case wire.Count:
				bad = row.Count != e.count
			case wire.Sum:
				bad = !near(row.Sum, e.sum)
			case wire.LastValue:
				bad = row.Value != e.last
			default:
				bad = row.Count != e.count || !near(row.Sum, e.sum) || row.Min != e.min || row.Max != e.max ||
					!slices.Equal(row.Buckets, e.buckets)
			}
			if bad {
				return fmt.Errorf("view %q row %v: got %+v; want %+v", v.Name, row.Values, row, *e)
			}
			rows++
		}
	}
	if views != nViews || rows != nRows {
		return fmt.Errorf("payload: got %d views, %d rows; want %d, %d", views, rows, nViews, nRows)
	}
	return nil
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }

// mirror copies a decoded payload into the structs the other encoders
// write.
func mirror(p *wire.Payload) *Snapshot {
	s := &Snapshot{Start: p.Start, End: p.End, Temporality: uint8(p.Temporality), Sequence: p.Sequence}
	for _, a := range p.Resource {
		s.Resource = append(s.Resource, Attribute{Key: a.Key, Value: a.Value})
	}
	for _, v := range p.Views {
		mv := View{Name: v.Name, Description: v.Description, Unit: v.Unit, Aggregation: uint8(v.Aggregation),
			Keys: v.Keys, Bounds: v.Bounds, Start: v.Start, Rows: make([]Row, len(v.Rows))}
		for i, r := range v.Rows {
			mr := Row{Values: r.Values}
			switch v.Aggregation {
			case wire.Count:
				mr.Count = r.Count
			case wire.Sum:
				mr.Value = r.Sum
			case wire.LastValue:
				mr.Value = r.Value
			default:
				mr.Count, mr.Value = r.Count, r.Sum
				mr.Dist = &Dist{Min: r.Min, Max: r.Max, SumSq: r.SumOfSquaredDev, Buckets: r.Buckets}
			}
			mv.Rows[i] = mr
		}
		s.Views = append(s.Views, mv)
	}
	return s
}

// rowCount returns the number of rows of s.
func (s *Snapshot) rowCount() int {
	n := 0
	for _, v := range s.Views {
		n += len(v.Rows)
	}
	return n
}

func unixNano(t time.Time) uint64 { return uint64(t.UnixNano()) }

// toOTLP builds the OTLP equivalent of s: a Sum (monotonic, cumulative)
// per count and sum view, a Gauge per last-value view, a Histogram with
// explicit bounds per distribution view; one data point per row with its
// tags as string attributes. OTLP has no sum of squared deviations.
func toOTLP(s *Snapshot) *metricspb.MetricsData {
	str := func(k, v string) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
	}
	res := &resourcepb.Resource{}
	for _, a := range s.Resource {
		res.Attributes = append(res.Attributes, str(a.Key, a.Value))
	}
	end := unixNano(s.End)
	var metrics []*metricspb.Metric
	for _, v := range s.Views {
		m := &metricspb.Metric{Name: v.Name, Description: v.Description, Unit: v.Unit}
		start := unixNano(v.Start)
		attrs := func(r *Row) []*commonpb.KeyValue {
			kvs := make([]*commonpb.KeyValue, len(v.Keys))
			for i, k := range v.Keys {
				kvs[i] = str(k, r.Values[i])
			}
			return kvs
		}
		switch wire.Aggregation(v.Aggregation) {
		case wire.Count, wire.Sum:
			sum := &metricspb.Sum{AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE, IsMonotonic: true}
			for i := range v.Rows {
				r := &v.Rows[i]
				dp := &metricspb.NumberDataPoint{Attributes: attrs(r), StartTimeUnixNano: start, TimeUnixNano: end}
				if wire.Aggregation(v.Aggregation) == wire.Count {
					dp.Value = &metricspb.NumberDataPoint_AsInt{AsInt: int64(r.Count)}
				} else {
					dp.Value = &metricspb.NumberDataPoint_AsDouble{AsDouble: r.Value}
				}
				sum.DataPoints = append(sum.DataPoints, dp)
			}
			m.Data = &metricspb.Metric_Sum{Sum: sum}
		case wire.LastValue:
			g := &metricspb.Gauge{}
			for i := range v.Rows {
				r := &v.Rows[i]
				g.DataPoints = append(g.DataPoints, &metricspb.NumberDataPoint{Attributes: attrs(r), TimeUnixNano: end,
					Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: r.Value}})
			}
			m.Data = &metricspb.Metric_Gauge{Gauge: g}
		default:
			h := &metricspb.Histogram{AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE}
			for i := range v.Rows {
				r := &v.Rows[i]
				h.DataPoints = append(h.DataPoints, &metricspb.HistogramDataPoint{
					Attributes: attrs(r), StartTimeUnixNano: start, TimeUnixNano: end,
					Count: r.Count, Sum: proto.Float64(r.Value), Min: proto.Float64(r.Dist.Min), Max: proto.Float64(r.Dist.Max),
					BucketCounts: r.Dist.Buckets, ExplicitBounds: v.Bounds,
				})
			}
			m.Data = &metricspb.Metric_Histogram{Histogram: h}
		}
		metrics = append(metrics, m)
	}
	return &metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{
		Resource: res,
		ScopeMetrics: []*metricspb.ScopeMetrics{{
			Scope:   &commonpb.InstrumentationScope{Name: "github.com/zerostat/zerostat"},
			Metrics: metrics,
		}},
	}}}
}

// otlpPoints counts md's data points.
func otlpPoints(md *metricspb.MetricsData) int {
	n := 0
	for _, rm := range md.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch d := m.Data.(type) {
				case *metricspb.Metric_Sum:
					n += len(d.Sum.DataPoints)
				case *metricspb.Metric_Gauge:
					n += len(d.Gauge.DataPoints)
				case *metricspb.Metric_Histogram:
					n += len(d.Histogram.DataPoints)
				}
			}
		}
	}
	return n
}
