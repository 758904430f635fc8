// Package zhttp instruments net/http servers and clients: a Handler
// wrapper and a Transport (RoundTripper) that record OpenCensus ochttp's
// measures, so ochttp's views (same names, tag keys, units and bucket
// bounds, declared here) keep existing dashboards working, and the
// OpenTelemetry HTTP semantic conventions' measures. Which ones are
// exported is which views you register:
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
// Server: http.method, http.status and http_server_route (ochttp's keys),
// http.request.method, http.route, http.response.status_code and
// url.scheme (OpenTelemetry's). Client: http_client_method,
// http_client_status, http.method, http.status, and http.request.method,
// http.response.status_code, server.address, error.type.
//
// The route comes from the pattern Go's ServeMux matched
// (Request.Pattern, without its method and host) or Options.Route, never
// from the raw path; ochttp's http.host and http.path keys are declared
// but never set, since the client chooses their values. A method that is
// not a standard one is recorded as "_OTHER", as the OpenTelemetry
// conventions say, for the same reason.
//
// # Cost
//
// Server: no allocation of its own per request (the response writer
// wrapper is pooled; status codes come from a table; TestHandlerAllocs),
// two time readings and two records through tag contexts built once per
// method and per (method, route, status, scheme) combination, found in a
// lock-free direct-mapped cache (a request whose context already carries
// tags records with stats.RecordWithTags instead, to keep them). Client: one
// allocation per request, the response body wrapper the caller holds
// (it cannot be pooled: the caller may keep it after Close), which
// ochttp's latency (to the body's last byte) needs; with
// Transport.AtHeaders the request is recorded when its headers arrive, as
// otelhttp and promhttp do, and the Transport allocates nothing
// (TestTransportAtHeaders). Measured
// side by side with ochttp, otelhttp and promhttp in the benchmarks
// module (docs/performance.md).
//
// Handler and Transport are safe for concurrent use.
package zhttp
