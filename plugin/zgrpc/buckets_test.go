package zgrpc_test

import (
	"context"
	"slices"
	"testing"

	"github.com/zerostat/zerostat/plugin/zgrpc"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// buckets returns the bucket counts of the single row of the registered
// view named name.
func buckets(t *testing.T, name string) []int64 {
	t.Helper()
	rows, err := view.RetrieveData(name)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%s: rows %v, err %v; want one row", name, rows, err)
	}
	return rows[0].Data.(*view.DistributionData).CountPerBucket
}

// TestOTelCallDurationBucketsAreUpperInclusive: the rpc.*.call.duration
// views count by OpenTelemetry's rule for explicit buckets, (b[i-1], b[i]]
// (metrics data model, ExplicitBounds; the SDK's "value <= boundary"), so
// a call of exactly a bound's duration is in the bucket that bound closes.
func TestOTelCallDurationBucketsAreUpperInclusive(t *testing.T) {
	vs := append(slices.Clone(zgrpc.OTelServerViews), zgrpc.OTelClientViews...)
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(vs...)
	for _, v := range vs {
		if !v.Aggregation.UpperInclusive {
			t.Errorf("%s: lower-inclusive buckets; want upper-inclusive (view.DistributionUpperInclusive)", v.Name)
		}
	}
	stats.Record(context.Background(), zgrpc.ServerCallDuration.M(0.1), zgrpc.ClientCallDuration.M(0.1))
	// Bounds 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, ...: 0.1s is in bucket 5, (0.075, 0.1].
	want := make([]int64, len(zgrpc.DefaultDurationDistribution.Buckets)+1)
	want[5] = 1
	for _, name := range []string{zgrpc.OTelServerCallDurationView.Name, zgrpc.OTelClientCallDurationView.Name} {
		if got := buckets(t, name); !slices.Equal(got, want) {
			t.Errorf("%s: 0.1s counted in buckets %v; want %v", name, got, want)
		}
	}
}

// TestOpenCensusViewsBucketsAreLowerInclusive: the ocgrpc-named views keep
// OpenCensus's rule, [b[i-1], b[i]), so dashboards migrated from ocgrpc see
// the counts ocgrpc gave them.
func TestOpenCensusViewsBucketsAreLowerInclusive(t *testing.T) {
	all := []*view.View{zgrpc.ServerReceivedMessagesPerRPCView, zgrpc.ServerSentMessagesPerRPCView, zgrpc.ServerStartedRPCsView,
		zgrpc.ClientSentMessagesPerRPCView, zgrpc.ClientReceivedMessagesPerRPCView, zgrpc.ClientStartedRPCsView, zgrpc.ClientServerLatencyView}
	all = append(append(all, zgrpc.DefaultServerViews...), zgrpc.DefaultClientViews...)
	for _, v := range all {
		if v.Aggregation.UpperInclusive {
			t.Errorf("%s: upper-inclusive buckets; want OpenCensus's lower-inclusive view.Distribution", v.Name)
		}
	}
	if err := view.Register(zgrpc.ServerLatencyView); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(zgrpc.ServerLatencyView)
	stats.Record(context.Background(), zgrpc.ServerLatency.M(0.1))
	// Bounds 0.01, 0.05, 0.1, 0.3, ... (ms): 0.1 is in bucket 3, [0.1, 0.3).
	want := make([]int64, len(zgrpc.DefaultMillisecondsDistribution.Buckets)+1)
	want[3] = 1
	if got := buckets(t, zgrpc.ServerLatencyView.Name); !slices.Equal(got, want) {
		t.Errorf("%s: 0.1ms counted in buckets %v; want %v", zgrpc.ServerLatencyView.Name, got, want)
	}
}
