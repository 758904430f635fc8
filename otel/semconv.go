package otel

import "go.opentelemetry.io/otel/attribute"

// conventionKeys are the attribute keys the OpenTelemetry semantic
// conventions define for the metrics that instrumentation libraries
// record through this provider. These instruments record some of their
// keys only on some measurements (http.route once a mux pattern matched,
// server.port when not the scheme's default, error.type on a failure):
// declared, they are among the view's keys from the start, so that the
// view need not add them one at a time, each time rebuilding every
// exporter's naming of it (see Attributes in the package documentation).
// An absent key costs a series 4 bytes and is not exported (the SDK's
// points carry only the attributes recorded), so declaring more than an
// instrument records changes nothing a backend receives.
//
// The keys are those of semantic conventions v1.43.0 (httpconv and
// rpcconv: each metric's required attributes and its Attr methods), what
// otelhttp and otelgrpc v0.72.0 record, and, for the gRPC metrics of the
// older conventions that otelgrpc still records when asked
// (OTEL_SEMCONV_STABILITY_OPT_IN=rpc/dup), the attributes it gives them.
// benchmarks/otelinstr drives otelhttp's server and client and otelgrpc's
// through routed, unrouted and failing calls and checks that no attribute
// is dropped. WithAttributeKeys adds to these.
var conventionKeys = map[string][]attribute.Key{}

func init() {
	httpServer := []attribute.Key{"error.type", "http.request.method", "http.response.status_code", "http.route",
		"network.protocol.name", "network.protocol.version", "server.address", "server.port", "url.scheme",
		"user_agent.synthetic.type"}
	httpClient := []attribute.Key{"error.type", "http.request.method", "http.response.status_code",
		"network.protocol.name", "network.protocol.version", "server.address", "server.port", "url.scheme",
		"url.template"}
	rpc := []attribute.Key{"error.type", "rpc.method", "rpc.response.status_code", "rpc.system.name",
		"server.address", "server.port"}
	rpcOld := append([]attribute.Key{"rpc.system", "rpc.service", "rpc.grpc.status_code"}, rpc...)
	for _, n := range []string{"http.server.request.duration", "http.server.request.body.size", "http.server.response.body.size"} {
		conventionKeys[n] = httpServer
	}
	for _, n := range []string{"http.client.request.duration", "http.client.request.body.size"} {
		conventionKeys[n] = httpClient
	}
	for _, n := range []string{"rpc.server.call.duration", "rpc.client.call.duration"} {
		conventionKeys[n] = rpc
	}
	for _, n := range []string{"rpc.server.duration", "rpc.client.duration"} {
		conventionKeys[n] = rpcOld
	}
}
