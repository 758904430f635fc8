package zhttp_test

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/internal/viewtest"
	"github.com/zerostat/zerostat/plugin/zhttp"
)

// TestIssue43ServerAttributes (issue 43, item 5): the server views'
// server.address and server.port come from the Host header (or
// Options.ServerName, its port from the Host header when it names none),
// the port only when it is not the scheme's default, and
// network.protocol.name and network.protocol.version from Request.Proto,
// as otelhttp sets them. A Host that cannot be a tag value leaves
// server.address out, and the request is still recorded.
func TestIssue43ServerAttributes(t *testing.T) {
	register(t, zhttp.OTelServerDurationView)
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	long := strings.Repeat("a", 300) + ".example"
	for _, c := range []struct {
		host, serverName, proto string
		tls                     bool
	}{
		{host: "example.com"},
		{host: "example.com:80"},
		{host: "example.com:8080"},
		{host: "example.com:0080"},
		{host: "example.com:08080"},
		{host: "example.com:99999"},
		{host: "example.com:443", tls: true},
		{host: "example.com:80", tls: true},
		{host: "[::1]:8443", proto: "HTTP/2.0", tls: true},
		{host: "[::1]"},
		{host: ""},
		{host: long},
		{host: "example.com:8080", serverName: "api.example.com"},
		{host: "example.com:8080", serverName: "api.example.com:9000"},
		{host: "example.com", proto: "HTTP/1.0"},
	} {
		req := httptest.NewRequest("GET", "/x", nil)
		req.Host = c.host
		if c.proto != "" {
			req.Proto = c.proto
		}
		if c.tls {
			req.TLS = &tls.ConnectionState{}
		}
		zhttp.NewHandler(ok, zhttp.Options{ServerName: c.serverName}).ServeHTTP(httptest.NewRecorder(), req)
	}
	m := []string{"http.request.method=GET", "http.response.status_code=200"}
	h := append([]string{"url.scheme=http"}, m...)
	hs := append([]string{"url.scheme=https"}, m...)
	h11 := append(h, h11...)
	viewtest.Equal(t, zhttp.OTelServerDurationView.Name, map[string]float64{
		tags(h11, "server.address=example.com"):                                                                                4, // example.com, :80, :0080, :99999 (not a port)
		tags(h11, "server.address=example.com", "server.port=8080"):                                                            2, // :8080, :08080
		tags(hs, "server.address=example.com", "network.protocol.name=http", "network.protocol.version=1.1"):                   1,
		tags(hs, "server.address=example.com", "server.port=80", "network.protocol.name=http", "network.protocol.version=1.1"): 1,
		tags(hs, "server.address=::1", "server.port=8443", "network.protocol.name=http", "network.protocol.version=2.0"):       1,
		tags(h11, "server.address=::1"):     1,
		tags(h11 /* "" and the long one */): 2,
		tags(h11, "server.address=api.example.com", "server.port=8080"):                                     1,
		tags(h11, "server.address=api.example.com", "server.port=9000"):                                     1,
		tags(h, "server.address=example.com", "network.protocol.name=http", "network.protocol.version=1.0"): 1,
	})
}

// TestSwitchingProtocolsStatus: 101 Switching Protocols is a response's
// status (net/http's and otelhttp's rule); other 1xx are not.
func TestSwitchingProtocolsStatus(t *testing.T) {
	register(t, zhttp.ServerResponseCountByStatusCode)
	for _, codes := range [][]int{{http.StatusSwitchingProtocols}, {http.StatusEarlyHints, http.StatusNoContent}} {
		h := zhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for _, c := range codes {
				w.WriteHeader(c)
			}
		}), zhttp.Options{})
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
	}
	viewtest.Equal(t, zhttp.ServerResponseCountByStatusCode.Name, map[string]float64{"http.status=101": 1, "http.status=204": 1})
}

// TestIssue43ClientAttributes (issue 43, item 5): the client views'
// url.scheme is the URL's (else https over TLS, else http), and
// network.protocol.name and network.protocol.version come from the
// response's Proto, else the request's; server.address falls back to the
// Host header when the URL has no host.
func TestIssue43ClientAttributes(t *testing.T) {
	register(t, zhttp.OTelClientDurationView)
	proto := "HTTP/2.0"
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Proto: proto, Body: http.NoBody, Request: req}, nil
	})
	tr := zhttp.NewTransport(base)
	for _, u := range []string{"https://example.com/x", "http://example.com:8080/x"} {
		if _, err := tr.RoundTrip(httptest.NewRequest("GET", u, nil)); err != nil {
			t.Fatal(err)
		}
	}
	proto = ""
	req := httptest.NewRequest("GET", "/x", nil) // a server request: no URL host or scheme
	req.Header.Set("Host", "example.org:9090")
	req.Proto = "HTTP/1.0"
	if _, err := tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	m := []string{"http.request.method=GET", "http.response.status_code=200", "network.protocol.name=http"}
	viewtest.Equal(t, zhttp.OTelClientDurationView.Name, map[string]float64{
		tags(m, "network.protocol.version=2.0", "server.address=example.com", "server.port=443", "url.scheme=https"): 1,
		tags(m, "network.protocol.version=2.0", "server.address=example.com", "server.port=8080", "url.scheme=http"): 1,
		tags(m, "network.protocol.version=1.0", "server.address=example.org", "server.port=9090", "url.scheme=http"): 1,
	})
}
