// Package view aggregates the measurements recorded with package stats and
// hands the results to exporters.
//
// # Views
//
// A View names a measure, the tag keys that split its recordings into
// rows, and an aggregation: Count, Sum, Distribution (histogram with count,
// min, max, mean and sum of squared deviation) or LastValue. Register starts
// aggregating; Unregister stops and frees the rows, so registering again
// starts from zero. RetrieveData returns a snapshot of a view's rows,
// sorted by their tag values, taken without stopping recorders.
//
// Names, fields and semantics follow OpenCensus (go.opencensus.io v0.24.0);
// docs/migrating-from-opencensus.md lists every deliberate difference.
//
// # Exporters
//
// RegisterExporter adds an Exporter that receives every registered view's
// Data each reporting period (SetReportingPeriod, 10 s by default). The
// reporting goroutine starts with the first exporter and stops with the
// last: nothing runs until an exporter is registered.
//
// # Meters
//
// The package-level functions act on the default meter. NewMeter returns
// an independent Meter with its own views, exporters and reporting period
// (OpenCensus's view.Meter): its views see only what is recorded into it
// (stats.WithRecorder(meter), or meter.Record), and zerostat's exporters,
// which read the process's registry, export the default meter's views.
// Stop stops the default meter's reports.
//
// # Costs
//
// Register, Unregister and the exporter functions are set-up operations
// that take a lock and allocate; they never block recorders. RetrieveData
// allocates its rows. All functions are safe for concurrent use.
package view
