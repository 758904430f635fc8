// Package otlpgrpc sends OTLP over gRPC (the grpc protocol of
// OTEL_EXPORTER_OTLP_PROTOCOL), in its own module so that the zerostat
// module keeps no third-party requirement: importing it brings
// google.golang.org/grpc.
//
// It is the OTLP exporter of package otlp (the same encoder, the same push
// pipeline: loop, queue, retries, Stats, log) with a gRPC transport:
//
//	e, err := otlpgrpc.New(otlp.Options{FromEnv: true})
//	...
//	e.Start()
//	defer e.Stop(ctx) // exports a final snapshot, closes the connection
//
// With FromEnv, OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf makes New return
// the OTLP/HTTP exporter instead, so a service can leave the choice to its
// platform. The options and variables are package otlp's (its
// documentation has the table).
//
// # Wire
//
// Each export is one unary call of
// opentelemetry.proto.collector.metrics.v1.MetricsService/Export. The
// request is the encoder's ExportMetricsServiceRequest bytes, sent by a
// pass-through codec (content-subtype proto): no protobuf message is built,
// and the bytes are those OTLP/HTTP sends. The response is read for a
// partial success (counted in Stats.Rejected).
//
// # Retries
//
// The codes the OTLP specification calls retryable are retried with the
// pipeline's backoff: CANCELLED, DEADLINE_EXCEEDED, ABORTED, OUT_OF_RANGE,
// UNAVAILABLE (connection refused included), DATA_LOSS, and
// RESOURCE_EXHAUSTED only when the status carries a RetryInfo; a RetryInfo's
// retry_delay replaces the backoff's wait. Other codes are final.
//
// # Costs
//
// An export costs the encoder's work (no allocation in steady state) and
// what grpc-go allocates per call. An Exporter is safe for concurrent use;
// exports are serialised.
package otlpgrpc
