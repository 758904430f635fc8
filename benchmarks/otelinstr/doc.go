// Package otelinstr checks that OpenTelemetry's own instrumentation
// (otelhttp, otelgrpc v0.72.0) runs unchanged on zerostat's
// MeterProvider (github.com/zerostat/zerostat/otel), with exact counts.
// It lives in the benchmarks module so the otel module requires only the
// OTel API.
package otelinstr
