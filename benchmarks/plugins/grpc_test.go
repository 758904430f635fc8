package plugins

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"go.opencensus.io/plugin/ocgrpc"
	ocview "go.opencensus.io/stats/view"
	octag "go.opencensus.io/tag"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	grpcstats "google.golang.org/grpc/stats"
	"google.golang.org/grpc/test/bufconn"

	"github.com/zerostat/zerostat/plugin/zgrpc"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func TestZGRPCViewsMatchOcgrpc(t *testing.T) {
	z := append(append([]*view.View{}, zgrpc.DefaultServerViews...), zgrpc.DefaultClientViews...)
	z = append(z, zgrpc.ServerStartedRPCsView, zgrpc.ServerReceivedMessagesPerRPCView, zgrpc.ServerSentMessagesPerRPCView,
		zgrpc.ClientStartedRPCsView, zgrpc.ClientSentMessagesPerRPCView, zgrpc.ClientReceivedMessagesPerRPCView, zgrpc.ClientServerLatencyView)
	oc := append(append([]*ocview.View{}, ocgrpc.DefaultServerViews...), ocgrpc.DefaultClientViews...)
	oc = append(oc, ocgrpc.ServerStartedRPCsView, ocgrpc.ServerReceivedMessagesPerRPCView, ocgrpc.ServerSentMessagesPerRPCView,
		ocgrpc.ClientStartedRPCsView, ocgrpc.ClientSentMessagesPerRPCView, ocgrpc.ClientReceivedMessagesPerRPCView, ocgrpc.ClientServerLatencyView)
	if err := view.Register(z...); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(z...)
	if err := ocview.Register(oc...); err != nil {
		t.Fatal(err)
	}
	defer ocview.Unregister(oc...)
	for i := range z {
		sameView(t, z[i], oc[i])
	}
	for _, k := range [][2]string{{zgrpc.KeyServerMethod.Name(), ocgrpc.KeyServerMethod.Name()}, {zgrpc.KeyServerStatus.Name(), ocgrpc.KeyServerStatus.Name()},
		{zgrpc.KeyClientMethod.Name(), ocgrpc.KeyClientMethod.Name()}, {zgrpc.KeyClientStatus.Name(), ocgrpc.KeyClientStatus.Name()}} {
		if k[0] != k[1] {
			t.Errorf("tag key %q; OpenCensus %q", k[0], k[1])
		}
	}
}

// noopHandler is a stats.Handler that does nothing: what gRPC itself
// spends on building stats events once any handler is installed.
type noopHandler struct{}

func (noopHandler) TagRPC(ctx context.Context, _ *grpcstats.RPCTagInfo) context.Context   { return ctx }
func (noopHandler) HandleRPC(context.Context, grpcstats.RPCStats)                         {}
func (noopHandler) TagConn(ctx context.Context, _ *grpcstats.ConnTagInfo) context.Context { return ctx }
func (noopHandler) HandleConn(context.Context, grpcstats.ConnStats)                       {}

// BenchmarkRPC is one unary gRPC call (the health service's Check) over an
// in-memory connection (bufconn), instrumented on both sides. Rows are
// BenchmarkRPC/impl=<impl>: floor (no stats handler), noop_handler (a
// handler that does nothing: gRPC's own cost of stats events), zerostat
// (zgrpc, ocgrpc's default views and the OTel views registered),
// opencensus (ocgrpc, its default views; its tracing at the default
// sampler), otel (otelgrpc with an SDK MeterProvider, no-op tracer).
func BenchmarkRPC(b *testing.B) {
	if err := view.Register(slices.Concat(zgrpc.DefaultServerViews, zgrpc.DefaultClientViews, zgrpc.OTelServerViews, zgrpc.OTelClientViews)...); err != nil {
		b.Fatal(err)
	}
	if err := ocview.Register(append(append([]*ocview.View{}, ocgrpc.DefaultServerViews...), ocgrpc.DefaultClientViews...)...); err != nil {
		b.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tp := noop.NewTracerProvider()
	impls := []struct {
		name   string
		server []grpc.ServerOption
		client []grpc.DialOption
	}{
		{"floor", nil, nil},
		{"noop_handler", []grpc.ServerOption{grpc.StatsHandler(noopHandler{})}, []grpc.DialOption{grpc.WithStatsHandler(noopHandler{})}},
		{"zerostat", []grpc.ServerOption{grpc.StatsHandler(&zgrpc.ServerHandler{})}, []grpc.DialOption{grpc.WithStatsHandler(&zgrpc.ClientHandler{})}},
		{"opencensus", []grpc.ServerOption{grpc.StatsHandler(&ocgrpc.ServerHandler{})}, []grpc.DialOption{grpc.WithStatsHandler(&ocgrpc.ClientHandler{})}},
		{"otel", []grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler(otelgrpc.WithMeterProvider(mp), otelgrpc.WithTracerProvider(tp)))},
			[]grpc.DialOption{grpc.WithStatsHandler(otelgrpc.NewClientHandler(otelgrpc.WithMeterProvider(mp), otelgrpc.WithTracerProvider(tp)))}},
	}
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			ln := bufconn.Listen(1 << 20)
			srv := grpc.NewServer(impl.server...)
			hs := health.NewServer()
			hs.SetServingStatus("svc", healthpb.HealthCheckResponse_SERVING)
			healthpb.RegisterHealthServer(srv, hs)
			go srv.Serve(ln)
			defer srv.Stop()
			opts := append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) })}, impl.client...)
			conn, err := grpc.NewClient("passthrough:///bufnet", opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			client := healthpb.NewHealthClient(conn)
			req := &healthpb.HealthCheckRequest{Service: "svc"}
			ctx := context.Background()
			if _, err := client.Check(ctx, req); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := client.Check(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestOcgrpcClientTagsReachZgrpcServer: an ocgrpc client's tags (its
// grpc-tags-bin header) reach a zgrpc server's records.
func TestOcgrpcClientTagsReachZgrpcServer(t *testing.T) {
	tenant := tag.MustNewKey("tenant")
	v := &view.View{Name: "test/oc_to_z", Measure: zgrpc.ServerLatency, Aggregation: view.Count(), TagKeys: []tag.Key{tenant}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	ln := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(grpc.StatsHandler(&zgrpc.ServerHandler{}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(ln)
	defer srv.Stop()
	conn, err := grpc.NewClient("passthrough:///bufnet", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }),
		grpc.WithStatsHandler(&ocgrpc.ClientHandler{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, err := octag.New(context.Background(), octag.Upsert(octag.MustNewKey("tenant"), "acme"))
	if err != nil {
		t.Fatal(err)
	}
	// The server records at its End, which may follow the client's
	// return: poll the rows, bounded by the test's own deadline.
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if rows, _ := view.RetrieveData("test/oc_to_z"); len(rows) == 1 {
			if len(rows[0].Tags) != 1 || rows[0].Tags[0].Value != "acme" {
				t.Fatalf("row %v; want tenant=acme", rows[0].Tags)
			}
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no server row within 30 s")
}
