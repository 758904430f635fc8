package plugins

import (
	"slices"
	"testing"

	"go.opencensus.io/plugin/ochttp"
	ocview "go.opencensus.io/stats/view"

	"github.com/zerostat/zerostat/plugin/zhttp"
	"github.com/zerostat/zerostat/view"
)

// sameView compares a zerostat view with an OpenCensus one field by field.
func sameView(t *testing.T, z *view.View, oc *ocview.View) {
	t.Helper()
	if z.Name != oc.Name || z.Description != oc.Description {
		t.Errorf("view %q %q; OpenCensus %q %q", z.Name, z.Description, oc.Name, oc.Description)
	}
	if z.Measure.Name() != oc.Measure.Name() || z.Measure.Unit() != oc.Measure.Unit() || z.Measure.Description() != oc.Measure.Description() {
		t.Errorf("view %q: measure %q %q %q; OpenCensus %q %q %q", z.Name, z.Measure.Name(), z.Measure.Unit(), z.Measure.Description(),
			oc.Measure.Name(), oc.Measure.Unit(), oc.Measure.Description())
	}
	var zk, ok []string
	for _, k := range z.TagKeys {
		zk = append(zk, k.Name())
	}
	for _, k := range oc.TagKeys {
		ok = append(ok, k.Name())
	}
	if !slices.Equal(zk, ok) {
		t.Errorf("view %q: tag keys %v; OpenCensus %v", z.Name, zk, ok)
	}
	if int(z.Aggregation.Type) != int(oc.Aggregation.Type) || !slices.Equal(z.Aggregation.Buckets, oc.Aggregation.Buckets) {
		t.Errorf("view %q: aggregation %v %v; OpenCensus %v %v", z.Name, z.Aggregation.Type, z.Aggregation.Buckets, oc.Aggregation.Type, oc.Aggregation.Buckets)
	}
}

func TestZHTTPViewsMatchOchttp(t *testing.T) {
	pairs := []struct {
		z  []*view.View
		oc []*ocview.View
	}{
		{zhttp.DefaultServerViews, ochttp.DefaultServerViews},
		{zhttp.DefaultClientViews, ochttp.DefaultClientViews},
		{[]*view.View{zhttp.ClientSentBytesDistribution, zhttp.ClientReceivedBytesDistribution, zhttp.ClientRoundtripLatencyDistribution, zhttp.ClientCompletedCount},
			[]*ocview.View{ochttp.ClientSentBytesDistribution, ochttp.ClientReceivedBytesDistribution, ochttp.ClientRoundtripLatencyDistribution, ochttp.ClientCompletedCount}},
	}
	for _, p := range pairs {
		if len(p.z) != len(p.oc) {
			t.Fatalf("%d views; OpenCensus %d", len(p.z), len(p.oc))
		}
		// Register both sides: each library canonicalises its views
		// (default names, sorted bounds), so compare what it registered.
		if err := view.Register(p.z...); err != nil {
			t.Fatal(err)
		}
		if err := ocview.Register(p.oc...); err != nil {
			t.Fatal(err)
		}
		for i := range p.z {
			sameView(t, p.z[i], p.oc[i])
		}
		view.Unregister(p.z...)
		ocview.Unregister(p.oc...)
	}
	keys := [][2]string{{zhttp.Host.Name(), ochttp.Host.Name()}, {zhttp.StatusCode.Name(), ochttp.StatusCode.Name()},
		{zhttp.Path.Name(), ochttp.Path.Name()}, {zhttp.Method.Name(), ochttp.Method.Name()},
		{zhttp.KeyServerRoute.Name(), ochttp.KeyServerRoute.Name()}, {zhttp.KeyClientMethod.Name(), ochttp.KeyClientMethod.Name()},
		{zhttp.KeyClientPath.Name(), ochttp.KeyClientPath.Name()}, {zhttp.KeyClientStatus.Name(), ochttp.KeyClientStatus.Name()},
		{zhttp.KeyClientHost.Name(), ochttp.KeyClientHost.Name()}}
	for _, k := range keys {
		if k[0] != k[1] {
			t.Errorf("tag key %q; OpenCensus %q", k[0], k[1])
		}
	}
}
