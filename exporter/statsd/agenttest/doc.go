// Package agenttest checks exporter/statsd against real StatsD agents, in a
// module of its own so that their code never enters zerostat's go.mod:
//
//   - prometheus/statsd_exporter v0.31.0, built from its Go module (this
//     module's go.mod names it as a tool; scripts/build-statsd-exporter.sh
//     builds and caches it, as scripts/build-collector.sh does the
//     Collector) and run on 127.0.0.1: every view type in both dialects
//     and both distribution modes, over UDP, TCP and a Unix datagram
//     socket; its /metrics must hold exactly what was recorded
//     (TestStatsdExporter, TestStatsdExporterQuantiles);
//   - Etsy statsd 0.9.0, the npm package (scripts/install-etsy-statsd.sh),
//     plain StatsD over UDP, read back through its admin interface and a
//     backend that writes what it flushed (TestEtsyStatsd);
//   - the OpenCensus Datadog exporter's stats code run on OpenCensus
//     v0.24.0 with datadog-go v5.9.1's client, against the golden file
//     exporter/statsd checks its OpenCensusDatadog mode with
//     (TestGoldenIsTheDatadogExporters).
//
// `make statsd-agents` runs it (and `make test`). The tests start their
// agents on loopback addresses and stop them by PID when they end.
package agenttest
