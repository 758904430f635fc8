package zgrpc_test

import (
	"log"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/zerostat/zerostat/plugin/zgrpc"
	"github.com/zerostat/zerostat/view"
)

// Serving and calling with ocgrpc's default views (TestRealTraffic runs
// this set-up against a real server).
func Example() {
	if err := view.Register(slices.Concat(zgrpc.DefaultServerViews, zgrpc.DefaultClientViews)...); err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer(grpc.StatsHandler(&zgrpc.ServerHandler{}))
	defer srv.Stop()
	conn, err := grpc.NewClient("127.0.0.1:50051", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(&zgrpc.ClientHandler{}))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
}
