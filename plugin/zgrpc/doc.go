// Package zgrpc instruments gRPC servers and clients with a
// stats.Handler that records OpenCensus ocgrpc's measures, so ocgrpc's
// views (same names, tag keys, units, bucket bounds and bucket rule,
// declared here) keep existing dashboards working, and the OpenTelemetry
// RPC conventions' call durations. Which ones are exported is which views
// you register:
//
//	view.Register(zgrpc.DefaultServerViews...) // ocgrpc's grpc.io/server/...
//	view.Register(zgrpc.OTelServerViews...)    // rpc.server.call.duration
//	srv := grpc.NewServer(grpc.StatsHandler(&zgrpc.ServerHandler{}))
//
//	conn, err := grpc.NewClient(target, grpc.WithStatsHandler(&zgrpc.ClientHandler{}), ...)
//
// It is a module of its own (github.com/zerostat/zerostat/plugin/zgrpc)
// so that gRPC stays out of zerostat's root module.
//
// # Buckets
//
// The ocgrpc-named views (grpc.io/...) count by OpenCensus's rule, as
// ocgrpc's do: view.Distribution, lower-inclusive buckets [b[i-1], b[i]).
// The OpenTelemetry-named views (rpc.server.call.duration,
// rpc.client.call.duration) count by OpenTelemetry's rule for
// explicit-bucket histograms: view.DistributionUpperInclusive,
// upper-inclusive buckets (b[i-1], b[i]], so a call of exactly 0.1s is
// counted in (0.075, 0.1], as the OpenTelemetry SDK counts it.
//
// # Cost
//
// Per RPC: one allocation (the context carrying the RPC's counters, which
// are pooled), two atomic adds per message, and two tagged records
// (stats.RecordWithTags, whose tag sets live on the stack): one at the
// start, one at the end. Measured beside ocgrpc and otelgrpc in
// BenchmarkRPC.
//
// ServerHandler and ClientHandler are safe for concurrent use.
package zgrpc
