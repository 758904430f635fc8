// Package runmetrics exports the Go runtime's metrics (runtime/metrics:
// goroutines, threads, heap, GC cycles, GC pauses and scheduler latency
// as histograms) and the process's (CPU seconds, resident and virtual
// memory, open and maximum file descriptors, start time, network bytes),
// as client_golang v1.25.0's Go and process collectors
// (collectors.NewGoCollector() and
// collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
// export them to Prometheus: the same family names, types, help texts
// ("Sourced from ..." sentences included) and labels, so dashboards
// built on go_* and process_* keep working:
//
//	if err := runmetrics.Enable(runmetrics.Options{}); err != nil { ... }
//
// Three families beyond client_golang's defaults,
// go_gc_cycles_total_gc_cycles_total, go_sched_latencies_seconds and
// go_sched_pauses_total_gc_seconds, are named and described as
// client_golang names them with its MetricsAll option.
//
// The values are client_golang's too, read from the same sources:
// go_goroutines is runtime.NumGoroutine(); go_threads is
// runtime.ThreadCreateProfile's count of the runtime's threads, which
// unlike /sched/threads/total:threads includes those kept for cgo
// callbacks; the go_memstats_* families are the runtime.MemStats fields
// rebuilt from runtime/metrics as client_golang's memStatsFromRM does
// (go_memstats_mallocs_total and go_memstats_frees_total count tiny
// allocations in both, as MemStats' Mallocs and Frees do);
// go_gc_duration_seconds, a summary (metric.NewSummary's kind,
// view.Summary) as client_golang's, and go_memstats_last_gc_time_seconds
// come from debug.ReadGCStats: the summary's quantiles 0, 0.25, 0.5, 0.75
// and 1 are its PauseQuantiles (the minimum, quartiles and maximum of the
// runtime's last 256 stop-the-world pauses), its _sum PauseTotal and its
// _count NumGC, exactly client_golang's; every exporter writes it as its
// format's summary (Prometheus's, OpenMetrics's, the protobuf
// exposition's, OTLP's Summary, the msgpack format's aggregation 8) or,
// where the format has none, as docs/metric-mapping.md's one mapping says
// (StatsD gauges); the process_* families from /proc/self/stat (CPU
// time in the kernel's 10 ms ticks, as procfs reads it), the size of
// /proc/self/fd, the RLIMIT_NOFILE and RLIMIT_AS soft limits, and
// /proc/self/net/netstat's IpExt InOctets and OutOctets (the counts of
// the process's network namespace, as client_golang's). benchmarks/plugins
// (TestRunmetricsMatchClientGolang) runs both side by side in one process
// and compares every family, and goroutines, threads, open descriptors,
// start time and go_gc_duration_seconds (its quantiles, _sum and _count)
// exactly.
//
// # Differences from client_golang
//
//   - go_memstats_alloc_bytes, the gauge, is left out:
//     go_memstats_alloc_bytes_total's OpenMetrics family is named
//     go_memstats_alloc_bytes too (OpenMetrics drops a counter's
//     "_total"), and one name cannot be two families (client_golang's
//     OpenMetrics output then has two HELP and two TYPE lines for it).
//     Its value is go_memstats_heap_alloc_bytes', which is kept.
//   - go_sched_latencies_seconds and go_sched_pauses_total_gc_seconds
//     have runmetrics' bucket bounds, 1 µs to 10 s by factors of 2.5 and
//     4, not client_golang's powers of 10 of the runtime's buckets with
//     everything above about 0.12 s in +Inf.
//
// # When they are read
//
// When a snapshot is taken (an export, a scrape, /debug/stats), through
// the same hook as the metric package's callback gauges: no goroutine
// polls, and a program that takes no snapshot pays nothing. One
// runtime/metrics.Read per snapshot serves every Go metric but go_threads
// (runtime.ThreadCreateProfile, a walk of the runtime's thread list) and
// the two GC statistics (debug.ReadGCStats, which holds the heap lock
// while it copies the pause history); the process metrics read
// /proc/self/stat and /proc/self/net/netstat and stat /proc/self/fd
// (Linux only). None of them stops the world.
//
// # Cost
//
// Per snapshot: metrics.Read of 26 samples, runtime.ThreadCreateProfile's
// count, debug.ReadGCStats into buffers kept from one snapshot to the
// next, the /proc reads, one record per gauge and counter, one weighted
// record per changed runtime histogram bucket, and go_gc_duration_seconds'
// summary set whole (its value: one allocation of 56 bytes).
// BenchmarkCollect on the project's 2-core VM (medians of 6, under load,
// load average 3.4): 5 µs and 7 allocations per snapshot without the
// process metrics, 120 µs and 15 allocations with them (the allocations
// counted by testing.AllocsPerRun since the summary; the times measured
// before it, which adds one small allocation), about half of it
// the kernel writing /proc/self/net/netstat (client_golang's process
// collector reads the same file). A failure drops only the values it
// concerns from that snapshot (an unreadable /proc file, those read from
// it; a panic, all) and is reported by Err and by selfstats'
// zerostat/callback_failures{callback="runmetrics"}.
//
// # OpenCensus names
//
// Options.OpenCensusNames exports the runtime's metrics under OpenCensus
// runmetrics' names instead (OpenCensusMetrics: process/heap_alloc,
// process/num_gc, ..., gauges with its descriptions and units), rebuilt
// from runtime/metrics; four of its 28 metrics have no runtime/metrics
// source and are left out (see OpenCensusMetrics). Its Prefix and
// UseDerivedCumulative options are not offered.
//
// Enable, Disable and Err are safe for concurrent use.
package runmetrics
