package otlp

// Field tags (field number << 3 | wire type) of the OTLP messages written
// and read here, from opentelemetry-proto v1.x
// (https://github.com/open-telemetry/opentelemetry-proto/tree/main/opentelemetry/proto):
// collector/metrics/v1/metrics_service.proto, metrics/v1/metrics.proto,
// resource/v1/resource.proto and common/v1/common.proto; and
// google/rpc/status.proto for error bodies. The field numbers are checked
// against go.opentelemetry.io/proto/otlp by decoding our requests with it
// (benchmarks/otlpcheck).
const (
	// ExportMetricsServiceRequest
	tagRequestResourceMetrics = 1<<3 | wireBytes // repeated ResourceMetrics resource_metrics = 1

	// ResourceMetrics
	tagRMResource     = 1<<3 | wireBytes // Resource resource = 1
	tagRMScopeMetrics = 2<<3 | wireBytes // repeated ScopeMetrics scope_metrics = 2

	// Resource
	tagResourceAttributes = 1<<3 | wireBytes // repeated KeyValue attributes = 1

	// ScopeMetrics
	tagSMScope   = 1<<3 | wireBytes // InstrumentationScope scope = 1
	tagSMMetrics = 2<<3 | wireBytes // repeated Metric metrics = 2

	// InstrumentationScope
	tagScopeName    = 1<<3 | wireBytes // string name = 1
	tagScopeVersion = 2<<3 | wireBytes // string version = 2

	// KeyValue
	tagKVKey   = 1<<3 | wireBytes // string key = 1
	tagKVValue = 2<<3 | wireBytes // AnyValue value = 2

	// AnyValue (a oneof)
	tagAnyString = 1<<3 | wireBytes  // string string_value = 1
	tagAnyBool   = 2<<3 | wireVarint // bool bool_value = 2
	tagAnyInt    = 3<<3 | wireVarint // int64 int_value = 3

	// Metric (data is a oneof)
	tagMetricName        = 1<<3 | wireBytes  // string name = 1
	tagMetricDescription = 2<<3 | wireBytes  // string description = 2
	tagMetricUnit        = 3<<3 | wireBytes  // string unit = 3
	tagMetricGauge       = 5<<3 | wireBytes  // Gauge gauge = 5
	tagMetricSum         = 7<<3 | wireBytes  // Sum sum = 7
	tagMetricHistogram   = 9<<3 | wireBytes  // Histogram histogram = 9
	tagMetricExpHist     = 10<<3 | wireBytes // ExponentialHistogram exponential_histogram = 10

	// Gauge, Sum and Histogram
	tagDataPoints  = 1<<3 | wireBytes  // repeated ...DataPoint data_points = 1
	tagTemporality = 2<<3 | wireVarint // AggregationTemporality aggregation_temporality = 2 (Sum, Histogram)
	tagMonotonic   = 3<<3 | wireVarint // bool is_monotonic = 3 (Sum)

	// NumberDataPoint (value is a oneof)
	tagNDPStart      = 2<<3 | wireFixed64 // fixed64 start_time_unix_nano = 2
	tagNDPTime       = 3<<3 | wireFixed64 // fixed64 time_unix_nano = 3
	tagNDPAsDouble   = 4<<3 | wireFixed64 // double as_double = 4
	tagNDPAsInt      = 6<<3 | wireFixed64 // sfixed64 as_int = 6
	tagNDPAttributes = 7<<3 | wireBytes   // repeated KeyValue attributes = 7

	// HistogramDataPoint
	tagHDPStart          = 2<<3 | wireFixed64  // fixed64 start_time_unix_nano = 2
	tagHDPTime           = 3<<3 | wireFixed64  // fixed64 time_unix_nano = 3
	tagHDPCount          = 4<<3 | wireFixed64  // fixed64 count = 4
	tagHDPSum            = 5<<3 | wireFixed64  // optional double sum = 5
	tagHDPBucketCounts   = 6<<3 | wireBytes    // repeated fixed64 bucket_counts = 6 (packed)
	tagHDPExplicitBounds = 7<<3 | wireBytes    // repeated double explicit_bounds = 7 (packed)
	tagHDPExemplars      = 8<<3 | wireBytes    // repeated Exemplar exemplars = 8
	tagHDPAttributes     = 9<<3 | wireBytes    // repeated KeyValue attributes = 9
	tagHDPMin            = 11<<3 | wireFixed64 // optional double min = 11
	tagHDPMax            = 12<<3 | wireFixed64 // optional double max = 12

	// ExponentialHistogramDataPoint (start and time as tagHDPStart and
	// tagHDPTime)
	tagEHDPAttributes = 1<<3 | wireBytes    // repeated KeyValue attributes = 1
	tagEHDPCount      = 4<<3 | wireFixed64  // fixed64 count = 4
	tagEHDPSum        = 5<<3 | wireFixed64  // optional double sum = 5
	tagEHDPScale      = 6<<3 | wireVarint   // sint32 scale = 6 (zigzag)
	tagEHDPZeroCount  = 7<<3 | wireFixed64  // fixed64 zero_count = 7
	tagEHDPPositive   = 8<<3 | wireBytes    // Buckets positive = 8
	tagEHDPNegative   = 9<<3 | wireBytes    // Buckets negative = 9
	tagEHDPExemplars  = 11<<3 | wireBytes   // repeated Exemplar exemplars = 11
	tagEHDPMin        = 12<<3 | wireFixed64 // optional double min = 12
	tagEHDPMax        = 13<<3 | wireFixed64 // optional double max = 13
	// flags = 10 (uint32) and zero_threshold = 14 (double) are 0: never
	// written.

	// ExponentialHistogramDataPoint.Buckets
	tagBucketsOffset = 1<<3 | wireVarint // sint32 offset = 1 (zigzag)
	tagBucketsCounts = 2<<3 | wireBytes  // repeated uint64 bucket_counts = 2 (packed varints)

	// Exemplar
	tagExTime     = 2<<3 | wireFixed64 // fixed64 time_unix_nano = 2
	tagExAsDouble = 3<<3 | wireFixed64 // double as_double = 3 (oneof value)
	tagExSpanID   = 4<<3 | wireBytes   // bytes span_id = 4
	tagExTraceID  = 5<<3 | wireBytes   // bytes trace_id = 5

	// ExportMetricsServiceResponse
	tagResponsePartialSuccess = 1<<3 | wireBytes // ExportMetricsPartialSuccess partial_success = 1

	// ExportMetricsPartialSuccess
	tagPSRejected = 1<<3 | wireVarint // int64 rejected_data_points = 1
	tagPSMessage  = 2<<3 | wireBytes  // string error_message = 2

	// google.rpc.Status
	tagStatusMessage = 2<<3 | wireBytes // string message = 2
)

// AggregationTemporality values (metrics.proto).
const (
	temporalityDelta      = 1 // AGGREGATION_TEMPORALITY_DELTA
	temporalityCumulative = 2 // AGGREGATION_TEMPORALITY_CUMULATIVE
)
