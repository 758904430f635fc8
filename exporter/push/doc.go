// Package push is the pipeline under every zerostat push exporter: the
// msgpack exporter (package exporter), OTLP/HTTP (exporter/otlp),
// Prometheus remote write (exporter/remotewrite) and StatsD
// (exporter/statsd, whose Transport is a socket).
//
// An exporter contributes two things: the encoding of a snapshot into
// requests (the produce function it passes to Pipeline.Export) and a
// Transport that sends one request once (HTTP.Post for the HTTP
// exporters). Everything else exists once, here:
//
//   - the periodic loop (Start, Stop) and the final export of Stop;
//   - the bounded queue of requests that could not be sent (delta
//     temporality, Config.Queue), flushed oldest first before anything
//     newer on every export and on Stop, whether or not the new snapshot
//     has anything to send;
//   - the retry policy (Retry: exponential backoff with full jitter,
//     honouring Retry-After, bounded by the export's deadline) and the
//     per-attempt Timeout;
//   - which answers are retried (StatusRule: RetryAny5xx for remote write
//     and msgpack, RetryOTLP for OTLP), one HTTPError type, one way to
//     read and drain an answer;
//   - error and state reporting: Config.OnError for each failed periodic
//     export, and Config.Logger (log/slog) for changes of state, once
//     each;
//   - Stats, with one meaning per field for every exporter, and the
//     zerostat/* self-metrics of package selfstats.
//
// # Cost
//
// In steady state an export allocates nothing here: requests are handed
// over by pointer, the queue copies a body only when a request fails. The
// counters are atomics, so Stats never waits for an export.
//
// # Concurrency
//
// A Pipeline is safe for concurrent use; exports are serialised. A
// Transport is called from one goroutine at a time.
package push
