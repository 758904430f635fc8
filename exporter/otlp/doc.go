// Package otlp exports every registered view, periodically, to an
// OpenTelemetry Protocol receiver over HTTP (OTLP/HTTP, binary protobuf;
// https://opentelemetry.io/docs/specs/otlp/#otlphttp): an OpenTelemetry
// Collector, or any backend that accepts OTLP metrics.
//
// # Use
//
//	e, err := otlp.New(otlp.Options{
//		Endpoint: "http://collector:4318", // POSTs to /v1/metrics
//		Interval: 10 * time.Second,
//		Resource: exporter.Resource{ServiceName: "checkout"},
//	})
//	...
//	e.Start()
//	defer e.Stop(ctx) // exports a final snapshot
//
// OTLP over gRPC is module github.com/zerostat/zerostat/exporter/otlp/otlpgrpc
// (it requires google.golang.org/grpc, which this module does not): the
// same options, encoder and pipeline, another transport. Encoder writes
// the same requests without sending them (a file, a test).
//
// # Configuration: options and environment variables
//
// Options.FromEnv reads OpenTelemetry's environment variables
// (https://opentelemetry.io/docs/specs/otel/protocol/exporter/) into the
// options left unset; without it none is read (Options.WithEnv shows the
// result). Precedence: the option set in code, then the metrics-specific
// variable (OTEL_EXPORTER_OTLP_METRICS_X), then the generic one
// (OTEL_EXPORTER_OTLP_X). An empty variable is unset. A value not
// recognised of an enum (PROTOCOL, COMPRESSION, the temporality
// preference), a number (TIMEOUT, OTEL_METRIC_EXPORT_INTERVAL) or a
// boolean (INSECURE) is logged as a warning on Options.Logger, naming the
// variable and the value, and ignored: the default is used, as the
// specification says (MUST for enums, SHOULD for the others). A value
// that cannot be ignored safely (an endpoint or header that cannot be
// parsed, a header the exporter or gRPC sets itself, a TLS file that
// cannot be read or is set with a plaintext endpoint, a resource
// attribute, and PROTOCOL grpc given to otlp.New) fails New with an error
// naming the variable. PROTOCOL is matched in any case. Both constructors
// are checked against a real Collector, configured by these variables
// alone, by collector/e2e's TestOTLPEnvMatrix (docs/collector.md).
//
//	variable (OTEL_EXPORTER_OTLP_[METRICS_]...)  option                  zerostat default                     OTel Go otlpmetrichttp / otlpmetricgrpc (v1.47)
//	ENDPOINT (generic)                           Endpoint                HTTP http://localhost:4318,          https://localhost:4318 / localhost:4317 with TLS;
//	                                                                     POSTs to Endpoint + /v1/metrics;     HTTP: base URL + /v1/metrics; gRPC: the target
//	                                                                     gRPC http://localhost:4317 (no TLS)
//	METRICS_ENDPOINT                             URL (HTTP; as is, "/"   -                                    the same (HTTP as is, "/" without a path)
//	                                             without a path),
//	                                             Endpoint (gRPC)
//	HEADERS                                      Header (code's names    none                                 values percent-decoded (names not); a bad member
//	                                             win); names and values                                       is logged and skipped
//	                                             percent-decoded
//	TIMEOUT (ms)                                 ExportTimeout (one      the Interval (10 s); Timeout         10 s, one export; invalid: logged, ignored
//	                                             export, retries         (per attempt, code only) 5 s         (zerostat too)
//	                                             included)
//	COMPRESSION (gzip, none)                     Compression             none; another value: logged, none    the same; any other value means none
//	PROTOCOL (http/protobuf, grpc)               Protocol                http/protobuf (otlp.New);            not read: the package chosen is the protocol
//	                                                                     otlpgrpc.New: grpc unless the
//	                                                                     variable says http/protobuf
//	CERTIFICATE (PEM file)                       TLS.CAFile              the system's authorities             the same
//	CLIENT_CERTIFICATE, CLIENT_KEY (PEM files)   TLS.CertFile, KeyFile   none (both or neither)               the same
//	INSECURE (true, false)                       TLS.Insecure            false: TLS for a gRPC target         the same; with TLS files and an http:// endpoint
//	                                                                     without a scheme; HTTP: the scheme   otlpmetrichttp fails (zerostat fails for both)
//	METRICS_TEMPORALITY_PREFERENCE               TemporalityPreference   cumulative                           the same table (cumulative, delta, lowmemory);
//	(cumulative, delta, lowmemory)               (or Temporality Delta:                                       invalid: logged, ignored
//	                                             every view)
//	OTEL_METRIC_EXPORT_INTERVAL (ms)             Interval                10 s                                 60 s, read by the SDK's PeriodicReader
//	METRICS_DEFAULT_HISTOGRAM_AGGREGATION        - (views decide: read   explicit_bucket_histogram; another   the same; base2_exponential_bucket_histogram
//	                                             by the otel module's    value: logged, ignored               selects exponential histograms
//	                                             MeterProvider)
//	OTEL_METRIC_EXPORT_TIMEOUT (ms)              - (the Interval bounds  -                                    30 s, PeriodicReader
//	                                             an export): not read
//	OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES  Resource (code's        unknown_service:<executable>,        read by resource.Default, always (no opt-in);
//	                                             fields win)             the host name, the pid               OTEL_SERVICE_NAME wins over service.name
//	-                                            Retry                   100 ms .. 5 s, full jitter, within   WithRetry: 5 s .. 30 s, 1 min in all
//	                                                                     the Interval; Retry-After, RetryInfo
//	-                                            MaxQueuedBytes          16 MiB of delta requests kept        none (a failed export is lost)
//	                                                                     when the receiver is down
//
// The temporality preference, per kind of view (exporter.TemporalityPreference):
//
//	view (OTel instrument)        cumulative   delta        lowmemory
//	Count, Sum (Counter)          cumulative   delta        delta
//	ObservedSum (async Counter)   cumulative   delta        cumulative (the otel module's observable counters, metric.NewCounter)
//	Distribution (Histogram)      cumulative   delta        delta
//	ExponentialDistribution       cumulative   delta        delta      (a Histogram, as the specification's table has it)
//	UpDownSum (UpDownCounter)     cumulative   cumulative   cumulative (with Temporality Delta too: see below)
//	LastValue (Gauge)             -            -            -          (a Gauge has no temporality: its last value)
//	Summary                       -            -            -          (a Summary has no temporality: its current values, with Temporality Delta too)
//
// An up-down sum (view.UpDownSum) is always exported as its total, a
// cumulative non-monotonic Sum, as the specification's delta and lowmemory
// preferences keep an UpDownCounter, and with Temporality Delta too: a
// delta of a total that goes both ways is what delta-to-cumulative
// pipelines and Prometheus mishandle, and every zerostat exporter gives a
// view one temporality (the msgpack payload's aggregation 5 is a total).
//
// Retried answers: HTTP 429, 502, 503, 504 (with Retry-After) and no
// answer; gRPC CANCELLED, DEADLINE_EXCEEDED, ABORTED, OUT_OF_RANGE,
// UNAVAILABLE, DATA_LOSS, and RESOURCE_EXHAUSTED with a RetryInfo (whose
// delay is honoured) — the specification's lists, which OTel Go's
// exporters use too.
//
// # Mapping
//
// Each view is one Metric (name, description, unit), each of its series
// one data point whose attributes are the series' tag values (keys whose
// value is absent are left out). The mapping is the one every zerostat
// output uses (docs/metric-mapping.md):
//
//   - Count: a Sum, monotonic, of integers (as_int), unit "1" (it counts
//     recordings, whatever the measure's unit);
//   - Sum: a Sum, monotonic, of integers for an Int64 measure and doubles
//     for a Float64 one, in the measure's unit; in an export where one of
//     its points is negative or NaN, the Sum is sent non-monotonic
//     (values unchanged);
//   - LastValue: a Gauge, of integers for an Int64 measure;
//   - Distribution: a Histogram with the view's explicit bounds, the count,
//     sum, bucket counts, min and max of each series.
//   - Summary (view.Summary, metric.NewSummary): a Summary (Metric field
//     11), a SummaryDataPoint per series: start (the view's), time, count,
//     sum, a ValueAtQuantile per quantile in the view's order, attributes;
//     the series' current values in every export (summary.go).
//   - ExponentialDistribution: an ExponentialHistogram, the buckets as the
//     series holds them: scale, zero_count (zero_threshold 0: values
//     exactly 0), positive and negative Buckets (offset and counts), count,
//     sum, min and max; min and max left out when the point counts no
//     value (only NaN or ±Inf were recorded, which the aggregation ignores).
//     With delta temporality a point holds the interval's own values at the
//     scale a histogram of them alone has (finer than the cumulative one
//     after a wide interval: the OTel SDK's delta), with the interval's own
//     min and max, always sent (they are known: nothing is un-merged).
//
// Sums and histograms are cumulative (as OpenCensus reports them; a point
// starts when its view was registered, as an OpenTelemetry SDK's starts at
// its aggregation's start, or, for a series re-created after eviction,
// when it was: a reset) or delta (Options.Temporality, or
// Options.TemporalityPreference delta or lowmemory; a point covers the
// time since the previous export, and series with nothing new are left
// out). The resource has the attributes service.name,
// host.name, process.pid and those of Options.Resource; the instrumentation
// scope is ScopeName, without a version: the msgpack payload carries none,
// and the same views reach the OpenTelemetry Collector as the same pdata
// by either path (put a version in Options.Resource, which both carry). A view past its
// cardinality limit has one more data point, the overflow series, with
// the attribute otel.metric.overflow=true.
//
// Differences that cannot be avoided:
//
//   - Bucket boundaries. view.Distribution counts as OpenCensus does, a
//     value equal to a bound in the bucket above it: bucket i holds
//     bounds[i-1] <= v < bounds[i]. OTLP's explicit buckets include their
//     upper bound: bounds[i-1] < v <= bounds[i]. The counts are sent as
//     aggregated, so a receiver reads a value recorded exactly on a bound
//     as belonging to the next bucket (a 5 with bounds 1, 5, 10 lands in
//     OTLP's (5, 10]). Views made with view.DistributionUpperInclusive
//     count by OTLP's rule, and their bucket_counts are exact (values
//     5, 10, 50 with bounds 1, 5, 10, 50: [0 1 1 1 0]).
//   - Histogram sum. OTLP says the sum must be left out when negative
//     values were recorded (for compatibility with OpenMetrics); it is,
//     for series whose minimum is negative (an ExponentialHistogram point:
//     whose own minimum is, the interval's with delta temporality). The
//     OTel SDK always sends it.
//   - Histogram min and max with delta temporality. They cannot be
//     subtracted, so they are sent only for a series' first interval
//     (when every recorded value is in it), and left out afterwards.
//   - Start times are per view, not per series: a cumulative point starts
//     when its view was registered (its count was 0 before the series
//     appeared).
//
// # Delivery
//
// One export is one request, POSTed with Content-Type
// application/x-protobuf (Content-Encoding: gzip with Options.Compression)
// and the headers of Options.Header. A failed request is retried with
// exponential backoff and jitter, or after the answer's Retry-After, when
// it got no answer or one of 429, 502, 503, 504 (the OTLP retryable codes);
// other answers are final. An export, retries included, lasts at most the
// Interval (or the context's deadline when sooner); each request at most
// Options.Timeout. A partial success (the receiver rejected some data
// points) counts as a success, counted in Stats.Rejected. Stats counts
// exports, requests, retries, data points delivered and dropped;
// Options.Logger logs each change of state (failing, recovered, partial
// success, every point accepted again) once. A partial_success that
// rejects no point and carries a message is the specification's warning
// on a full success: logged once per message, not counted, no partial
// state.
//
// # Costs and guarantees
//
// The snapshot reads each series with atomic loads (a distribution cell
// is locked only while copied): recorders are never blocked by an export,
// however slow the receiver. Encoding is hand-written protobuf (no
// protobuf runtime: the SDK module stays free of third-party
// requirements). Each sub-message's length is computed before it is
// written, so every byte is written once; buffers are reused, and in
// steady state Encode allocates nothing (tested). On 10,000 series it is
// several times faster than building the official Go types and
// marshalling them with protobuf-go, and its bytes are exactly what
// protobuf-go writes for the same message (benchmarks/otlpcheck). Sending
// allocates what net/http allocates per request; gzip costs far more CPU
// than encoding (use gzip.BestSpeed, the default level, or none on a
// local network).
//
// An Exporter is safe for concurrent use; exports are serialised. An
// Encoder is not safe for concurrent use.
package otlp
