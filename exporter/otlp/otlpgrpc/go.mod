module github.com/zerostat/zerostat/exporter/otlp/otlpgrpc

go 1.26.0

require (
	go.opentelemetry.io/proto/otlp v1.11.1
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260928230214-8a89bd6388cc
	google.golang.org/grpc v1.85.0
)

require (
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.31.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260928230214-8a89bd6388cc // indirect
)

require (
	github.com/zerostat/zerostat v0.0.0
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/protobuf v1.36.12
)

replace github.com/zerostat/zerostat => ../../..
