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
// http.response.status_code, url.scheme, server.address, server.port,
// network.protocol.name, network.protocol.version and error.type
// (OpenTelemetry's; error.type is the status code, "503", of a 5xx
// response, which the HTTP conventions count as a server's error, and
// absent otherwise). server.address and server.port are the Host
// header's, as otelhttp records them, the port only when it is not the
// scheme's default (80, or 443 over TLS), or Options.ServerName's (as
// otelhttp.WithServerName). The Host header is the client's choice:
// its distinct values, like any tag's, are bounded by each view's
// cardinality limit (view.View.CardinalityLimit: past it, rows fold
// into one overflow row), and each new one costs a tag.New; set
// ServerName to fix server.address. network.protocol.name and
// network.protocol.version come from Request.Proto: "http" and "1.1",
// "1.0" or "2.0" (otelhttp's values; the conventions' examples write
// HTTP/2 as "2").
//
// Client: ochttp's measures carry http_client_method,
// http_client_status, http.method and http.status;
// http.client.request.duration and http.client.request.body.size carry
// http.request.method, http.response.status_code, url.scheme (the URL's),
// server.address, server.port (the request URL's port, or the scheme's
// default: 80 for http, 443 for https), network.protocol.name and
// network.protocol.version (the response's Proto, else the request's)
// and error.type (the status code of a 4xx or 5xx response, a client's
// error; "_OTHER" for a round trip that failed, which has no status
// code; absent otherwise). A client request whose Method is "" is
// recorded as GET, the method net/http sends for it.
//
// The route comes from the pattern Go's ServeMux matched
// (Request.Pattern, without its method and host) or Options.Route, never
// from the raw path; ochttp's http.host and http.path keys are declared
// but never set, since the client chooses their values. A method that is
// not a standard one is recorded as "_OTHER", as the OpenTelemetry
// conventions say, for the same reason.
//
// # Body sizes
//
// The OpenTelemetry body sizes count the bytes that went through, as
// otelhttp's do: http.server.request.body.size the bytes the handler
// read from the request body (0 for a body it never read, whatever its
// Content-Length; all of a chunked one), http.server.response.body.size
// the bytes it wrote, http.client.request.body.size the bytes the base
// RoundTripper read from the request body, recorded once it closed the
// body (see Transport). ochttp's request_bytes and sent_bytes keep
// ochttp's meaning, the Content-Length (0 when unknown).
//
// # Buckets
//
// The ochttp-named views (opencensus.io/http/...) count by OpenCensus's
// rule, as ochttp's do: view.Distribution, lower-inclusive buckets
// [b[i-1], b[i]). The OpenTelemetry-named views (http.server.request.duration,
// http.server.request.body.size, http.server.response.body.size,
// http.client.request.duration, http.client.request.body.size) count by
// OpenTelemetry's rule for explicit-bucket histograms:
// view.DistributionUpperInclusive, upper-inclusive buckets (b[i-1],
// b[i]], so a request of exactly 0.1s is counted in (0.075, 0.1], as the
// OpenTelemetry SDK counts it.
//
// # Differences from otelhttp
//
// benchmarks/plugins (TestZHTTPMatchesOtelhttp) serves one fixed list of
// requests through otelhttp v0.72.0 on the OpenTelemetry SDK and through
// zhttp, over HTTP/1.1 and HTTP/2, and compares, request by request,
// each metric's attribute sets (with their types), counts and body-size
// sums, and the metrics' names, descriptions, units and bounds. They
// are equal but for these, each deliberate:
//
//   - error.type on a 5xx server response and on a 4xx or 5xx client
//     response: zhttp sets it to the status code; otelhttp leaves it out
//     of its metrics (it sets it on spans). The conventions make it
//     conditionally required "if the request has ended with an error".
//   - A failed round trip's error.type: "_OTHER" in zhttp, the error's Go
//     type in otelhttp ("net.OpError"): zhttp does not name types by
//     reflection on the record path.
//   - Client server.port when the URL names none: zhttp records the
//     scheme's default (80, 443), which the conventions require on client
//     metrics; otelhttp leaves it out.
//   - A standard method in lower case ("get"): otelhttp upper-cases it,
//     zhttp records "_OTHER" (the conventions: methods are case-sensitive,
//     and "get" is not GET to a server).
//   - A client request with Method "": otelhttp records "_OTHER", zhttp
//     GET, which net/http sends.
//   - A response written through io.ReaderFrom over HTTP/1.1
//     (http.ServeContent, http.FileServer, io.Copy from a reader without
//     WriteTo): otelhttp counts none of its bytes (its writer wrapper
//     hands ReadFrom to net/http's writer uncounted); zhttp counts them
//     all (its wrapper has no ReadFrom, so io.Copy writes through Write;
//     the cost: no sendfile for such responses).
//   - A hijacked connection whose handler wrote no status: zhttp records
//     101 Switching Protocols, otelhttp 200.
//   - The body sizes' bucket bounds: ochttp's (1024, 2048, ..., 4 GiB)
//     in zhttp; the SDK's defaults (0, 5, 10, ..., 10000) in otelhttp,
//     which sets none, and which put every body over 10 kB in one bucket.
//   - A Host header that is not a valid tag value (over 255 bytes, or not
//     printable ASCII): zhttp leaves server.address out; otelhttp records
//     it. An empty one: zhttp leaves it out, otelhttp records "" (the
//     same to OpenCensus, whose empty tag is an absent one).
//   - The client duration runs to the response body's end, as ochttp's
//     does, unless Transport.AtHeaders is set (otelhttp's runs to the
//     headers); the comparison counts durations, it does not time them.
//   - A request that the base RoundTripper retries on a new connection
//     (with Request.GetBody) counts the bytes of its first attempt in
//     http.client.request.body.size, otelhttp those of its last: wrapping
//     GetBody would cost every such request an allocation.
//   - A base RoundTripper that never closes the request body (a stub):
//     zhttp records the request but its body size, otelhttp nothing.
//
// # Cost
//
// Server: no allocation of its own per request (the response writer
// wrapper, which holds the request body's counter too, is pooled; status
// codes come from a table; TestHandlerAllocs, TestHandlerBodyAllocs),
// two time readings and two records through tag contexts built once per
// method and per (method, route, status, scheme, server name and port,
// protocol) combination, found in a lock-free direct-mapped cache (a
// request whose context already carries tags records with
// stats.RecordWithTags instead, to keep them); a 5xx allocates no more
// (TestErrorResponsesAllocNothing). Client: two records with
// stats.RecordWithTags (three when the base RoundTripper closes the
// request body after the response), one at the start and one at the end (both
// families' measures with both families' tags: twelve, found again in
// RecordWithTags's derived-map cache), and at most one allocation per
// request. A request without a body whose response has one allocates the
// response body wrapper the caller holds (it cannot be pooled: the
// caller may keep it after Close), which ochttp's latency (to the body's
// last byte) needs; with Transport.AtHeaders the request is recorded
// when its headers arrive, as otelhttp and promhttp do, and it allocates
// nothing (TestTransportAtHeaders; for 4xx and 5xx responses and for a
// context carrying a tag too, TestErrorResponsesAllocNothing). A request
// with a body allocates one copy of the request (about 450 bytes, which
// hold the counter of the bytes sent and that wrapper too), in either
// mode and whatever the response (TestTransportBodyAllocs): counting the
// bytes sent, as otelhttp does, needs a body wrapper the Transport cannot
// put in the caller's request. Measured side by side with ochttp,
// otelhttp and promhttp in the benchmarks module (docs/performance.md).
//
// Handler and Transport are safe for concurrent use.
package zhttp
