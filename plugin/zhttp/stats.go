package zhttp

import (
	"github.com/zerostat/zerostat/internal/attrval"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// OpenCensus's ochttp measures, with its names, descriptions and units
// (go.opencensus.io/plugin/ochttp v0.24.0 stats.go), so views and
// dashboards over them keep working after the import is rewritten.
var (
	// Deprecated: as in ochttp, use a Count over another client measure.
	ClientRequestCount = stats.Int64("opencensus.io/http/client/request_count", "Number of HTTP requests started", stats.UnitDimensionless)
	// Deprecated: as in ochttp, use ClientSentBytes.
	ClientRequestBytes = stats.Int64("opencensus.io/http/client/request_bytes", "HTTP request body size if set as ContentLength (uncompressed)", stats.UnitBytes)
	// Deprecated: as in ochttp, use ClientReceivedBytes.
	ClientResponseBytes = stats.Int64("opencensus.io/http/client/response_bytes", "HTTP response body size (uncompressed)", stats.UnitBytes)
	// Deprecated: as in ochttp, use ClientRoundtripLatency.
	ClientLatency = stats.Float64("opencensus.io/http/client/latency", "End-to-end latency", stats.UnitMilliseconds)

	ClientSentBytes        = stats.Int64("opencensus.io/http/client/sent_bytes", "Total bytes sent in request body (not including headers)", stats.UnitBytes)
	ClientReceivedBytes    = stats.Int64("opencensus.io/http/client/received_bytes", "Total bytes received in response bodies (not including headers but including error responses with bodies)", stats.UnitBytes)
	ClientRoundtripLatency = stats.Float64("opencensus.io/http/client/roundtrip_latency", "Time between first byte of request headers sent to last byte of response received, or terminal error", stats.UnitMilliseconds)

	ServerRequestCount  = stats.Int64("opencensus.io/http/server/request_count", "Number of HTTP requests started", stats.UnitDimensionless)
	ServerRequestBytes  = stats.Int64("opencensus.io/http/server/request_bytes", "HTTP request body size if set as ContentLength (uncompressed)", stats.UnitBytes)
	ServerResponseBytes = stats.Int64("opencensus.io/http/server/response_bytes", "HTTP response body size (uncompressed)", stats.UnitBytes)
	ServerLatency       = stats.Float64("opencensus.io/http/server/latency", "End-to-end latency", stats.UnitMilliseconds)
)

// ochttp's tag keys. Host and Path are declared for views that name them,
// but never set: their values come from the client (unbounded
// cardinality). KeyServerRoute is the route (see Options.Route).
var (
	Host           = tag.MustNewKey("http.host")
	StatusCode     = tag.MustNewKey("http.status")
	Path           = tag.MustNewKey("http.path")
	Method         = tag.MustNewKey("http.method")
	KeyServerRoute = tag.MustNewKey("http_server_route")

	KeyClientMethod = tag.MustNewKey("http_client_method")
	KeyClientPath   = tag.MustNewKey("http_client_path")
	KeyClientStatus = tag.MustNewKey("http_client_status")
	KeyClientHost   = tag.MustNewKey("http_client_host")
)

// ochttp's bucket bounds: sizes in bytes, latencies in milliseconds.
// They count by OpenCensus's rule, as ochttp's do (view.Distribution:
// lower-inclusive buckets, b[i-1] <= v < b[i]), so the ochttp-named views
// below keep the counts dashboards built on ochttp expect.
var (
	DefaultSizeDistribution    = view.Distribution(1024, 2048, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456, 1073741824, 4294967296)
	DefaultLatencyDistribution = view.Distribution(1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 30, 40, 50, 65, 80, 100, 130, 160, 200, 250, 300, 400, 500, 650, 800, 1000, 2000, 5000, 10000, 20000, 50000, 100000)
)

// ochttp's client views.
var (
	ClientSentBytesDistribution = &view.View{Name: "opencensus.io/http/client/sent_bytes", Measure: ClientSentBytes, Aggregation: DefaultSizeDistribution,
		Description: "Total bytes sent in request body (not including headers), by HTTP method and response status", TagKeys: []tag.Key{KeyClientMethod, KeyClientStatus}}
	ClientReceivedBytesDistribution = &view.View{Name: "opencensus.io/http/client/received_bytes", Measure: ClientReceivedBytes, Aggregation: DefaultSizeDistribution,
		Description: "Total bytes received in response bodies (not including headers but including error responses with bodies), by HTTP method and response status", TagKeys: []tag.Key{KeyClientMethod, KeyClientStatus}}
	ClientRoundtripLatencyDistribution = &view.View{Name: "opencensus.io/http/client/roundtrip_latency", Measure: ClientRoundtripLatency, Aggregation: DefaultLatencyDistribution,
		Description: "End-to-end latency, by HTTP method and response status", TagKeys: []tag.Key{KeyClientMethod, KeyClientStatus}}
	ClientCompletedCount = &view.View{Name: "opencensus.io/http/client/completed_count", Measure: ClientRoundtripLatency, Aggregation: view.Count(),
		Description: "Count of completed requests, by HTTP method and response status", TagKeys: []tag.Key{KeyClientMethod, KeyClientStatus}}

	// Deprecated: as in ochttp.
	ClientRequestCountView = &view.View{Name: "opencensus.io/http/client/request_count", Description: "Count of HTTP requests started", Measure: ClientRequestCount, Aggregation: view.Count()}
	// Deprecated: as in ochttp.
	ClientRequestBytesView = &view.View{Name: "opencensus.io/http/client/request_bytes", Description: "Size distribution of HTTP request body", Measure: ClientSentBytes, Aggregation: DefaultSizeDistribution}
	// Deprecated: as in ochttp.
	ClientResponseBytesView = &view.View{Name: "opencensus.io/http/client/response_bytes", Description: "Size distribution of HTTP response body", Measure: ClientReceivedBytes, Aggregation: DefaultSizeDistribution}
	// Deprecated: as in ochttp.
	ClientLatencyView = &view.View{Name: "opencensus.io/http/client/latency", Description: "Latency distribution of HTTP requests", Measure: ClientRoundtripLatency, Aggregation: DefaultLatencyDistribution}
	// Deprecated: as in ochttp.
	ClientRequestCountByMethod = &view.View{Name: "opencensus.io/http/client/request_count_by_method", Description: "Client request count by HTTP method",
		TagKeys: []tag.Key{Method}, Measure: ClientSentBytes, Aggregation: view.Count()}
	// Deprecated: as in ochttp.
	ClientResponseCountByStatusCode = &view.View{Name: "opencensus.io/http/client/response_count_by_status_code", Description: "Client response count by status code",
		TagKeys: []tag.Key{StatusCode}, Measure: ClientRoundtripLatency, Aggregation: view.Count()}
)

// ochttp's server views.
var (
	ServerRequestCountView     = &view.View{Name: "opencensus.io/http/server/request_count", Description: "Count of HTTP requests started", Measure: ServerRequestCount, Aggregation: view.Count()}
	ServerRequestBytesView     = &view.View{Name: "opencensus.io/http/server/request_bytes", Description: "Size distribution of HTTP request body", Measure: ServerRequestBytes, Aggregation: DefaultSizeDistribution}
	ServerResponseBytesView    = &view.View{Name: "opencensus.io/http/server/response_bytes", Description: "Size distribution of HTTP response body", Measure: ServerResponseBytes, Aggregation: DefaultSizeDistribution}
	ServerLatencyView          = &view.View{Name: "opencensus.io/http/server/latency", Description: "Latency distribution of HTTP requests", Measure: ServerLatency, Aggregation: DefaultLatencyDistribution}
	ServerRequestCountByMethod = &view.View{Name: "opencensus.io/http/server/request_count_by_method", Description: "Server request count by HTTP method",
		TagKeys: []tag.Key{Method}, Measure: ServerRequestCount, Aggregation: view.Count()}
	ServerResponseCountByStatusCode = &view.View{Name: "opencensus.io/http/server/response_count_by_status_code", Description: "Server response count by status code",
		TagKeys: []tag.Key{StatusCode}, Measure: ServerLatency, Aggregation: view.Count()}
)

// DefaultClientViews and DefaultServerViews are ochttp's lists of the same
// names (the client list holds ochttp's deprecated views, as ochttp's does).
var (
	DefaultClientViews = []*view.View{ClientRequestCountView, ClientRequestBytesView, ClientResponseBytesView,
		ClientLatencyView, ClientRequestCountByMethod, ClientResponseCountByStatusCode}
	DefaultServerViews = []*view.View{ServerRequestCountView, ServerRequestBytesView, ServerResponseBytesView,
		ServerLatencyView, ServerRequestCountByMethod, ServerResponseCountByStatusCode}
)

// The OpenTelemetry HTTP semantic conventions (semconv v1.26+, stable
// HTTP metrics), as otelhttp v0.72.0 records them: durations in seconds
// with the advised bucket bounds, body sizes in bytes, the bytes the
// handler read from the request body and wrote to the response (server)
// and the bytes the base RoundTripper read from the request body
// (client), not the Content-Length. Register OTelServerViews and
// OTelClientViews instead of (or beside) the OpenCensus ones: the handler
// and transport record both families' measures, and a measure without a
// view costs one atomic load.
//
// Their histograms count by OpenTelemetry's rule for explicit buckets
// (view.DistributionUpperInclusive: upper-inclusive buckets, b[i-1] < v <=
// b[i], so a request of exactly 0.1s is in (0.075, 0.1]), not by
// OpenCensus's rule, which the ochttp-named views above keep.
//
// The server views group by http.request.method, http.route,
// http.response.status_code, url.scheme, server.address and server.port
// (the Host header's, or Options.ServerName's; the port only when it is
// not the scheme's default), network.protocol.name and
// network.protocol.version (from Request.Proto: "http" and "1.1" or
// "2.0"), and error.type: the status code as a string ("503") for a 5xx
// response, the server's errors; absent otherwise. The client views group
// by http.request.method, http.response.status_code, url.scheme,
// server.address, server.port (the request URL's port, or the scheme's
// default, 80 or 443), network.protocol.name and network.protocol.version
// (from Response.Proto, else Request.Proto) and error.type: the status
// code for a 4xx or 5xx response, "_OTHER" for a round trip that failed
// (which then has no status code); absent otherwise. The package doc
// lists where these differ from otelhttp's, and why.
var (
	ServerDuration     = stats.Float64("http.server.request.duration", "Duration of HTTP server requests.", stats.UnitSeconds)
	ServerRequestSize  = stats.Int64("http.server.request.body.size", "Size of HTTP server request bodies.", stats.UnitBytes)
	ServerResponseSize = stats.Int64("http.server.response.body.size", "Size of HTTP server response bodies.", stats.UnitBytes)
	ClientDuration     = stats.Float64("http.client.request.duration", "Duration of HTTP client requests.", stats.UnitSeconds)
	ClientRequestSize  = stats.Int64("http.client.request.body.size", "Size of HTTP client request bodies.", stats.UnitBytes)

	KeyRequestMethod          = tag.MustNewKey("http.request.method")
	KeyRoute                  = tag.MustNewKey("http.route")
	KeyStatusCode             = tag.MustNewKey("http.response.status_code")
	KeyURLScheme              = tag.MustNewKey("url.scheme")
	KeyServerAddress          = tag.MustNewKey("server.address")
	KeyServerPort             = tag.MustNewKey("server.port")
	KeyNetworkProtocolName    = tag.MustNewKey("network.protocol.name")
	KeyNetworkProtocolVersion = tag.MustNewKey("network.protocol.version")
	KeyErrorType              = tag.MustNewKey("error.type")

	// DefaultDurationDistribution is the conventions' advised bounds, in
	// seconds, upper-inclusive (OpenTelemetry's rule).
	DefaultDurationDistribution = view.DistributionUpperInclusive(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)
	// DefaultBodySizeDistribution is ochttp's size bounds (the
	// conventions advise none for body sizes), upper-inclusive
	// (OpenTelemetry's rule).
	DefaultBodySizeDistribution = view.DistributionUpperInclusive(1024, 2048, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456, 1073741824, 4294967296)

	serverKeys = []tag.Key{KeyRequestMethod, KeyRoute, KeyStatusCode, KeyURLScheme, KeyErrorType,
		KeyServerAddress, KeyServerPort, KeyNetworkProtocolName, KeyNetworkProtocolVersion}
	clientKeys = []tag.Key{KeyRequestMethod, KeyStatusCode, KeyServerAddress, KeyServerPort, KeyErrorType,
		KeyURLScheme, KeyNetworkProtocolName, KeyNetworkProtocolVersion}

	OTelServerDurationView     = &view.View{Name: "http.server.request.duration", Description: "Duration of HTTP server requests.", Measure: ServerDuration, Aggregation: DefaultDurationDistribution, TagKeys: serverKeys}
	OTelServerRequestSizeView  = &view.View{Name: "http.server.request.body.size", Description: "Size of HTTP server request bodies.", Measure: ServerRequestSize, Aggregation: DefaultBodySizeDistribution, TagKeys: serverKeys}
	OTelServerResponseSizeView = &view.View{Name: "http.server.response.body.size", Description: "Size of HTTP server response bodies.", Measure: ServerResponseSize, Aggregation: DefaultBodySizeDistribution, TagKeys: serverKeys}
	OTelClientDurationView     = &view.View{Name: "http.client.request.duration", Description: "Duration of HTTP client requests.", Measure: ClientDuration, Aggregation: DefaultDurationDistribution, TagKeys: clientKeys}
	OTelClientRequestSizeView  = &view.View{Name: "http.client.request.body.size", Description: "Size of HTTP client request bodies.", Measure: ClientRequestSize, Aggregation: DefaultBodySizeDistribution, TagKeys: clientKeys}

	OTelServerViews = []*view.View{OTelServerDurationView, OTelServerRequestSizeView, OTelServerResponseSizeView}
	OTelClientViews = []*view.View{OTelClientDurationView, OTelClientRequestSizeView}
)

// The conventions' integer attributes: OTLP and the msgpack payload carry
// their values as ints, as otelhttp records them (Prometheus labels stay
// strings). See internal/attrval.
func init() {
	core.SetGlobalKeyType(KeyStatusCode.Name(), attrval.Int64)
	core.SetGlobalKeyType(KeyServerPort.Name(), attrval.Int64)
}
