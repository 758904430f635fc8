// Package metric holds callback gauges and counters: values a user
// function reports each time a snapshot is taken, rather than values
// recorded as they happen. They are OpenCensus's derived gauges and
// cumulatives, Prometheus's GaugeFunc and CounterFunc, and OTel's
// observable gauges and counters. NewSummary adds callback summaries: a
// count, a sum and quantile values computed by the source (Prometheus's
// summary, OTLP's Summary, OpenCensus's metricdata.Summary; runmetrics'
// go_gc_duration_seconds is one).
//
//	queue := metric.MustNewGauge("app/queue_length", "Jobs waiting", stats.UnitDimensionless,
//		[]tag.Key{keyQueue}, func(o *metric.Observer) {
//			o.Observe(float64(q.Len()), "default")
//		})
//	defer queue.Unregister()
//
// # When callbacks run
//
// Every path that takes a snapshot runs every registered callback first:
// the push pipeline before each export (msgpack, OTLP, remote write), the
// Prometheus handler on each scrape, the snapshot handler, and
// /debug/stats. Nothing polls: without snapshots, callbacks never run.
// Collect runs them on demand (view.RetrieveData does not).
//
// # Failures
//
// Each callback runs on a goroutine of its own; the snapshot waits for
// all of them up to a timeout (1 s, SetTimeout). A callback that panics,
// has not returned in time, or reports bad tag values loses its values of
// that snapshot (its rows keep their previous values); every other
// callback and view still goes out. The failure is returned by Err and
// counted in selfstats' zerostat/callback_failures (by callback and
// reason: panic, timeout, error). A stuck callback is not started again
// until it returns, so it holds one goroutine, not one per snapshot.
//
// # Cost
//
// Per snapshot with n callbacks: n goroutines started, a channel, a timer
// and, per value reported, one tagged record (stats.RecordWithTags, no
// allocation for a row seen before; a counter row with two or more tag
// keys allocates its map key once per snapshot). Without callbacks a
// snapshot pays one atomic load. The record path is untouched.
// BenchmarkCollect on the project's 2-core VM (medians of 6, under load):
// 1.9 µs and 6 allocations per snapshot for one trivial callback, 11.5 µs
// and 15 allocations for ten.
//
// Callbacks, Collect, SetTimeout and Unregister are safe for concurrent
// use. A callback is never run concurrently with itself.
package metric
