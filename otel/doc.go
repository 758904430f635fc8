// Package otel is an OpenTelemetry MeterProvider (go.opentelemetry.io/otel/metric
// v1.47.0) built on zerostat's aggregators: every instrument records into a
// zerostat view, so zerostat's exporters (OTLP, Prometheus, remote write,
// msgpack), view.RetrieveData and /debug/stats read OpenTelemetry
// instrumentation (otelhttp, otelgrpc, a library's own meters) with no
// OTel SDK in the process.
//
//	mp := otel.NewMeterProvider()
//	defer mp.Shutdown(ctx)
//	otelglobal.SetMeterProvider(mp) // go.opentelemetry.io/otel
//	requests, _ := mp.Meter("app").Int64Counter("app.requests")
//	get := metric.WithAttributeSet(attribute.NewSet(attribute.String("method", "GET")))
//	requests.Add(ctx, 1, get)
//
// # Instruments and their views
//
// Each instrument is one zerostat measure and one view, named after the
// instrument (WithViewPrefix puts a prefix before it), registered with the
// instrument's first measurement:
//
//	Counter                  view.Sum                         monotonic sum
//	UpDownCounter            view.UpDownSum                   non-monotonic sum (a Prometheus gauge)
//	Histogram                view.DistributionUpperInclusive  explicit buckets b[i-1] < v <= b[i]: the advisory
//	                                                          boundaries, or DefaultBoundaries (the SDK's)
//	                         or view.ExponentialDistribution  base-2 exponential buckets, when chosen (below)
//	Gauge                    view.LastValue                   gauge
//	ObservableCounter        view.Sum                         the observed totals
//	ObservableUpDownCounter  view.UpDownSum
//	ObservableGauge          view.LastValue
//
// Int64 instruments record into Int64 measures, so sums and gauges export
// as integers. Histograms keep count, sum, min, max and bucket counts.
// Temporality (cumulative or delta) is the exporter's choice, as with every
// zerostat view.
//
// # Exponential histograms
//
// A histogram is a base-2 exponential histogram (the SDK's
// AggregationBase2ExponentialHistogram: view.ExponentialDistribution,
// internal/exphist) when, first to last in precedence,
// WithExponentialHistogram names it (per instrument, as an SDK view
// selects one; any case), WithExponentialHistograms is given (every
// histogram), or OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION
// (EnvHistogramAggregation) is base2_exponential_bucket_histogram (in any
// case; MaxSize 160, MaxScale 20, the SDK's), which the SDK reads in its
// OTLP exporters and zerostat in the provider, for every exporter at once
// (OTLP's ExponentialHistogram, Prometheus's native histogram, remote
// write's histograms, the msgpack format's aggregation 7). The variable's
// explicit_bucket_histogram, unset or empty, is the default; another value
// is reported through otel.Handle and ignored, as the specification says
// of an unknown enum value. An option's maxSize below 2 or maxScale
// outside -10..20 is an error naming the argument, reported through
// otel.Handle by NewMeterProvider and returned by the creation of each
// histogram the option would have selected; the option is ignored.
// Advisory boundaries do not apply to an exponential histogram.
//
// A measurement costs what an explicit-bucket one does (the bucket index
// is two table loads at scale 8 and below, a short series above, then the
// series' lock word: see view.ExponentialDistribution), allocates nothing,
// and never looks at its context: exponential series keep no exemplars
// (the SDK keeps up to min(20, MaxSize) per point). Delta temporality
// gives each interval the scale of its own values, as the SDK's.
// TestExponentialConformance compares both with seeded workloads, bucket
// for bucket (see the test for the only difference: the SDK misplaces
// some values within a few ulps of a boundary at scale 5 and above).
//
// # Attributes
//
// Attribute sets become zerostat tags: the key is the attribute's key, the
// value attribute.Value.Emit's text, and the key keeps the type of the
// first attribute bound for it (internal/attrval): OTLP, the msgpack
// payload and the Collector receiver's pdata carry 200 as an int and true
// as a bool, as the SDK does, and Prometheus labels are the text. The
// type is noted when a set is first bound, so a measurement costs nothing
// more. Every attribute set is a point of its own, as in the OTel
// SDK: an instrument's view starts with the keys of its first measurement,
// those declared with WithAttributeKeys, otel.metric.overflow and, for the
// instruments of the HTTP and RPC semantic conventions
// (http.server.request.duration, rpc.server.call.duration and the others
// otelhttp and otelgrpc record), every key their convention defines; a
// later set with a key the view lacks adds it (core.GrowView: a set-up
// cost, once per key, under the instrument's lock). The points recorded
// before keep their attributes; a key a point lacks is not exported. Each
// added key costs every later series 4 bytes, and exporters rebuild
// their naming of the view once; declaring the keys up front avoids both.
// A view groups by at most MaxAttributeKeys (128) attribute keys: an
// attribute whose key would be one more is left out of the grouping as
// below.
// In the msgpack wire format a view's keys are sorted by name but for
// those added, which follow in the order they came.
//
// An attribute whose key is not a valid tag key, or whose value is not a
// valid tag value (up to 255 printable ASCII bytes), is left out of the
// grouping: the measurement still counts, in the point without that
// attribute, and the first such attribute of each key is reported through
// otel.Handle. An empty string value is the same as an absent attribute.
//
// # Cardinality limit
//
// As in the OTel SDK (WithCardinalityLimit, default 2000), an instrument
// keeps limit-1 attribute sets; the measurements of any further set are
// aggregated into one point tagged otel.metric.overflow=true, so totals
// stay exact.
//
// # Observable instruments
//
// Callbacks (an instrument's WithInt64Callback/WithFloat64Callback, or
// Meter.RegisterCallback) run before every zerostat snapshot, as the
// metric package's callback gauges do (the push pipeline's exports, the
// Prometheus handler's scrapes, the snapshot handler, /debug/stats):
// each on a goroutine of its own, bounded by the collect timeout (1 s),
// so that one that blocks or panics loses its values of that snapshot
// and is counted in selfstats' zerostat/callback_failures, and every
// other metric still goes out. MeterProvider.Collect runs them on demand
// (view.RetrieveData does not). An observable counter's callback reports
// totals; the view records the difference from the previous total of the
// attribute set. A set a callback stops observing keeps its last value
// (the SDK drops it).
//
// # Exemplars
//
// As in the OTel SDK, a measurement of a synchronous instrument (counter,
// up-down counter, histogram, gauge) whose context holds a sampled span
// (trace.SpanContextFromContext(ctx).IsSampled(): the trace_based filter,
// the default) is offered as an exemplar of its point: its value, its
// time and the span's trace and span ids. WithExemplarFilter or
// OTEL_METRICS_EXEMPLAR_FILTER (always_on, always_off, trace_based; the
// option wins) choose the filter: always_on offers every measurement,
// with the ids of the context's span when it holds one, sampled or not,
// and none otherwise; always_off offers none. A point keeps what it is
// offered as the SDK's default reservoirs do (zerostat's exemplar store,
// which stats.WithAttachments fills too: stats.Float64Handle.RecordExemplar):
//
//   - a histogram's point, per bucket, the latest measurement offered;
//   - a counter's, an up-down counter's or a gauge's point, a reservoir
//     of GOMAXPROCS exemplars (the SDK's FixedSizeReservoir, of the same
//     size): each collection (an export's, a scrape's, a push's read)
//     ends a sampling cycle, whose first offers fill its slots in order
//     and later ones replace a slot at random with a decreasing
//     probability, each of a cycle's n offers kept with probability
//     k/n (Algorithm L); the slots a cycle did not reach keep theirs.
//
// Observable instruments and exponential histograms keep none (see the
// differences below). What each path carries:
//
//	OTLP (exporter/otlp)          every point's exemplars (a histogram's one per bucket at most, a sum's or a
//	                              gauge's its reservoir's, in slot order): time, value (as_double), span_id
//	                              and trace_id (none without a span); in delta temporality, those recorded in
//	                              the interval
//	OpenMetrics (Prometheus       each _bucket line's exemplar, and on a counter's _total line the newest of
//	handler, exporter/prometheus) its reservoir: labels trace_id and span_id, the value, the time in seconds (a
//	                              real Prometheus stores them with --enable-feature=exemplar-storage); none on
//	                              an up-down counter's or a gauge's line (OpenMetrics has no gauge exemplars);
//	                              the text format carries none; the protobuf exposition as OpenMetrics
//	remote write                  each _bucket series' exemplar, and on a counter's series its reservoir's
//	(exporter/remotewrite)        (oldest first, one per millisecond: what Prometheus stores), with the same
//	                              labels, until a push carrying it is delivered; none on gauges
//	view.RetrieveData,            DistributionData.ExemplarsPerBucket: value and time, without attachments (so
//	/debug/stats, the OpenCensus  without the span's ids); none for sums and gauges
//	bridge
//	msgpack, the Collector        none (the format has no exemplars)
//	receiver
//
// TestExemplarsExported checks the OTLP and OpenMetrics output against
// the recorded spans, TestBackendPrometheusOTelExemplars and
// TestBackendPrometheusOTelCounterExemplars a real Prometheus's
// /api/v1/query_exemplars (scraped, and by remote write), and
// TestExemplarConformanceWithSDK the exemplars of every point against the
// SDK's, under each filter.
//
// Cost, beyond what Cost below says: a measurement in
// context.Background() costs one compare (of the context's type word),
// in context.TODO() two; in another context without a span, a ctx.Value
// lookup (trace.SpanFromContext) and a compare; none of them allocates.
// In a span not sampled, the span's SpanContext besides; one kept as an
// exemplar, a clock read and one allocation (the exemplar, 48 bytes), as a
// zerostat record with attachments (a counter's or a gauge's also takes
// its reservoir's lock). Under always_off, and for the observable
// instruments and exponential histograms, a measurement never reads its
// context's values.
//
// # Cost
//
// A measurement with one metric.WithAttributeSet option of a set seen
// before: the set's precomputed hash read from the option (the API's
// option loop is skipped; see fastopt.go for how that is checked at
// start-up), one atomic load and a probe of the instrument's table, and
// the bound handle's atomic update (stats.Int64Handle): no allocation, no
// lock, no map, a few ns above the handle. Other options go through
// metric.NewAddConfig first. metric.WithAttributes allocates what the API
// allocates (the option and the set); zerostat adds nothing. The first
// measurement of a set takes the instrument's lock and allocates its
// handle. A measurement in a context other than context.Background()
// also reads its context's span (see Exemplars). Every method is safe
// for concurrent use. See
// docs/performance.md for the measured costs beside the OTel SDK (with
// WithAttributeSet, in the last run, 0.10x its time for a counter, 0.16x
// for a histogram, whose zerostat cell dominates).
//
// # Differences from the OTel SDK
//
// TestConformanceWithSDK records seeded workloads into both and compares
// the SDK's ManualReader data with what zerostat's OTLP encoder sends;
// they are identical but for these, by design:
//
//   - an attribute whose key or value is not a valid zerostat tag's is
//     left out of its point, and an empty string value is as absent (see
//     Attributes);
//   - an attribute key keeps the type of the first value bound for it:
//     OTLP (and the msgpack payload, and the Collector receiver's pdata)
//     carry each value with that type (an int as int_value, a slice as
//     an array; a later value of another type as its string, or as the
//     key's type if its text parses as it), and two sets that differ
//     only in a value's type (200 and "200") are one point; Prometheus
//     labels are the strings, as OTel's Prometheus exporter writes them;
//     byte slices, maps and other types export as their string;
//   - the cardinality limit bounds the sets an instrument ever bound; the
//     SDK's delta readers apply it per collection cycle;
//   - in delta temporality a histogram's min and max are the series'
//     whole-life extremes (sent only with its first point), a gauge's
//     point goes out every export, and a sum point whose interval added 0
//     is left out;
//   - zerostat's OTLP encoder leaves a histogram's sum out once it has
//     seen a negative value (OTLP's "SHOULD NOT"); the SDK sends it. An
//     exponential histogram's point leaves it out when its own minimum
//     (the interval's, in delta temporality) is negative;
//   - an exponential histogram: the bucket of a value within a few ulps
//     of a bucket boundary at scale 5 and above is the data model's
//     (exact; internal/exphist), where the SDK's logarithm misplaces some;
//     with MaxSize 2 and values three buckets apart at scale -10 (from
//     below 2^-1024 to above 1 in magnitude), both drop a value (the SDK's
//     "scale underflow", which it reports through otel.Handle, zerostat
//     silently), but a cumulative read of a series that also has a delta
//     reader is the merge of the intervals, which keeps what each interval
//     kept; the SDK aggregates each reader apart;
//   - instrumentation scopes are not exported;
//   - int64 instruments keep their values as float64 (zerostat's sums and
//     gauges), exact to 2^53;
//   - the meters of a provider share one namespace (below): an instrument
//     created under a name another meter used for another kind or number
//     type is an error and a no-op instrument, where the SDK exports two
//     streams of one name;
//   - an instrument name outside OTel's syntax is an error on both sides,
//     and both record and export the instrument, but for a name no view
//     can carry (empty, a byte outside printable ASCII, over 255 bytes):
//     zerostat makes no instrument then (a no-op and the error);
//   - a histogram advisory boundary of ±Inf or NaN is an error, and the
//     default boundaries are used, as both do for unsorted or repeated
//     boundaries; the SDK's check lets non-finite ones through (NaN
//     compares false) into buckets no backend reads alike (a second
//     le="+Inf" in Prometheus, NaN bounds in OTLP);
//   - after Shutdown an instrument's Enabled returns false (its
//     measurements are dropped: the specification lets Enabled return
//     false "to support additional optimizations"); the SDK's returns
//     true;
//   - a histogram whose samples include NaN: zerostat's min and max leave
//     NaN out (NaN only when every sample was NaN, as the SDK exports
//     then); the SDK's are NaN from a NaN first sample on;
//   - a callback that returns an error (or panics, or outlasts the collect
//     timeout) is reported on every path as the SDK's reader reports it,
//     and its snapshot still goes out: MeterProvider.Collect returns the
//     error, as the SDK's Reader.Collect; an export (exporter, otlp,
//     remotewrite: Export, Push, and OnError for periodic ones) returns
//     it wrapping metric.ErrCallback, having delivered everything else
//     (what the callback observed before its error included, as the SDK
//     keeps it); scrapes (Prometheus, /snapshot, /debug/stats) pass it to
//     otel.Handle; every path counts it in zerostat/callback_failures.
//     The SDK's PeriodicReader exports nothing in a cycle where a
//     callback failed (it exports only when Collect returned no error):
//     one failing callback would silence every instrument of the
//     provider, which zerostat does not do (TestCallbackErrorEveryPath).
//
// Exemplars (TestExemplarConformanceWithSDK compares them point by point
// with the SDK's under each filter; see Exemplars) differ in these:
//
//   - a histogram bucket keeps the latest measurement the filter offered;
//     the SDK's reservoir keeps one of those offered in a collection
//     cycle, chosen at random (Algorithm L, the first offer then each
//     later one with a decreasing probability). Both are the same
//     measurement when a bucket was offered one in its last cycle with
//     offers, and both keep it across cycles until a later offer (in
//     delta temporality, only the interval's);
//   - a counter's, an up-down counter's and a gauge's reservoir is the
//     SDK's (the same size, the same sampling: the same exemplars, slot
//     for slot, when a cycle has no more offers than slots; a random
//     choice of them on each side otherwise), but its sampling cycle ends
//     with each collection of any exporter (an OTLP export, a scrape, a
//     remote-write push), as zerostat's exporters share one store; the
//     SDK keeps one reservoir per reader, whose Collect ends its cycle.
//     With one exporter the two are alike;
//   - observable instruments keep none; under always_on the SDK keeps
//     their observations (without a span) in a reservoir per point, as a
//     sum's (under trace_based neither keeps any);
//   - an int64 instrument's exemplar values go out in OTLP as as_double,
//     the SDK's as as_int (the same value);
//   - an exemplar carries no filtered attributes: the SDK's are those a
//     view's attribute filter dropped, and zerostat has no such views;
//   - the filter is one of the three the specification defines
//     (ExemplarFilter), not a function; an unrecognised
//     OTEL_METRICS_EXEMPLAR_FILTER value is reported through otel.Handle
//     and ignored (the SDK ignores it silently).
//
// The TestCorners tests (corners_test.go) hold the API's corner cases
// to the SDK: invalid names, advisory boundaries (none, empty, unsorted,
// repeated: the SDK's defaults and its error), a histogram of NaN only (min
// and max NaN, never min above max), an observable counter observed twice
// for one set in one callback (the sum, as the SDK; a gauge: the last),
// and units after another provider's Shutdown (the new provider's).
//
// # Scopes and duplicate instruments
//
// zerostat's exporters have no instrumentation scopes: the meters of one
// provider share its instruments, and asking two meters for the same
// instrument name returns the same instrument. Names are case-insensitive,
// as the specification says: "requestCount" and "RequestCount" are one
// instrument, named as it was first created. Creating an instrument again
// with another description, unit or advisory boundaries returns the first
// one, which keeps its first-seen definition, and reports a warning
// through otel.Handle (the specification's duplicate instrument
// registration). Another kind, or int64 against float64, cannot share the
// name's view: an error naming both, and a no-op instrument.
package otel
