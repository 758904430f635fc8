// Package plugins checks zerostat's plug-ins against the libraries they
// replace, registered side by side in one process so they cannot drift:
// plugin/zhttp's views against OpenCensus ochttp's (names, descriptions,
// measures, units, tag keys, aggregations, bucket bounds), plugin/zhttp's
// OpenTelemetry-named views against otelhttp's metrics on one fixed
// traffic over HTTP/1.1 and HTTP/2 (attribute sets, counts, body sizes,
// metadata; zhttp_otelhttp_test.go, which lists the differences that
// remain), and
// plugin/runmetrics' Prometheus families against client_golang's Go and
// process collectors on one workload: names, types, help, labels and
// values (runmetrics_cg_test.go, which lists the differences that remain
// and why). Its benchmarks measure the cost per request of zhttp.Handler
// beside ochttp, otelhttp and promhttp.
package plugins
