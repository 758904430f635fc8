package otlpcheck

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var (
	kMethod = tag.MustNewKey("method")
	kRoute  = tag.MustNewKey("route")
	kStatus = tag.MustNewKey("status")
)

// workload is a set of views over fresh measures, one of each aggregation
// and more (signed values, no tags, no bounds, empty unit).
type workload struct {
	views                []*view.View
	lat, signed          *stats.Float64Measure
	size                 *stats.Int64Measure
	registered, regAfter time.Time
}

func newWorkload(t *testing.T, prefix string) *workload {
	t.Helper()
	w := &workload{
		lat:    stats.Float64(prefix+"latency", "Request latency", stats.UnitMilliseconds),
		size:   stats.Int64(prefix+"size", "Response size", stats.UnitBytes),
		signed: stats.Float64(prefix+"signed", "", ""), // no description, no unit
	}
	w.views = []*view.View{
		{Name: prefix + "count", Description: "Requests", Measure: w.lat, Aggregation: view.Count(), TagKeys: []tag.Key{kMethod, kRoute, kStatus}},
		{Name: prefix + "sum", Measure: w.size, Aggregation: view.Sum(), TagKeys: []tag.Key{kRoute}},
		{Name: prefix + "sum_signed", Measure: w.signed, Aggregation: view.Sum(), TagKeys: []tag.Key{kStatus}},
		{Name: prefix + "last", Measure: w.size, Aggregation: view.LastValue(), TagKeys: []tag.Key{kMethod}},
		{Name: prefix + "last_notags", Measure: w.signed, Aggregation: view.LastValue()},
		{Name: prefix + "dist", Measure: w.lat, Aggregation: view.Distribution(1, 2, 5, 10, 100), TagKeys: []tag.Key{kMethod, kStatus}},
		{Name: prefix + "dist_signed", Measure: w.signed, Aggregation: view.Distribution(0.5, 1), TagKeys: []tag.Key{kRoute}},
		{Name: prefix + "dist_nobounds", Measure: w.size, Aggregation: view.Distribution()},
		// Past its limit: an overflow row.
		{Name: prefix + "dist_overflow", Measure: w.lat, Aggregation: view.Distribution(1, 10), TagKeys: []tag.Key{kRoute, kStatus}, CardinalityLimit: 2},
	}
	w.registered = time.Now()
	if err := view.Register(w.views...); err != nil {
		t.Fatal(err)
	}
	w.regAfter = time.Now()
	t.Cleanup(func() { view.Unregister(w.views...) })
	return w
}

// tagSets are the contexts recorded under: all keys, some keys absent,
// none.
var tagSets = [][]tag.Mutator{
	{tag.Upsert(kMethod, "GET"), tag.Upsert(kRoute, "/users"), tag.Upsert(kStatus, "200")},
	{tag.Upsert(kMethod, "POST"), tag.Upsert(kRoute, "/orders")}, // no status
	{tag.Upsert(kRoute, "/users")},                               // route only
	{},                                                           // no tags
	{tag.Upsert(kMethod, "GET"), tag.Upsert(kStatus, "500")},     // no route
	{tag.Upsert(kMethod, "DELETE"), tag.Upsert(kRoute, "/orders/{id}"), tag.Upsert(kStatus, "404")},
}

// record records phase's values under tag sets [from, to). Values fall on
// bucket bounds too (1, 2, 5, 10, 100), and the signed measure gets
// negative values on some tag sets.
func (w *workload) record(t *testing.T, phase, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		ctx, err := tag.New(context.Background(), tagSets[i]...)
		if err != nil {
			t.Fatal(err)
		}
		for j := range 3 + i + phase {
			lat := []float64{0.25, 1, 2, 3.5, 5, 10, 42, 100, 250}[(i+j+phase)%9]
			signed := float64(j) + 0.5
			if i%2 == 1 {
				signed = -signed
			}
			stats.Record(ctx, w.lat.M(lat), w.size.M(int64(100*(i+1)+j+phase)), w.signed.M(signed))
		}
	}
}

// receiver is an OTLP/HTTP receiver on 127.0.0.1 that keeps the decoded
// requests.
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*colmetricspb.ExportMetricsServiceRequest
	raw  [][]byte // the bodies, uncompressed
	errs []error
}

func newReceiver(t *testing.T, wantEncoding string) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		err := func() error {
			if req.Method != http.MethodPost || req.URL.Path != "/v1/metrics" {
				return fmt.Errorf("got %s %s; want POST /v1/metrics", req.Method, req.URL.Path)
			}
			if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
				return fmt.Errorf("got Content-Type %q", ct)
			}
			if ce := req.Header.Get("Content-Encoding"); ce != wantEncoding {
				return fmt.Errorf("got Content-Encoding %q; want %q", ce, wantEncoding)
			}
			if got := req.Header.Get("Authorization"); got != "Bearer t0ken" {
				return fmt.Errorf("got Authorization %q", got)
			}
			var body io.Reader = req.Body
			if wantEncoding == "gzip" {
				zr, err := gzip.NewReader(req.Body)
				if err != nil {
					return err
				}
				body = zr
			}
			data, err := io.ReadAll(body)
			if err != nil {
				return err
			}
			var m colmetricspb.ExportMetricsServiceRequest
			if err := proto.Unmarshal(data, &m); err != nil {
				return fmt.Errorf("proto.Unmarshal: %w", err)
			}
			r.mu.Lock()
			r.reqs = append(r.reqs, &m)
			r.raw = append(r.raw, data)
			r.mu.Unlock()
			return nil
		}()
		if err != nil {
			r.mu.Lock()
			r.errs = append(r.errs, err)
			r.mu.Unlock()
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out, _ := proto.Marshal(&colmetricspb.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

// last returns the last request received and its bytes.
func (r *receiver) last(t *testing.T) (*colmetricspb.ExportMetricsServiceRequest, []byte) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, err := range r.errs {
		t.Errorf("receiver: %v", err)
	}
	if len(r.reqs) == 0 {
		t.Fatal("receiver: no request")
	}
	return r.reqs[len(r.reqs)-1], r.raw[len(r.raw)-1]
}

var resource = exporter.Resource{ServiceName: "otlpcheck", Host: "web-01.example.internal", PID: 4242,
	Attributes: []wire.Attribute{{Key: "deployment.environment", Value: "test"}, {Key: "empty", Value: ""}}}

// TestMatchesOfficial exports twice (the second time after more
// recordings, some on new series) and compares each request, decoded with
// the official types, with the reference conversion of the rows.
func TestMatchesOfficial(t *testing.T) {
	for _, temporality := range []otlp.Temporality{otlp.Cumulative, otlp.Delta} {
		for _, compression := range []exporter.Compression{otlp.NoCompression, otlp.Gzip} {
			name := fmt.Sprintf("temporality=%v/gzip=%v", temporality, compression == otlp.Gzip)
			t.Run(name, func(t *testing.T) {
				prefix := fmt.Sprintf("otlpcheck/%d%d/", temporality, compression)
				w := newWorkload(t, prefix)
				encoding := ""
				if compression == otlp.Gzip {
					encoding = "gzip"
				}
				rcv := newReceiver(t, encoding)
				ex, err := otlp.New(otlp.Options{Endpoint: rcv.URL, Temporality: temporality, Compression: compression,
					Resource: resource, Header: http.Header{"Authorization": {"Bearer t0ken"}}})
				if err != nil {
					t.Fatal(err)
				}
				var prev snapshot
				var prevEnd uint64
				seen := map[string]bool{}
				for phase := range 2 {
					if phase == 0 {
						w.record(t, 0, 0, 4)
					} else {
						w.record(t, 1, 2, len(tagSets)) // two old tag sets, two new
					}
					cur, err := retrieve(w.views)
					if err != nil {
						t.Fatal(err)
					}
					before := time.Now()
					if err := ex.Export(context.Background()); err != nil {
						t.Fatalf("Export: %v", err)
					}
					after := time.Now()
					req, raw := rcv.last(t)
					got := keepMetrics(req, prefix)

					// Timestamps: every point of a metric shares them; the
					// end is the export's; the start is the view's
					// registration (cumulative, and delta's first export)
					// or the previous export's end (delta).
					ts := map[string]times{}
					var end uint64
					for _, m := range got.ResourceMetrics[0].ScopeMetrics[0].Metrics {
						tm, ok := pointTimes(m)
						if !ok {
							t.Fatalf("metric %q: data points with different timestamps", m.Name)
						}
						if end == 0 {
							end = tm.end
						}
						if tm.end != end || tm.end < ns(before) || tm.end > ns(after) {
							t.Errorf("metric %q: time %d; want the export's, within [%d, %d]", m.Name, tm.end, ns(before), ns(after))
						}
						for _, start := range tm.starts {
							switch {
							case m.GetGauge() != nil:
								if start != 0 {
									t.Errorf("gauge %q: start %d; want none", m.Name, start)
								}
							case temporality == otlp.Delta && phase > 0:
								if start != prevEnd {
									t.Errorf("metric %q: start %d; want the previous export's time %d", m.Name, start, prevEnd)
								}
							default: // cumulative, and delta's first export: the view's registration (no series was evicted)
								if start < ns(w.registered) || start > ns(w.regAfter) {
									t.Errorf("metric %q: start %d; want the view's registration, within [%d, %d]", m.Name, start, ns(w.registered), ns(w.regAfter))
								}
							}
						}
						ts[m.Name] = tm
					}
					prevEnd = end

					var base snapshot
					if temporality == otlp.Delta {
						base = prev
						if base == nil {
							base = snapshot{} // delta, first export: everything is new
						}
					}
					want := referenceRequest(resource, referenceMetrics(w.views, cur, base, ts))
					if d := diff(got, keepMetrics(want, prefix)); d != "" {
						t.Fatalf("phase %d: the request differs from the reference conversion:\n%s", phase, d)
					}
					if n := len(got.ResourceMetrics[0].ScopeMetrics[0].Metrics); phase == 0 && n != len(w.views) {
						t.Errorf("phase 0: %d metrics; want %d", n, len(w.views))
					}
					// Our bytes are protobuf-go's for the message they
					// decode to: same field order, no default values
					// written, minimal varints.
					if canon, err := (proto.MarshalOptions{Deterministic: true}).Marshal(req); err != nil {
						t.Fatal(err)
					} else if !bytes.Equal(canon, raw) {
						t.Errorf("phase %d: our %d bytes differ from protobuf-go's %d for the same message", phase, len(raw), len(canon))
					}
					cover(got, seen)
					prev = cur
				}
				// The cases the comparison went through.
				want := []string{"sum", "no sum", "min/max", "int", "double", "gauge", "absent tag", "no tags", "no bounds", "overflow"}
				if temporality == otlp.Delta {
					want = append(want, "no min/max")
				}
				for _, c := range want {
					if !seen[c] {
						t.Errorf("no data point with %s was compared", c)
					}
				}
				st := ex.Stats()
				if st.Exports != 2 || st.Failures != 0 || st.Requests != 2 || st.Points == 0 || st.Dropped != 0 {
					t.Errorf("Stats: %+v", st)
				}
			})
		}
	}
}

// TestDeltaSkipsUnchanged checks a delta export after no recording holds
// only the gauges (a last value is always reported).
func TestDeltaSkipsUnchanged(t *testing.T) {
	prefix := "otlpcheck/unchanged/"
	w := newWorkload(t, prefix)
	w.record(t, 0, 0, len(tagSets))
	enc, err := otlp.NewEncoder(otlp.Delta, resource)
	if err != nil {
		t.Fatal(err)
	}
	enc.Encode(time.Now())
	var req colmetricspb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(enc.Encode(time.Now()), &req); err != nil {
		t.Fatal(err)
	}
	got := keepMetrics(&req, prefix)
	for _, m := range got.ResourceMetrics[0].ScopeMetrics[0].Metrics {
		if _, ok := m.Data.(*metricspb.Metric_Gauge); !ok {
			t.Errorf("metric %q in a delta export with nothing new", m.Name)
		}
	}
	if n := len(got.ResourceMetrics[0].ScopeMetrics[0].Metrics); n != 2 {
		t.Errorf("%d metrics; want the 2 gauges", n)
	}
}

// cover notes which cases the data points of req exercise.
func cover(req *colmetricspb.ExportMetricsServiceRequest, seen map[string]bool) {
	for _, m := range req.ResourceMetrics[0].ScopeMetrics[0].Metrics {
		var pts []*metricspb.NumberDataPoint
		switch d := m.Data.(type) {
		case *metricspb.Metric_Sum:
			pts = d.Sum.DataPoints
		case *metricspb.Metric_Gauge:
			pts = d.Gauge.DataPoints
			seen["gauge"] = true
		case *metricspb.Metric_Histogram:
			for _, p := range d.Histogram.DataPoints {
				seen[map[bool]string{true: "sum", false: "no sum"}[p.Sum != nil]] = true
				seen[map[bool]string{true: "min/max", false: "no min/max"}[p.Min != nil && p.Max != nil]] = true
				seen["no bounds"] = seen["no bounds"] || len(p.ExplicitBounds) == 0
				seen["no tags"] = seen["no tags"] || len(p.Attributes) == 0
				for _, kv := range p.Attributes {
					seen["overflow"] = seen["overflow"] || kv.Key == "otel.metric.overflow" && kv.Value.GetBoolValue()
				}
			}
		}
		for _, p := range pts {
			switch p.Value.(type) {
			case *metricspb.NumberDataPoint_AsInt:
				seen["int"] = true
			case *metricspb.NumberDataPoint_AsDouble:
				seen["double"] = true
			}
			seen["no tags"] = seen["no tags"] || len(p.Attributes) == 0
			seen["absent tag"] = seen["absent tag"] || m.Name[len(m.Name)-5:] == "count" && len(p.Attributes) == 2
		}
	}
}
