// Package zhttp instruments net/http servers and clients: a Handler
// wrapper and a Transport (RoundTripper) that record OpenCensus ochttp's
// measures, so ochttp's views (same names, tag keys, units, bucket
// bounds and bucket rule, declared here) keep existing dashboards
// working, and the OpenTelemetry HTTP semantic conventions' measures.
// Which ones are exported is which views you register:
//
//	view.Register(zhttp.DefaultServerViews...) // ochttp's names
//	view.Register(zhttp.OTelServerViews...)    // http.server.request.duration, ...
//	http.ListenAndServe(addr, zhttp.NewHandler(mux, zhttp.Options{}))
//
//	client := &http.Client{Transport: zhttp.NewTransport(nil)}
//
// A measure with no view registered costs one atomic load per request.
//
// # Tags
//
// Server, on every measure: http.method, http.status and
// http_server_route (ochttp's keys), http.request.method, http.route,
// http.response.status_code, url.scheme and error.type (OpenTelemetry's;
// error.type is the status code, "503", of a 5xx response, which the HTTP
// conventions count as a server's error, and absent otherwise). Client:
// ochttp's measures carry http_client_method, http_client_status,
// http.method and http.status; http.client.request.duration carries
// http.request.method, http.response.status_code, server.address,
// server.port (the request URL's port, or the scheme's default: 80 for
// http, 443 for https) and error.type (the status code of a 4xx or 5xx
// response, a client's error; "_OTHER" for a round trip that failed,
// which has no status code; absent otherwise). A client request whose
// Method is "" is recorded as GET, the method net/http sends for it.
//
// The route comes from the pattern Go's ServeMux matched
// (Request.Pattern, without its method and host) or Options.Route, never
// from the raw path; ochttp's http.host and http.path keys are declared
// but never set, since the client chooses their values. A method that is
// not a standard one is recorded as "_OTHER", as the OpenTelemetry
// conventions say, for the same reason.
//
// # Buckets
//
// The ochttp-named views (opencensus.io/http/...) count by OpenCensus's
// rule, as ochttp's do: view.Distribution, lower-inclusive buckets
// [b[i-1], b[i]). The OpenTelemetry-named views (http.server.request.duration,
// http.server.request.body.size, http.server.response.body.size,
// http.client.request.duration) count by OpenTelemetry's rule for
// explicit-bucket histograms: view.DistributionUpperInclusive,
// upper-inclusive buckets (b[i-1], b[i]], so a request of exactly 0.1s is
// counted in (0.075, 0.1], as the OpenTelemetry SDK counts it.
//
// # Cost
//
// Server: no allocation of its own per request (the response writer
// wrapper is pooled; status codes come from a table; TestHandlerAllocs),
// two time readings and two records through tag contexts built once per
// method and per (method, route, status, scheme) combination, found in a
// lock-free direct-mapped cache (a request whose context already carries
// tags records with stats.RecordWithTags instead, to keep them); a 5xx
// allocates no more (TestErrorResponsesAllocNothing). Client: two
// records with stats.RecordWithTags, one at the start and one at the end
// (both families' measures with both families' tags: nine, found again
// in RecordWithTags's derived-map cache), and one allocation per
// request, the response body
// wrapper the caller holds (it cannot be pooled: the caller may keep it
// after Close), which ochttp's latency (to the body's last byte) needs;
// with Transport.AtHeaders the request is recorded when its headers
// arrive, as otelhttp and promhttp do, and the Transport allocates
// nothing (TestTransportAtHeaders; for 4xx and 5xx responses and for a
// context carrying a tag too, TestErrorResponsesAllocNothing). Measured
// side by side with ochttp, otelhttp and promhttp in the benchmarks
// module (docs/performance.md).
//
// Handler and Transport are safe for concurrent use.
package zhttp
