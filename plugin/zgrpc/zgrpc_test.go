package zgrpc_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	grpcstats "google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/zerostat/zerostat/internal/viewtest"
	"github.com/zerostat/zerostat/plugin/zgrpc"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// ended signals each server RPC's End, after zgrpc's handler (registered
// first) recorded it: the test waits for events, never for time.
type ended struct{ ch chan struct{} }

func (e *ended) TagRPC(ctx context.Context, _ *grpcstats.RPCTagInfo) context.Context { return ctx }
func (e *ended) HandleRPC(_ context.Context, s grpcstats.RPCStats) {
	if _, ok := s.(*grpcstats.End); ok {
		e.ch <- struct{}{}
	}
}
func (e *ended) TagConn(ctx context.Context, _ *grpcstats.ConnTagInfo) context.Context { return ctx }
func (e *ended) HandleConn(context.Context, grpcstats.ConnStats)                       {}

func sum(t *testing.T, name, row string) float64 {
	t.Helper()
	rows, _ := view.RetrieveData(name)
	for _, r := range rows {
		var vals []string
		for _, tg := range r.Tags {
			vals = append(vals, tg.Key.Name()+"="+tg.Value)
		}
		if strings.Join(vals, ",") == row {
			return r.Data.(*view.DistributionData).Sum()
		}
	}
	t.Fatalf("%s: no row %q", name, row)
	return 0
}

// TestRealTraffic serves the gRPC health service on 127.0.0.1 and checks
// exact counts per method and status, unary and streaming, with errors
// and cancellations, on both sides.
func TestRealTraffic(t *testing.T) {
	vs := append(append(append(append([]*view.View{zgrpc.ServerStartedRPCsView, zgrpc.ClientStartedRPCsView,
		zgrpc.ServerSentMessagesPerRPCView, zgrpc.ClientReceivedMessagesPerRPCView},
		zgrpc.DefaultServerViews...), zgrpc.DefaultClientViews...), zgrpc.OTelServerViews...), zgrpc.OTelClientViews...)
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(vs...)

	sig := &ended{ch: make(chan struct{}, 64)}
	srv := grpc.NewServer(grpc.StatsHandler(&zgrpc.ServerHandler{}), grpc.StatsHandler(sig))
	hs := health.NewServer()
	hs.SetServingStatus("svc", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(&zgrpc.ClientHandler{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	rpcs := 0
	for i := 0; i < 5; i++ {
		if _, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: "svc"}); err != nil {
			t.Fatal(err)
		}
		rpcs++
	}
	for i := 0; i < 2; i++ {
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: "nope"})
		if status.Code(err) != codes.NotFound {
			t.Fatalf("unknown service: got %v; want NotFound", err)
		}
		rpcs++
	}
	for i := 0; i < 3; i++ { // server streaming, cancelled by the client after one message
		sctx, scancel := context.WithCancel(ctx)
		stream, err := client.Watch(sctx, &healthpb.HealthCheckRequest{Service: "svc"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
		scancel()
		if _, err := stream.Recv(); status.Code(err) != codes.Canceled {
			t.Fatalf("cancelled watch: got %v; want Canceled", err)
		}
		rpcs++
	}
	for i := 0; i < rpcs; i++ {
		select {
		case <-sig.ch:
		case <-ctx.Done():
			t.Fatalf("%d of %d server RPCs ended", i, rpcs)
		}
	}

	const check, watch = "grpc.health.v1.Health/Check", "grpc.health.v1.Health/Watch"
	viewtest.Equal(t, "grpc.io/server/completed_rpcs", map[string]float64{
		"grpc_server_method=" + check + ",grpc_server_status=OK":        5,
		"grpc_server_method=" + check + ",grpc_server_status=NOT_FOUND": 2,
		"grpc_server_method=" + watch + ",grpc_server_status=CANCELLED": 3,
	})
	viewtest.Equal(t, "grpc.io/client/completed_rpcs", map[string]float64{
		"grpc_client_method=" + check + ",grpc_client_status=OK":        5,
		"grpc_client_method=" + check + ",grpc_client_status=NOT_FOUND": 2,
		"grpc_client_method=" + watch + ",grpc_client_status=CANCELLED": 3,
	})
	viewtest.Equal(t, "grpc.io/server/started_rpcs", map[string]float64{
		"grpc_server_method=" + check: 7, "grpc_server_method=" + watch: 3})
	viewtest.Equal(t, "grpc.io/client/started_rpcs", map[string]float64{
		"grpc_client_method=" + check: 7, "grpc_client_method=" + watch: 3})
	// Each watch sent one message and each client received it: the sums of
	// the per-RPC message counts are exact.
	if got := sum(t, "grpc.io/server/sent_messages_per_rpc", "grpc_server_method="+watch); got != 3 {
		t.Errorf("server sent messages of the watches: got %v; want 3", got)
	}
	if got := sum(t, "grpc.io/client/received_messages_per_rpc", "grpc_client_method="+check); got != 5 {
		t.Errorf("client received messages of the checks: got %v; want 5", got)
	}
	viewtest.Equal(t, "rpc.server.call.duration", map[string]float64{
		"rpc.method=" + check + ",rpc.response.status_code=OK,rpc.system.name=grpc":        5,
		"rpc.method=" + check + ",rpc.response.status_code=NOT_FOUND,rpc.system.name=grpc": 2,
		"rpc.method=" + watch + ",rpc.response.status_code=CANCELLED,rpc.system.name=grpc": 3,
	})
	viewtest.Equal(t, "rpc.client.call.duration", map[string]float64{
		"rpc.method=" + check + ",rpc.response.status_code=OK,rpc.system.name=grpc":                             5,
		"error.type=NOT_FOUND,rpc.method=" + check + ",rpc.response.status_code=NOT_FOUND,rpc.system.name=grpc": 2,
		"error.type=CANCELLED,rpc.method=" + watch + ",rpc.response.status_code=CANCELLED,rpc.system.name=grpc": 3,
	})
}

// TestUnknownMethod calls a method the server does not have. gRPC calls
// a server's stats handlers for its TagRPC but not its Begin or End: the
// server records nothing, so a client cannot add rows by calling made-up
// methods. The client records the call once; its status is UNIMPLEMENTED,
// except that gRPC-go (v1.85) now and then, when the server's trailers-only
// answer arrives before the client has sent its headers, delivers the
// client's End with a nil Error (events Begin, InTrailer, OutHeader, End)
// although the call returns Unimplemented: the client then records OK, as
// ocgrpc and otelgrpc, which read the same field, would.
func TestUnknownMethod(t *testing.T) {
	vs := []*view.View{zgrpc.ServerStartedRPCsView, zgrpc.ServerCompletedRPCsView, zgrpc.ClientStartedRPCsView, zgrpc.ClientCompletedRPCsView}
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(vs...)
	srv := grpc.NewServer(grpc.StatsHandler(&zgrpc.ServerHandler{}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(&zgrpc.ClientHandler{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := conn.Invoke(ctx, "/no.Such/Method", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("unknown method: got %v; want Unimplemented", err)
	}
	// The server saw the call (TagRPC) before answering it; it records
	// nothing, now or later (no Begin or End will come).
	viewtest.Equal(t, "grpc.io/server/started_rpcs", map[string]float64{})
	viewtest.Equal(t, "grpc.io/server/completed_rpcs", map[string]float64{})
	viewtest.Equal(t, "grpc.io/client/started_rpcs", map[string]float64{"grpc_client_method=no.Such/Method": 1})
	got := viewtest.Rows(t, "grpc.io/client/completed_rpcs")
	unimpl, ok := got["grpc_client_method=no.Such/Method,grpc_client_status=UNIMPLEMENTED"], got["grpc_client_method=no.Such/Method,grpc_client_status=OK"]
	if len(got) != 1 || unimpl+ok != 1 {
		t.Errorf("client completed_rpcs: got %v; want one call, UNIMPLEMENTED (or OK, see above)", got)
	}
}

// TestTagsPropagate checks that tags in a client's context reach the
// server's records, as with ocgrpc.
func TestTagsPropagate(t *testing.T) {
	tenant := tag.MustNewKey("tenant")
	v := &view.View{Name: "test/server_by_tenant", Measure: zgrpc.ServerLatency, Aggregation: view.Count(), TagKeys: []tag.Key{tenant, zgrpc.KeyServerStatus}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	sig := &ended{ch: make(chan struct{}, 8)}
	srv := grpc.NewServer(grpc.StatsHandler(&zgrpc.ServerHandler{}), grpc.StatsHandler(sig))
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(&zgrpc.ClientHandler{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tctx, err := tag.New(ctx, tag.Upsert(tenant, "acme"))
	if err != nil {
		t.Fatal(err)
	}
	client := healthpb.NewHealthClient(conn)
	for _, c := range []context.Context{tctx, tctx, ctx} {
		if _, err := client.Check(c, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-sig.ch:
		case <-ctx.Done():
			t.Fatal("server RPC did not end")
		}
	}
	viewtest.Equal(t, "test/server_by_tenant", map[string]float64{
		"grpc_server_status=OK,tenant=acme": 2, "grpc_server_status=OK": 1})
}
