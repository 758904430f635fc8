// Package stats records measurements: libraries record, applications
// choose (with package view) what to aggregate and export.
//
// # Recording
//
// Declare each measure once, at package level; build a tagged context
// once per tag set (a route, a method) and keep it; record through it:
//
//	var (
//		keyRoute = tag.MustNewKey("http.route")
//		latency  = stats.Float64("http/latency", "Request latency", stats.UnitMilliseconds)
//	)
//
//	users, err := tag.New(ctx, tag.Upsert(keyRoute, "/users")) // once per route
//	...
//	stats.Record(users, latency.M(4.2)) // on every request
//
// Record(ctx, m.M(v)) adds v to every view registered over m (package
// view), grouped by the tags in ctx. A measure no view uses costs one
// atomic load and a branch, so a library records whether or not an
// application aggregates. The other ways to record:
//
//   - RecordWithTags(ctx, mutators, ms...) applies tag mutators (built
//     once, kept) to the context's tags for this record only.
//   - RecordWithOptions(ctx, opts...) does the same with options:
//     WithTags, WithMeasurements, WithAttachments (exemplars), WithRecorder.
//   - m.Bind(tags) returns a handle for one measure and one tag set,
//     resolved once; h.Record(v) then records (see Handles).
//
// ExampleRecord, ExampleRecordWithTags and ExampleInt64Measure_Bind show
// each with its view. None of them allocates (attachments aside), and
// there is no channel, no worker goroutine and no lock shared by
// recorders; the section Cost says what each call does.
//
// # Measures and measurements
//
// A measure (Int64 or Float64) names a quantity with a description and a
// unit. Measures are identified by name: creating a measure with a name
// already in use returns one that shares the first one's description, unit
// and views. M turns a value into a Measurement.
//
// # Handles
//
// Int64Measure.Bind and Float64Measure.Bind resolve a measure and a tag set
// once, like Prometheus's WithLabelValues child, with the rows Record
// would produce. A handle follows view changes (a view registered later,
// or unregistered and registered again) and eviction (a freed series'
// successor).
//
// # Exemplars and recorders
//
// RecordWithOptions with WithAttachments keeps, in each distribution
// view, the latest value of each bucket with its time and attachments as
// the bucket's exemplar (view.DistributionData.ExemplarsPerBucket;
// exported as OpenMetrics and OTLP exemplars). With SetSpanContextFunc,
// the span of the record's context is attached too (a SpanContext under
// AttachmentKeySpanContext). Such a record costs one allocation and a
// clock read more; Record, RecordWithTags and RecordWithOptions without
// attachments are unchanged. WithRecorder sends the record to a Recorder
// (a view.Meter) instead of the default views.
//
// # Cost: series, cells and cache lines
//
// Record goes straight to the views' series. It costs:
//
//   - a measure no view uses: one atomic load and a branch;
//   - otherwise one context lookup (skipped when no view of the measures
//     keys on tags), then per view one atomic load (the
//     series the context's tag map resolved to before, cached on the map)
//     and the series' atomic update: one atomic add for Count and for
//     the Sum of an Int64 measure, one compare-and-swap for a float Sum,
//     one store for LastValue, a bound search and four atomic updates for
//     Distribution.
//
// A context kept and recorded through many times, built by tag.New from
// context.Background() (or context.TODO()), whose records go to one view
// of Count or of an Int64 Sum (views of other aggregations beside it do
// not count), takes a cell of its own on its third record: later records
// add to the context's own memory, one atomic add, as a handle does, and
// no longer read the series first. With many live series, where both
// would miss the cache, that more than halves a record (docs/performance.md,
// "Scale"). Every read of the series counts the cell.
//
// No record path allocates (the first record of a new tag combination
// creates its series, once). A series that recorders on several cores
// update at once grows one cell per CPU, so they stop sharing a cache line.
//
// For the one view of a Count or an Int64 Sum, a handle's Record loads
// one word of the handle, compares it with a word shared by every handle,
// and adds to a cell in the handle's own cache line, which the series
// counts; otherwise it is, per view, a load of the series the handle
// resolved and its update (compare-and-swap for a float Sum).
//
// RecordWithTags and RecordWithOptions, with up to 16 resulting tags,
// build the tag set on the stack and do not allocate either (except once
// per recurring tag set, when it enters the cache of recent tag maps).
//
// All functions are safe for concurrent use.
package stats
