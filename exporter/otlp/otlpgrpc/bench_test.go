package otlpgrpc

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"google.golang.org/grpc"

	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// BenchmarkExport: one cumulative export of 1,000 series to a receiver
// on 127.0.0.1 (in this process, so its work is counted too), over
// OTLP/HTTP and OTLP/gRPC: the same encoder and pipeline. Both receivers
// only read the request's bytes (the gRPC one through the pass-through
// codec), so the difference is the transports'.
func BenchmarkExport(b *testing.B) {
	m := stats.Int64("bench/export", "", stats.UnitBytes)
	v := &view.View{Name: "bench/export_count", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}}
	if err := view.Register(v); err != nil {
		b.Fatal(err)
	}
	defer view.Unregister(v)
	for i := range 1000 {
		ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, fmt.Sprintf("/r%d", i)))
		stats.Record(ctx, m.M(1))
	}
	hs := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	defer hs.Close()
	addr := rawServer(b)
	for _, tc := range []struct {
		name string
		opts otlp.Options
	}{
		{"transport=http", otlp.Options{Protocol: otlp.ProtocolHTTP, Endpoint: hs.URL}},
		{"transport=grpc", otlp.Options{Endpoint: "http://" + addr}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e, err := New(tc.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer e.Stop(context.Background())
			ctx := context.Background()
			if err := e.Export(ctx); err != nil { // connect
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := e.Export(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(e.Stats().Bytes / e.Stats().Sent))
		})
	}
}

// rawServer serves the OTLP metrics service on 127.0.0.1 reading each
// request's bytes without decoding them, and returns its address.
func rawServer(b *testing.B) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := grpc.NewServer(grpc.ForceServerCodecV2(rawCodec{}))
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: "opentelemetry.proto.collector.metrics.v1.MetricsService",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Export", Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var req rawMessage
			if err := dec(&req); err != nil {
				return nil, err
			}
			return &rawMessage{}, nil
		}}},
	}, struct{}{})
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(lis) }()
	b.Cleanup(func() { s.Stop(); <-done })
	return lis.Addr().String()
}
