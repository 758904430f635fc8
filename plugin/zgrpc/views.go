package zgrpc

import (
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// OpenCensus ocgrpc's bucket bounds (go.opencensus.io/plugin/ocgrpc
// v0.24.0 stats_common.go), counted by OpenCensus's rule, as ocgrpc's
// are (view.Distribution: lower-inclusive buckets, b[i-1] <= v < b[i]), so
// the ocgrpc-named views below keep the counts dashboards built on ocgrpc
// expect.
var (
	DefaultBytesDistribution        = view.Distribution(1024, 2048, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456, 1073741824, 4294967296)
	DefaultMillisecondsDistribution = view.Distribution(0.01, 0.05, 0.1, 0.3, 0.6, 0.8, 1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 30, 40, 50, 65, 80, 100, 130, 160, 200, 250, 300, 400, 500, 650, 800, 1000, 2000, 5000, 10000, 20000, 50000, 100000)
	DefaultMessageCountDistribution = view.Distribution(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)
)

// ocgrpc's tag keys: the method is "package.Service/Method", the status
// the canonical code name ("OK", "CANCELLED", "NOT_FOUND", ...).
var (
	KeyServerMethod = tag.MustNewKey("grpc_server_method")
	KeyServerStatus = tag.MustNewKey("grpc_server_status")
	KeyClientMethod = tag.MustNewKey("grpc_client_method")
	KeyClientStatus = tag.MustNewKey("grpc_client_status")
)

// ocgrpc's server measures, with its names, descriptions and units.
var (
	ServerReceivedMessagesPerRPC = stats.Int64("grpc.io/server/received_messages_per_rpc", "Number of messages received in each RPC. Has value 1 for non-streaming RPCs.", stats.UnitDimensionless)
	ServerReceivedBytesPerRPC    = stats.Int64("grpc.io/server/received_bytes_per_rpc", "Total bytes received across all messages per RPC.", stats.UnitBytes)
	ServerSentMessagesPerRPC     = stats.Int64("grpc.io/server/sent_messages_per_rpc", "Number of messages sent in each RPC. Has value 1 for non-streaming RPCs.", stats.UnitDimensionless)
	ServerSentBytesPerRPC        = stats.Int64("grpc.io/server/sent_bytes_per_rpc", "Total bytes sent in across all response messages per RPC.", stats.UnitBytes)
	ServerStartedRPCs            = stats.Int64("grpc.io/server/started_rpcs", "Number of started server RPCs.", stats.UnitDimensionless)
	ServerLatency                = stats.Float64("grpc.io/server/server_latency", "Time between first byte of request received to last byte of response sent, or terminal error.", stats.UnitMilliseconds)
)

// ocgrpc's client measures. ClientServerLatency is declared, as in
// ocgrpc, but neither records it.
var (
	ClientSentMessagesPerRPC     = stats.Int64("grpc.io/client/sent_messages_per_rpc", "Number of messages sent in the RPC (always 1 for non-streaming RPCs).", stats.UnitDimensionless)
	ClientSentBytesPerRPC        = stats.Int64("grpc.io/client/sent_bytes_per_rpc", "Total bytes sent across all request messages per RPC.", stats.UnitBytes)
	ClientReceivedMessagesPerRPC = stats.Int64("grpc.io/client/received_messages_per_rpc", "Number of response messages received per RPC (always 1 for non-streaming RPCs).", stats.UnitDimensionless)
	ClientReceivedBytesPerRPC    = stats.Int64("grpc.io/client/received_bytes_per_rpc", "Total bytes received across all response messages per RPC.", stats.UnitBytes)
	ClientRoundtripLatency       = stats.Float64("grpc.io/client/roundtrip_latency", "Time between first byte of request sent to last byte of response received, or terminal error.", stats.UnitMilliseconds)
	ClientStartedRPCs            = stats.Int64("grpc.io/client/started_rpcs", "Number of started client RPCs.", stats.UnitDimensionless)
	ClientServerLatency          = stats.Float64("grpc.io/client/server_latency", `Propagated from the server and should have the same value as "grpc.io/server/latency".`, stats.UnitMilliseconds)
)

// ocgrpc's server views.
var (
	ServerReceivedBytesPerRPCView = &view.View{Name: "grpc.io/server/received_bytes_per_rpc", Description: "Distribution of received bytes per RPC, by method.",
		Measure: ServerReceivedBytesPerRPC, TagKeys: []tag.Key{KeyServerMethod}, Aggregation: DefaultBytesDistribution}
	ServerSentBytesPerRPCView = &view.View{Name: "grpc.io/server/sent_bytes_per_rpc", Description: "Distribution of total sent bytes per RPC, by method.",
		Measure: ServerSentBytesPerRPC, TagKeys: []tag.Key{KeyServerMethod}, Aggregation: DefaultBytesDistribution}
	ServerLatencyView = &view.View{Name: "grpc.io/server/server_latency", Description: "Distribution of server latency in milliseconds, by method.",
		TagKeys: []tag.Key{KeyServerMethod}, Measure: ServerLatency, Aggregation: DefaultMillisecondsDistribution}
	ServerCompletedRPCsView = &view.View{Name: "grpc.io/server/completed_rpcs", Description: "Count of RPCs by method and status.",
		TagKeys: []tag.Key{KeyServerMethod, KeyServerStatus}, Measure: ServerLatency, Aggregation: view.Count()}
	ServerStartedRPCsView = &view.View{Measure: ServerStartedRPCs, Name: "grpc.io/server/started_rpcs", Description: "Number of started server RPCs.",
		TagKeys: []tag.Key{KeyServerMethod}, Aggregation: view.Count()}
	ServerReceivedMessagesPerRPCView = &view.View{Name: "grpc.io/server/received_messages_per_rpc", Description: "Distribution of messages received count per RPC, by method.",
		TagKeys: []tag.Key{KeyServerMethod}, Measure: ServerReceivedMessagesPerRPC, Aggregation: DefaultMessageCountDistribution}
	ServerSentMessagesPerRPCView = &view.View{Name: "grpc.io/server/sent_messages_per_rpc", Description: "Distribution of messages sent count per RPC, by method.",
		TagKeys: []tag.Key{KeyServerMethod}, Measure: ServerSentMessagesPerRPC, Aggregation: DefaultMessageCountDistribution}
)

// ocgrpc's client views.
var (
	ClientSentBytesPerRPCView = &view.View{Measure: ClientSentBytesPerRPC, Name: "grpc.io/client/sent_bytes_per_rpc", Description: "Distribution of bytes sent per RPC, by method.",
		TagKeys: []tag.Key{KeyClientMethod}, Aggregation: DefaultBytesDistribution}
	ClientReceivedBytesPerRPCView = &view.View{Measure: ClientReceivedBytesPerRPC, Name: "grpc.io/client/received_bytes_per_rpc", Description: "Distribution of bytes received per RPC, by method.",
		TagKeys: []tag.Key{KeyClientMethod}, Aggregation: DefaultBytesDistribution}
	ClientRoundtripLatencyView = &view.View{Measure: ClientRoundtripLatency, Name: "grpc.io/client/roundtrip_latency", Description: "Distribution of round-trip latency, by method.",
		TagKeys: []tag.Key{KeyClientMethod}, Aggregation: DefaultMillisecondsDistribution}
	ClientCompletedRPCsView = &view.View{Measure: ClientRoundtripLatency, Name: "grpc.io/client/completed_rpcs", Description: "Count of RPCs by method and status.",
		TagKeys: []tag.Key{KeyClientMethod, KeyClientStatus}, Aggregation: view.Count()}
	ClientStartedRPCsView = &view.View{Measure: ClientStartedRPCs, Name: "grpc.io/client/started_rpcs", Description: "Number of started client RPCs.",
		TagKeys: []tag.Key{KeyClientMethod}, Aggregation: view.Count()}
	ClientSentMessagesPerRPCView = &view.View{Measure: ClientSentMessagesPerRPC, Name: "grpc.io/client/sent_messages_per_rpc", Description: "Distribution of sent messages count per RPC, by method.",
		TagKeys: []tag.Key{KeyClientMethod}, Aggregation: DefaultMessageCountDistribution}
	ClientReceivedMessagesPerRPCView = &view.View{Measure: ClientReceivedMessagesPerRPC, Name: "grpc.io/client/received_messages_per_rpc", Description: "Distribution of received messages count per RPC, by method.",
		TagKeys: []tag.Key{KeyClientMethod}, Aggregation: DefaultMessageCountDistribution}
	ClientServerLatencyView = &view.View{Measure: ClientServerLatency, Name: "grpc.io/client/server_latency", Description: "Distribution of server latency as viewed by client, by method.",
		TagKeys: []tag.Key{KeyClientMethod}, Aggregation: DefaultMillisecondsDistribution}
)

// DefaultServerViews and DefaultClientViews are ocgrpc's lists.
var (
	DefaultServerViews = []*view.View{ServerReceivedBytesPerRPCView, ServerSentBytesPerRPCView, ServerLatencyView, ServerCompletedRPCsView}
	DefaultClientViews = []*view.View{ClientSentBytesPerRPCView, ClientReceivedBytesPerRPCView, ClientRoundtripLatencyView, ClientCompletedRPCsView}
)

// The OpenTelemetry RPC semantic conventions (as otelgrpc v0.72 records
// them by default): call durations in seconds with otelgrpc's bounds,
// tagged rpc.system.name ("grpc"), rpc.method ("package.Service/Method")
// and rpc.response.status_code (the canonical code name), plus
// error.type (the code name) on failures (every non-OK status for a
// client; for a server, the codes otelgrpc counts as server errors).
// Their histograms count by OpenTelemetry's rule for explicit buckets
// (view.DistributionUpperInclusive: upper-inclusive buckets, b[i-1] < v <=
// b[i], so a call of exactly 0.1s is in (0.075, 0.1]), not by OpenCensus's
// rule, which the ocgrpc-named views above keep.
var (
	ServerCallDuration = stats.Float64("rpc.server.call.duration", "Measures the duration of inbound remote procedure calls (RPC).", stats.UnitSeconds)
	ClientCallDuration = stats.Float64("rpc.client.call.duration", "Measures the duration of outbound remote procedure calls (RPC).", stats.UnitSeconds)

	KeyRPCSystemName = tag.MustNewKey("rpc.system.name")
	KeyRPCMethod     = tag.MustNewKey("rpc.method")
	KeyRPCStatusCode = tag.MustNewKey("rpc.response.status_code")
	KeyErrorType     = tag.MustNewKey("error.type")

	// DefaultDurationDistribution is otelgrpc's bounds, in seconds,
	// upper-inclusive (OpenTelemetry's rule).
	DefaultDurationDistribution = view.DistributionUpperInclusive(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)

	otelKeys = []tag.Key{KeyRPCSystemName, KeyRPCMethod, KeyRPCStatusCode, KeyErrorType}

	OTelServerCallDurationView = &view.View{Name: "rpc.server.call.duration", Description: "Measures the duration of inbound remote procedure calls (RPC).",
		Measure: ServerCallDuration, Aggregation: DefaultDurationDistribution, TagKeys: otelKeys}
	OTelClientCallDurationView = &view.View{Name: "rpc.client.call.duration", Description: "Measures the duration of outbound remote procedure calls (RPC).",
		Measure: ClientCallDuration, Aggregation: DefaultDurationDistribution, TagKeys: otelKeys}

	OTelServerViews = []*view.View{OTelServerCallDurationView}
	OTelClientViews = []*view.View{OTelClientCallDurationView}
)
