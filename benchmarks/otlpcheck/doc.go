// Package otlpcheck checks zerostat's hand-written OTLP encoder
// (exporter/otlp) against the official Go protobuf types of OTLP
// (go.opentelemetry.io/proto/otlp) and benchmarks it against the official
// path: building those types and marshalling them with protobuf-go.
//
// The tests capture what an otlp.Exporter POSTs to an httptest server on
// 127.0.0.1, decode it with proto.Unmarshal into an
// ExportMetricsServiceRequest, and compare it with proto.Equal to the
// request built independently from view.RetrieveData rows (reference_test.go),
// for cumulative and delta temporality, every aggregation, several tag
// keys, absent tags, with gzip on and off. They also check that our bytes
// are exactly the bytes protobuf-go writes for the message they decode to.
//
// Run the benchmarks with
//
//	go test ./otlpcheck -run '^$' -bench . -benchmem | benchstat -col /impl -
package otlpcheck
