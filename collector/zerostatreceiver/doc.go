// Package zerostatreceiver is an OpenTelemetry Collector receiver for
// zerostat's msgpack snapshots (docs/wire-format.md): the other end of
// exporter.HTTPSink, inside a Collector, so a fleet's services export
// compact payloads to an agent or gateway Collector that sends them to
// any backend it has an exporter for.
//
// # Configuration
//
//	receivers:
//	  zerostat:
//	    endpoint: localhost:4319          # confighttp: also tls, auth, cors, timeouts, ...
//	    path: /                           # where payloads are POSTed
//	    max_request_body_size: 8388608    # a body as sent
//	    max_decompressed_bytes: 8388608   # a gzip body decompressed
//	    max_decoded_bytes: 33554432       # one decoded payload
//	    max_inflight_bytes: 134217728     # all requests being served together
//
// The HTTP server is the Collector's (confighttp), with its middlewares,
// auth and telemetry; the receiver decompresses gzip itself, so
// compression_algorithms must be left unset.
//
// # Answers
//
// As `zerostat receive` (exporter/receiver, whose Handler serves the
// requests): 204 stored; 400 a malformed payload, naming the fault; 413 a
// body, decompressed body or decoded payload over its cap; 415 a
// Content-Type other than application/msgpack or a Content-Encoding other
// than gzip or identity; 503 with Retry-After: 1 when max_inflight_bytes
// is in use. When the pipeline refuses a payload (a full queue, a memory
// limiter, an exporter that cannot send), the answer is 503 with
// Retry-After, which zerostat's exporter retries, within its timeout, and
// then queues as it does for OTLP; a permanent refusal
// (consumererror.NewPermanent) is 400, so the payload is not sent again.
// Nothing of a refused payload reaches the pipeline.
//
// # Memory
//
// Every buffer a request allocates (its body, the body decompressed, the
// decoded payload) is reserved from max_inflight_bytes before it is
// allocated; a request whose reservation does not fit is answered 503 at
// once. One request holds at most max_request_body_size +
// max_decompressed_bytes + max_decoded_bytes (80 MiB by default; 72 MiB
// at its peak, as exporter/receiver's doc explains) until it is decoded,
// then the decoded payload and its pdata, and all together
// max_inflight_bytes (256 MiB by default). The pdata a payload is
// converted into is reserved too, before converting, at an upper bound
// of what Convert allocates (about 1.2 times the decoded payload for rows
// without tags, up to 2.5 times for rows of many); payload and pdata stay
// reserved until the pipeline's ConsumeMetrics returns (a pipeline that
// keeps the batch longer holds it beyond that). TestPeakHeapAtCaps
// measures the heap's peak at the default caps: 136 MiB for one densest
// payload, 200 MiB for two at once.
//
// # Conversion
//
// Convert maps a payload onto pdata as zerostat's OTLP exporter maps the
// same views (the one mapping, exposed as wire.View.Metric); the same
// workload sent both ways gives identical pdata, start times included
// (TestSamePdataAsOTLP), but for the few cases docs/collector.md lists
// ("Same pdata"), which the payload cannot say.
//
// The receiver is safe for concurrent requests; Start and Shutdown are
// called once each by the Collector.
package zerostatreceiver
