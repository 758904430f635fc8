package zhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/zerostat/zerostat/internal/viewtest"
	"github.com/zerostat/zerostat/plugin/zhttp"
)

// TestClientEmptyMethodIsGET: net/http sends a client request whose Method
// is "" as a GET (Request.Method: "For client requests, an empty string
// means GET"), so the Transport records it as GET, not as _OTHER, on both
// families' views.
func TestClientEmptyMethodIsGET(t *testing.T) {
	register(t, zhttp.OTelClientDurationView, zhttp.ClientCompletedCount, zhttp.ClientRequestCountByMethod)
	var seen string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Method }))
	defer srv.Close()
	u, err := url.Parse(srv.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := zhttp.NewTransport(nil).RoundTrip(&http.Request{URL: u, Header: http.Header{}})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if seen != http.MethodGet {
		t.Fatalf("the server saw method %q; want GET", seen)
	}
	// The request has no Proto: its response's, HTTP/1.1.
	viewtest.Equal(t, zhttp.OTelClientDurationView.Name, map[string]float64{
		tags(h11, "http.request.method=GET", "http.response.status_code=200", "server.address=127.0.0.1", "server.port="+u.Port(), "url.scheme=http"): 1,
	})
	viewtest.Equal(t, zhttp.ClientCompletedCount.Name, map[string]float64{"http_client_method=GET,http_client_status=200": 1})
	viewtest.Equal(t, zhttp.ClientRequestCountByMethod.Name, map[string]float64{"http.method=GET": 1})
}
