package zhttp_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zerostat/zerostat/internal/cannedrt"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/internal/viewtest"
	"github.com/zerostat/zerostat/plugin/zhttp"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func register(t *testing.T, vs ...*view.View) {
	t.Helper()
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
}

// row is the viewtest row of tags kv ("key=value", in any order): sorted
// by key.
func row(kv ...string) string {
	kv = slices.Clone(kv)
	slices.SortFunc(kv, func(a, b string) int {
		ka, _, _ := strings.Cut(a, "=")
		kb, _, _ := strings.Cut(b, "=")
		return strings.Compare(ka, kb)
	})
	return strings.Join(kv, ",")
}

// h11 are the network.protocol tags of an HTTP/1.1 request.
var h11 = []string{"network.protocol.name=http", "network.protocol.version=1.1"}

// tags is row of kv and more.
func tags(more []string, kv ...string) string { return row(append(kv, more...)...) }

func mux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "item "+r.PathValue("id"))
	})
	m.HandleFunc("POST /items", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
	})
	m.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusInternalServerError)
	})
	return m
}

// TestServerAndClientTraffic serves real requests on 127.0.0.1 through
// the Handler and the Transport and checks every view's exact counts.
func TestServerAndClientTraffic(t *testing.T) {
	register(t, zhttp.DefaultServerViews...)
	register(t, zhttp.OTelServerViews...)
	register(t, zhttp.ClientCompletedCount, zhttp.ClientSentBytesDistribution, zhttp.ClientReceivedBytesDistribution)
	register(t, zhttp.OTelClientViews...)
	srv := httptest.NewServer(zhttp.NewHandler(mux(), zhttp.Options{}))
	defer srv.Close()
	client := &http.Client{Transport: zhttp.NewTransport(nil)}
	do := func(method, path, body string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for i := 0; i < 5; i++ {
		do("GET", "/items/"+string(rune('a'+i)), "") // 5 different paths, one route
	}
	for i := 0; i < 3; i++ {
		do("POST", "/items", "12345")
	}
	do("GET", "/fail", "")
	do("GET", "/nowhere", "")
	do("BREW", "/items/x", "") // not a standard method: _OTHER, no route matched (405)

	viewtest.Equal(t, "opencensus.io/http/server/request_count", map[string]float64{"": 11})
	viewtest.Equal(t, "opencensus.io/http/server/request_count_by_method",
		map[string]float64{"http.method=GET": 7, "http.method=POST": 3, "http.method=_OTHER": 1})
	viewtest.Equal(t, "opencensus.io/http/server/response_count_by_status_code",
		map[string]float64{"http.status=200": 5, "http.status=201": 3, "http.status=500": 1, "http.status=404": 1, "http.status=405": 1})
	viewtest.Equal(t, "opencensus.io/http/server/latency", map[string]float64{"": 11})
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	srvTags := append([]string{"server.address=127.0.0.1", "server.port=" + u.Port(), "url.scheme=http"}, h11...)
	viewtest.Equal(t, "http.server.request.duration", map[string]float64{
		tags(srvTags, "http.request.method=GET", "http.response.status_code=200", "http.route=/items/{id}"):             5,
		tags(srvTags, "http.request.method=POST", "http.response.status_code=201", "http.route=/items"):                 3,
		tags(srvTags, "error.type=500", "http.request.method=GET", "http.response.status_code=500", "http.route=/fail"): 1,
		tags(srvTags, "http.request.method=GET", "http.response.status_code=404"):                                       1,
		tags(srvTags, "http.request.method=_OTHER", "http.response.status_code=405"):                                    1,
	})
	rows, _ := view.RetrieveData("opencensus.io/http/server/request_bytes")
	if d := rows[0].Data.(*view.DistributionData); d.Count != 11 || d.Sum() != 15 {
		t.Errorf("request_bytes: count %d sum %v; want 11 and 15", d.Count, d.Sum())
	}
	viewtest.Equal(t, "opencensus.io/http/client/completed_count", map[string]float64{
		"http_client_method=GET,http_client_status=200": 5, "http_client_method=POST,http_client_status=201": 3,
		"http_client_method=GET,http_client_status=500": 1, "http_client_method=GET,http_client_status=404": 1,
		"http_client_method=_OTHER,http_client_status=405": 1,
	})
	viewtest.Equal(t, "http.client.request.duration", map[string]float64{
		tags(srvTags, "http.request.method=GET", "http.response.status_code=200"):                      5,
		tags(srvTags, "http.request.method=POST", "http.response.status_code=201"):                     3,
		tags(srvTags, "error.type=500", "http.request.method=GET", "http.response.status_code=500"):    1,
		tags(srvTags, "error.type=404", "http.request.method=GET", "http.response.status_code=404"):    1,
		tags(srvTags, "error.type=405", "http.request.method=_OTHER", "http.response.status_code=405"): 1,
	})
}

func TestClientError(t *testing.T) {
	register(t, zhttp.ClientCompletedCount, zhttp.OTelClientDurationView)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: the round trip fails
	client := &http.Client{Transport: zhttp.NewTransport(nil)}
	if _, err := client.Get("http://" + addr + "/"); err == nil {
		t.Fatal("got nil error from a closed port")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
	if _, err := client.Do(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled request: got %v", err)
	}
	viewtest.Equal(t, "opencensus.io/http/client/completed_count",
		map[string]float64{"http_client_method=GET,http_client_status=500": 2})
	_, port, _ := net.SplitHostPort(addr)
	viewtest.Equal(t, "http.client.request.duration", map[string]float64{
		tags(h11, "error.type=_OTHER", "http.request.method=GET", "server.address=127.0.0.1", "server.port="+port, "url.scheme=http"): 2})
}

func TestRouteOption(t *testing.T) {
	register(t, zhttp.OTelServerDurationView)
	h := zhttp.NewHandler(http.NotFoundHandler(), zhttp.Options{Route: func(r *http.Request) string { return "/custom" }})
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/anything/at/all", nil))
	tagged := zhttp.NewHandler(zhttp.WithRouteTag(http.NotFoundHandler(), "/tagged"), zhttp.Options{})
	tagged.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
	mux := http.NewServeMux()
	mux.HandleFunc("example.com/host/{rest...}", func(http.ResponseWriter, *http.Request) {})
	zhttp.NewHandler(mux, zhttp.Options{}).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "http://example.com/host/a/b", nil))
	m := append([]string{"http.request.method=GET", "server.address=example.com", "url.scheme=http"}, h11...)
	viewtest.Equal(t, "http.server.request.duration", map[string]float64{
		tags(m, "http.response.status_code=404", "http.route=/custom"):         1,
		tags(m, "http.response.status_code=404", "http.route=/tagged"):         1,
		tags(m, "http.response.status_code=200", "http.route=/host/{rest...}"): 1,
	})
}

func TestHandlerConcurrentSafe(t *testing.T) {
	register(t, zhttp.ServerResponseCountByStatusCode)
	h := zhttp.NewHandler(mux(), zhttp.Options{})
	const goroutines, each = 4, 200
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; i < each; i++ {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/items/1", nil))
			}
		}()
	}
	close(start)
	wg.Wait()
	viewtest.Equal(t, "opencensus.io/http/server/response_count_by_status_code",
		map[string]float64{"http.status=200": goroutines * each})
}

// nopWriter is a ResponseWriter that allocates nothing.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}

var body = []byte("ok")

func TestHandlerAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	register(t, zhttp.DefaultServerViews...)
	register(t, zhttp.OTelServerViews...)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	req := httptest.NewRequest("GET", "/items/1", nil)
	w := &nopWriter{h: http.Header{}}
	bare := testing.AllocsPerRun(200, func() { mux.ServeHTTP(w, req) })
	h := zhttp.NewHandler(mux, zhttp.Options{})
	wrapped := testing.AllocsPerRun(200, func() { h.ServeHTTP(w, req) })
	if wrapped != bare {
		t.Errorf("allocs per request: %v wrapped, %v bare; want the handler to add none", wrapped, bare)
	}
}

// TestContextTagsRecorded checks that tags a middleware put in the
// request's context are recorded with the handler's own.
func TestContextTagsRecorded(t *testing.T) {
	tenant := tag.MustNewKey("tenant")
	v := &view.View{Name: "test/by_tenant", Measure: zhttp.ServerLatency, Aggregation: view.Count(), TagKeys: []tag.Key{tenant, zhttp.StatusCode}}
	register(t, v)
	h := zhttp.NewHandler(mux(), zhttp.Options{})
	for i, name := range []string{"a", "b", "b", ""} {
		req := httptest.NewRequest("GET", "/items/1", nil)
		if name != "" {
			ctx, err := tag.New(req.Context(), tag.Upsert(tenant, name))
			if err != nil {
				t.Fatal(i, err)
			}
			req = req.WithContext(ctx)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	viewtest.Equal(t, "test/by_tenant", map[string]float64{
		"http.status=200,tenant=a": 1, "http.status=200,tenant=b": 2, "http.status=200": 1})
}

func TestTransportAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	register(t, zhttp.ClientCompletedCount, zhttp.ClientReceivedBytesDistribution)
	register(t, zhttp.OTelClientViews...)
	base := cannedrt.New()
	tr := zhttp.NewTransport(base)
	req := httptest.NewRequest("GET", "http://example.com/x", nil)
	bare, wrapped := transportAllocs(base, tr, req)
	if wrapped-bare != 1 {
		t.Errorf("allocs per request: %v through the Transport, %v bare; want 1 more (the body wrapper)", wrapped, bare)
	}
	viewtest.Equal(t, "opencensus.io/http/client/completed_count", map[string]float64{"http_client_method=GET,http_client_status=200": 201}) // AllocsPerRun: 200 runs and a warm-up
}

// TestTransportAtHeaders: with AtHeaders the Transport records when the
// headers arrive, with the Content-Length as the bytes received, returns
// the response body as the base gave it, and allocates nothing of its own.
func TestTransportAtHeaders(t *testing.T) {
	register(t, zhttp.ClientCompletedCount, zhttp.ClientReceivedBytesDistribution)
	register(t, zhttp.OTelClientViews...)
	base := cannedrt.New()
	tr := &zhttp.Transport{Base: base, AtHeaders: true}
	req := httptest.NewRequest("GET", "http://example.com/x", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Body != base.Resp.Body {
		t.Error("the response body was wrapped")
	}
	// Recorded before the body is read: at the headers.
	viewtest.Equal(t, "opencensus.io/http/client/completed_count", map[string]float64{"http_client_method=GET,http_client_status=200": 1})
	rows, err := view.RetrieveData("opencensus.io/http/client/received_bytes")
	if err != nil || len(rows) != 1 {
		t.Fatalf("received_bytes: %v rows, %v", len(rows), err)
	}
	if d := rows[0].Data.(*view.DistributionData); d.Count != 1 || d.Sum() != 2 {
		t.Errorf("received_bytes: count %d sum %v; want 1 request of 2 bytes (its Content-Length)", d.Count, d.Sum())
	}
	resp.Body.Close()
	if race.Enabled {
		return // the race detector allocates
	}
	bare, wrapped := transportAllocs(base, tr, req)
	if wrapped != bare {
		t.Errorf("allocs per request: %v through the Transport, %v bare; want none added", wrapped, bare)
	}
	viewtest.Equal(t, "opencensus.io/http/client/completed_count", map[string]float64{"http_client_method=GET,http_client_status=200": 1 + 201})
}

// transportAllocs counts the allocations of a request (200 runs and a
// warm-up) through base alone and through tr, the body read and closed.
func transportAllocs(base, tr http.RoundTripper, req *http.Request) (bare, wrapped float64) {
	buf := make([]byte, 8)
	through := func(rt http.RoundTripper) float64 {
		return testing.AllocsPerRun(200, func() {
			resp, _ := rt.RoundTrip(req)
			resp.Body.Read(buf)
			resp.Body.Close()
		})
	}
	return through(base), through(tr)
}
