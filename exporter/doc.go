// Package exporter ships snapshots of every registered view, periodically,
// in zerostat's compact MessagePack format (docs/wire-format.md, read back
// by package wire).
//
// # Use
//
//	e, err := exporter.New(&exporter.HTTPSink{URL: "http://127.0.0.1:4319/"},
//		exporter.Options{Interval: 10 * time.Second})
//	...
//	e.Start()
//	defer e.Stop(ctx) // exports a final snapshot
//
// Sinks: HTTPSink (POST, Content-Type application/msgpack), WriterSink
// (length-prefixed frames on an io.Writer: files, stdout) and FuncSink (in
// process). `zerostat receive` and package receiver are the other end of
// HTTPSink; `zerostat decode` reads WriterSink's frames.
//
// # Costs and guarantees
//
// A snapshot reads each series with atomic loads; a distribution cell is
// locked only while its fields are copied (tens of nanoseconds), so
// recorders never wait on an export for longer than that, and never on a
// lock shared by all of them. Snapshot and encoding reuse their buffers: in
// steady state an export allocates nothing (tested). Strings are written
// once per payload, in a table, and referenced by index; they were given
// stable ids when their view or series was created, so an export maps ids
// through an array and hashes no string.
//
// Options choose the temporality (cumulative, as OpenCensus, or delta; or
// OpenTelemetry's preference per kind of view, TemporalityPreference),
// a payload size cap (larger snapshots are split into self-contained
// payloads), gzip compression and its level, and a timeout per send. Stop
// exports a final snapshot, so nothing recorded before it is left unsent.
//
// With delta temporality, EvictIdleAfter frees the series that stopped
// changing (tag values that come and go: pods, users, jobs), so memory
// follows the live tag combinations rather than every one ever seen. A
// series found unchanged that many exports in a row is sealed, read once
// more by every delta exporter with its final values, then freed; a record
// arriving meanwhile revives it. docs/reliability.md has the details and
// what cumulative readers see.
//
// With Options.FromEnv, OpenTelemetry's variables configure what they
// name: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES the Resource (see
// Resource.FromEnv, which every exporter's FromEnv uses),
// OTEL_METRIC_EXPORT_INTERVAL the Interval and
// OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE the preference; options
// set in code win, and an invalid value fails New naming the variable.
//
// An Exporter is safe for concurrent use; exports are serialised.
package exporter
