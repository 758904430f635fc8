package plugins

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opencensus.io/plugin/ochttp"
	ocview "go.opencensus.io/stats/view"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/zerostat/zerostat/internal/cannedrt"
	"github.com/zerostat/zerostat/plugin/zhttp"
	"github.com/zerostat/zerostat/view"
)

// The per-request cost of server instrumentation: one GET through a
// ServeMux route that writes 2 bytes to a writer that allocates nothing,
// served directly (no network), so what differs between rows is the
// instrumentation. Rows are BenchmarkHTTPServer/impl=<impl>:
//   - floor: the bare ServeMux.
//   - zerostat: zhttp.NewHandler, ochttp's default server views and the
//     OTel server views registered.
//   - opencensus: ochttp.Handler, its default server views registered
//     (its tracing stays on, at OpenCensus's default sampler: ochttp has
//     no stats-only mode).
//   - otel: otelhttp.NewHandler with an SDK MeterProvider (manual reader)
//     and a no-op tracer provider.
//   - prometheus: promhttp.InstrumentHandlerDuration over
//     InstrumentHandlerCounter and InstrumentHandlerResponseSize, labels
//     code and method.

type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}

var okBody = []byte("ok")

func newMux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) { w.Write(okBody) })
	return m
}

func httpImpls(tb testing.TB) []struct {
	name string
	h    http.Handler
} {
	if err := view.Register(append(append([]*view.View(nil), zhttp.DefaultServerViews...), zhttp.OTelServerViews...)...); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { view.Unregister(zhttp.DefaultServerViews...); view.Unregister(zhttp.OTelServerViews...) })
	if err := ocview.Register(ochttp.DefaultServerViews...); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ocview.Unregister(ochttp.DefaultServerViews...) })
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	reg := prometheus.NewRegistry()
	dur := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "http_request_duration_seconds", Buckets: prometheus.DefBuckets}, []string{"code", "method"})
	cnt := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "http_requests_total"}, []string{"code", "method"})
	size := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "http_response_size_bytes", Buckets: prometheus.ExponentialBuckets(100, 10, 8)}, []string{"code", "method"})
	reg.MustRegister(dur, cnt, size)
	return []struct {
		name string
		h    http.Handler
	}{
		{"floor", newMux()},
		{"zerostat", zhttp.NewHandler(newMux(), zhttp.Options{})},
		{"opencensus", &ochttp.Handler{Handler: newMux()}},
		{"otel", otelhttp.NewHandler(newMux(), "server", otelhttp.WithMeterProvider(mp), otelhttp.WithTracerProvider(noop.NewTracerProvider()))},
		{"prometheus", promhttp.InstrumentHandlerDuration(dur, promhttp.InstrumentHandlerCounter(cnt, promhttp.InstrumentHandlerResponseSize(size, newMux())))},
	}
}

func BenchmarkHTTPServer(b *testing.B) {
	for _, impl := range httpImpls(b) {
		b.Run("impl="+impl.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "/items/1", nil)
			w := &nopWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				impl.h.ServeHTTP(w, req)
			}
		})
	}
}

// TestHTTPServerAllocs states the allocation column of docs/performance.md
// as a test: zhttp adds none to the bare mux.
func TestHTTPServerAllocs(t *testing.T) {
	req := httptest.NewRequest("GET", "/items/1", nil)
	w := &nopWriter{h: http.Header{}}
	allocs := map[string]float64{}
	for _, impl := range httpImpls(t) {
		allocs[impl.name] = testing.AllocsPerRun(100, func() { impl.h.ServeHTTP(w, req) })
	}
	t.Logf("allocs per request: %v", allocs)
	if !raceEnabled && allocs["zerostat"] != allocs["floor"] {
		t.Errorf("zhttp: %v allocs per request; the bare mux %v", allocs["zerostat"], allocs["floor"])
	}
}

// The per-request cost of client instrumentation: one GET through a
// RoundTripper over a base that answers from memory and allocates
// nothing, the body read and closed. Rows are BenchmarkHTTPClient/impl=:
//   - floor: the base alone.
//   - zerostat: zhttp.Transport, ochttp's default client views and the
//     OTel client views registered (latency to the body's end: one
//     allocation, the body wrapper).
//   - zerostat-atheaders: the same with AtHeaders (recorded at the
//     headers, as otelhttp and promhttp do: none).
//   - opencensus: ochttp.Transport, its default client views registered
//     (its tracing at OpenCensus's default sampler).
//   - otel: otelhttp.NewTransport, SDK MeterProvider, no-op tracer.
//   - prometheus: promhttp.InstrumentRoundTripperDuration over
//     InstrumentRoundTripperCounter, labels code and method.

func clientImpls(tb testing.TB) []struct {
	name string
	rt   http.RoundTripper
} {
	if err := view.Register(append(append([]*view.View(nil), zhttp.DefaultClientViews...), zhttp.OTelClientViews...)...); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { view.Unregister(zhttp.DefaultClientViews...); view.Unregister(zhttp.OTelClientViews...) })
	if err := ocview.Register(ochttp.DefaultClientViews...); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ocview.Unregister(ochttp.DefaultClientViews...) })
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	reg := prometheus.NewRegistry()
	dur := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "http_client_request_duration_seconds", Buckets: prometheus.DefBuckets}, []string{"code", "method"})
	cnt := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "http_client_requests_total"}, []string{"code", "method"})
	reg.MustRegister(dur, cnt)
	base := func() http.RoundTripper {
		return cannedrt.New()
	}
	return []struct {
		name string
		rt   http.RoundTripper
	}{
		{"floor", base()},
		{"zerostat", zhttp.NewTransport(base())},
		{"zerostat-atheaders", &zhttp.Transport{Base: base(), AtHeaders: true}},
		{"opencensus", &ochttp.Transport{Base: base()}},
		{"otel", otelhttp.NewTransport(base(), otelhttp.WithMeterProvider(mp), otelhttp.WithTracerProvider(noop.NewTracerProvider()))},
		{"prometheus", promhttp.InstrumentRoundTripperDuration(dur, promhttp.InstrumentRoundTripperCounter(cnt, base()))},
	}
}

func clientRequest(rt http.RoundTripper, req *http.Request, buf []byte) {
	resp, err := rt.RoundTrip(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Read(buf)
	resp.Body.Close()
}

func BenchmarkHTTPClient(b *testing.B) {
	for _, impl := range clientImpls(b) {
		b.Run("impl="+impl.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "http://example.com/items/1", nil)
			buf := make([]byte, 8)
			b.ReportAllocs()
			for b.Loop() {
				clientRequest(impl.rt, req, buf)
			}
		})
	}
}

// TestHTTPClientAllocs: zhttp's Transport adds one allocation to the
// base (the body wrapper ochttp's body-end latency needs), none with
// AtHeaders.
func TestHTTPClientAllocs(t *testing.T) {
	req := httptest.NewRequest("GET", "http://example.com/items/1", nil)
	buf := make([]byte, 8)
	allocs := map[string]float64{}
	for _, impl := range clientImpls(t) {
		allocs[impl.name] = testing.AllocsPerRun(100, func() { clientRequest(impl.rt, req, buf) })
	}
	t.Logf("allocs per request: %v", allocs)
	if raceEnabled {
		return
	}
	if allocs["zerostat"] != allocs["floor"]+1 || allocs["zerostat-atheaders"] != allocs["floor"] {
		t.Errorf("zhttp: %v allocs per request, %v with AtHeaders; the base %v: want 1 more and none more",
			allocs["zerostat"], allocs["zerostat-atheaders"], allocs["floor"])
	}
}
