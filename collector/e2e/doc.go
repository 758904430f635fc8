// Package e2e runs the test Collector (cmd/otelcol-zerostat, built by
// scripts/build-collector.sh and cached) as a process between zerostat's
// exporters and real backends; it has tests only.
package e2e
