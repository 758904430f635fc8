package zhttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/zerostat/zerostat/internal/cannedrt"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/internal/viewtest"
	"github.com/zerostat/zerostat/plugin/zhttp"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestServerErrorType: on the http.server.* views error.type is
// Conditionally Required "if request has ended with an error"; a server's
// errors are its 5xx responses, and error.type is then the status code as
// a string. A 4xx is the client's error, not the server's: no error.type.
// Both the cached-context path and a request whose context carries tags.
func TestServerErrorType(t *testing.T) {
	register(t, zhttp.OTelServerViews...)
	status := func(code int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) })
	}
	for _, code := range []int{http.StatusServiceUnavailable, http.StatusInternalServerError, http.StatusNotFound, http.StatusOK} {
		zhttp.NewHandler(status(code), zhttp.Options{}).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
	}
	ctx, err := tag.New(context.Background(), tag.Upsert(tag.MustNewKey("tenant"), "a"))
	if err != nil {
		t.Fatal(err)
	}
	zhttp.NewHandler(status(http.StatusServiceUnavailable), zhttp.Options{}).
		ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil).WithContext(ctx))
	m := append([]string{"http.request.method=GET", "server.address=example.com", "url.scheme=http"}, h11...)
	want := map[string]float64{
		tags(m, "error.type=503", "http.response.status_code=503"): 2,
		tags(m, "error.type=500", "http.response.status_code=500"): 1,
		tags(m, "http.response.status_code=404"):                   1,
		tags(m, "http.response.status_code=200"):                   1,
	}
	for _, v := range zhttp.OTelServerViews {
		viewtest.Equal(t, v.Name, want)
	}
}

// TestClientErrorType: on http.client.request.duration a 4xx or 5xx
// response is an error, error.type its status code as a string, beside
// http.response.status_code; a 2xx or 3xx has no error.type. Recorded at
// the body's end and with AtHeaders alike.
func TestClientErrorType(t *testing.T) {
	register(t, zhttp.OTelClientDurationView)
	base := cannedrt.New()
	for _, atHeaders := range []bool{false, true} {
		tr := &zhttp.Transport{Base: base, AtHeaders: atHeaders}
		for _, code := range []int{http.StatusServiceUnavailable, http.StatusNotFound, http.StatusOK, http.StatusFound} {
			base.Resp.StatusCode = code
			resp, err := tr.RoundTrip(httptest.NewRequest("GET", "http://example.com/x", nil))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	m := append([]string{"http.request.method=GET", "server.address=example.com", "server.port=80", "url.scheme=http"}, h11...)
	viewtest.Equal(t, zhttp.OTelClientDurationView.Name, map[string]float64{
		tags(m, "error.type=503", "http.response.status_code=503"): 2,
		tags(m, "error.type=404", "http.response.status_code=404"): 2,
		tags(m, "http.response.status_code=200"):                   2,
		tags(m, "http.response.status_code=302"):                   2,
	})
}

// TestClientServerPort: server.port is Required on
// http.client.request.duration: the request URL's port, or the scheme's
// default (80 for http, 443 for https) when the URL names none.
func TestClientServerPort(t *testing.T) {
	var keys []string
	for _, k := range zhttp.OTelClientDurationView.TagKeys {
		keys = append(keys, k.Name())
	}
	if !slices.Contains(keys, "server.port") {
		t.Errorf("http.client.request.duration groups by %q: no server.port", keys)
	}
	register(t, zhttp.OTelClientDurationView)
	tr := &zhttp.Transport{Base: cannedrt.New(), AtHeaders: true}
	for _, u := range []string{"http://example.com/x", "https://example.com/x", "http://example.com:8080/x", "https://[::1]:8443/x", "http://[::1]/x"} {
		resp, err := tr.RoundTrip(httptest.NewRequest("GET", u, nil))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	m := append([]string{"http.request.method=GET", "http.response.status_code=200"}, h11...)
	viewtest.Equal(t, zhttp.OTelClientDurationView.Name, map[string]float64{
		tags(m, "server.address=example.com", "server.port=80", "url.scheme=http"):   1,
		tags(m, "server.address=example.com", "server.port=443", "url.scheme=https"): 1,
		tags(m, "server.address=example.com", "server.port=8080", "url.scheme=http"): 1,
		tags(m, "server.address=::1", "server.port=8443", "url.scheme=https"):        1,
		tags(m, "server.address=::1", "server.port=80", "url.scheme=http"):           1,
	})
}

// TestErrorResponsesAllocNothing: recording a 5xx (server) or a 4xx/5xx
// (client, AtHeaders) allocates nothing of the instrumentation's own, as a
// 200 does, nor does a client request whose context carries tags.
func TestErrorResponsesAllocNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	register(t, zhttp.DefaultServerViews...)
	register(t, zhttp.OTelServerViews...)
	register(t, zhttp.ClientCompletedCount, zhttp.ClientReceivedBytesDistribution)
	register(t, zhttp.OTelClientViews...)

	fail := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	req := httptest.NewRequest("GET", "/x", nil)
	w := &nopWriter{h: http.Header{}}
	bare := testing.AllocsPerRun(200, func() { fail.ServeHTTP(w, req) })
	h := zhttp.NewHandler(fail, zhttp.Options{})
	if wrapped := testing.AllocsPerRun(200, func() { h.ServeHTTP(w, req) }); wrapped != bare {
		t.Errorf("server 503: allocs per request %v wrapped, %v bare; want the handler to add none", wrapped, bare)
	}

	ctx, err := tag.New(context.Background(), tag.Upsert(tag.MustNewKey("tenant"), "a"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		code int
		req  *http.Request
	}{
		{http.StatusServiceUnavailable, httptest.NewRequest("GET", "http://example.com/x", nil)},
		{http.StatusNotFound, httptest.NewRequest("GET", "https://example.com:8443/x", nil)},
		{http.StatusOK, httptest.NewRequest("GET", "http://example.com/x", nil).WithContext(ctx)},
		{http.StatusNotFound, httptest.NewRequest("GET", "http://example.com/x", nil).WithContext(ctx)},
	} {
		base := cannedrt.New()
		base.Resp.StatusCode = c.code
		bare, wrapped := transportAllocs(base, &zhttp.Transport{Base: base, AtHeaders: true}, c.req)
		if wrapped != bare {
			t.Errorf("client %d %s (context tags %v): allocs per request %v through the Transport, %v bare; want none added",
				c.code, c.req.URL, tag.FromContext(c.req.Context()) != nil, wrapped, bare)
		}
	}
}

// TestOTelViewsBucketsAreUpperInclusive: the OpenTelemetry-named views
// count by OpenTelemetry's rule for explicit buckets, (b[i-1], b[i]]
// (metrics data model, ExplicitBounds; the SDK's "value <= boundary"), so
// a value equal to a bound is in the bucket that bound closes.
func TestOTelViewsBucketsAreUpperInclusive(t *testing.T) {
	register(t, zhttp.OTelServerViews...)
	register(t, zhttp.OTelClientViews...)
	for _, v := range append(slices.Clone(zhttp.OTelServerViews), zhttp.OTelClientViews...) {
		if !v.Aggregation.UpperInclusive {
			t.Errorf("%s: lower-inclusive buckets; want upper-inclusive (view.DistributionUpperInclusive)", v.Name)
		}
	}
	stats.Record(context.Background(), zhttp.ServerDuration.M(0.1), zhttp.ClientDuration.M(0.1), zhttp.ServerRequestSize.M(1024))
	// Duration bounds 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, ...: 0.1s is in bucket 5, (0.075, 0.1].
	want := make([]int64, len(zhttp.DefaultDurationDistribution.Buckets)+1)
	want[5] = 1
	for _, v := range []*view.View{zhttp.OTelServerDurationView, zhttp.OTelClientDurationView} {
		if got := buckets(t, v.Name); !slices.Equal(got, want) {
			t.Errorf("%s: 0.1s counted in buckets %v; want %v", v.Name, got, want)
		}
	}
	// Size bounds 1024, 2048, ...: 1024 bytes is in bucket 0, (-Inf, 1024].
	want = make([]int64, len(zhttp.DefaultBodySizeDistribution.Buckets)+1)
	want[0] = 1
	if got := buckets(t, zhttp.OTelServerRequestSizeView.Name); !slices.Equal(got, want) {
		t.Errorf("%s: 1024 bytes counted in buckets %v; want %v", zhttp.OTelServerRequestSizeView.Name, got, want)
	}
}

// TestOpenCensusViewsBucketsAreLowerInclusive: the ochttp-named views keep
// OpenCensus's rule, [b[i-1], b[i]), so dashboards migrated from ochttp
// see the counts ochttp gave them.
func TestOpenCensusViewsBucketsAreLowerInclusive(t *testing.T) {
	all := []*view.View{zhttp.ClientSentBytesDistribution, zhttp.ClientReceivedBytesDistribution,
		zhttp.ClientRoundtripLatencyDistribution, zhttp.ClientCompletedCount}
	all = append(append(all, zhttp.DefaultClientViews...), zhttp.DefaultServerViews...)
	for _, v := range all {
		if v.Aggregation.UpperInclusive {
			t.Errorf("%s: upper-inclusive buckets; want OpenCensus's lower-inclusive view.Distribution", v.Name)
		}
	}
	register(t, zhttp.ServerLatencyView)
	stats.Record(context.Background(), zhttp.ServerLatency.M(1))
	// Bounds 1, 2, 3, ... (ms): 1ms is in bucket 1, [1, 2).
	want := make([]int64, len(zhttp.DefaultLatencyDistribution.Buckets)+1)
	want[1] = 1
	if got := buckets(t, zhttp.ServerLatencyView.Name); !slices.Equal(got, want) {
		t.Errorf("%s: 1ms counted in buckets %v; want %v", zhttp.ServerLatencyView.Name, got, want)
	}
}

// buckets returns the bucket counts of the single row of the registered
// view named name.
func buckets(t *testing.T, name string) []int64 {
	t.Helper()
	rows, err := view.RetrieveData(name)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%s: rows %v, err %v; want one row", name, rows, err)
	}
	return rows[0].Data.(*view.DistributionData).CountPerBucket
}
