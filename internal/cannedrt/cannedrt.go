// Package cannedrt is an http.RoundTripper that answers every request with
// one response from memory, allocating only the body's io.NopCloser (one
// allocation per request, the least a fresh body costs): a benchmark or an
// allocation test of a client Transport wrapping it subtracts that bare
// cost. For tests and benchmarks only.
package cannedrt

import (
	"io"
	"net/http"
	"strings"
)

// RoundTripper answers 200 with the body "ok" (Content-Length 2), the
// same *http.Response each time: not safe for concurrent use.
type RoundTripper struct {
	Resp *http.Response
	body strings.Reader
}

// New returns a RoundTripper.
func New() *RoundTripper {
	return &RoundTripper{Resp: &http.Response{StatusCode: 200, ContentLength: 2, Header: http.Header{}}}
}

// RoundTrip returns the response, its body reset to "ok".
func (c *RoundTripper) RoundTrip(*http.Request) (*http.Response, error) {
	c.body.Reset("ok")
	c.Resp.Body = io.NopCloser(&c.body)
	return c.Resp, nil
}
