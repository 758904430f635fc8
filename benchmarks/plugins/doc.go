// Package plugins checks zerostat's plug-ins against the libraries they
// replace, registered side by side in one process so they cannot drift:
// plugin/zhttp's views against OpenCensus ochttp's (names, descriptions,
// measures, units, tag keys, aggregations, bucket bounds), and
// plugin/runmetrics' Prometheus names and types against client_golang's
// Go and process collectors. Its benchmarks measure the cost per request
// of zhttp.Handler beside ochttp, otelhttp and promhttp.
package plugins
