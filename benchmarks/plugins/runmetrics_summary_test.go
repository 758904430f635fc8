package plugins

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	zprom "github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/plugin/runmetrics"
)

// protoFamilies decodes a delimited protobuf exposition with
// client_golang's decoder.
func protoFamilies(t *testing.T, b []byte) families {
	t.Helper()
	dec := expfmt.NewDecoder(bytes.NewReader(b), expfmt.NewFormat(expfmt.TypeProtoDelim))
	out := families{}
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		out[mf.GetName()] = &mf
	}
}

// TestRunmetricsGCSummaryProtobuf: runmetrics' go_gc_duration_seconds in
// the protobuf exposition, decoded by client_golang's own decoder, is the
// MetricFamily client_golang's Go collector sends in the same process with
// GC off between the two reads (name, HELP, TYPE SUMMARY, no labels,
// sample_count, sample_sum and the five quantiles with their values, bit
// for bit) but for the created timestamp, which runmetrics sends (the
// summary's start) and client_golang's const summary has not, and the
// family's unit ("seconds", which zerostat's protobuf exposition gives
// every family named after its unit, client_golang's none). A planted
// difference in a quantile's value is told apart by the same comparison.
func TestRunmetricsGCSummaryProtobuf(t *testing.T) {
	metric.SetTimeout(10 * time.Second)
	defer metric.SetTimeout(0)
	if err := runmetrics.Enable(runmetrics.Options{NoProcess: true}); err != nil {
		t.Fatal(err)
	}
	defer runmetrics.Disable()
	runtime.GC()
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	goc := collectors.NewGoCollector()
	h := zprom.NewHandler(zprom.Options{})
	const attempts = 20
	for i := 1; ; i++ {
		before := collectClientGolang(t, goc)["go_gc_duration_seconds"]
		ours := protoFamilies(t, h.AppendFormat(nil, zprom.FormatProtobuf))["go_gc_duration_seconds"]
		after := collectClientGolang(t, goc)["go_gc_duration_seconds"]
		if ours == nil || before == nil {
			t.Fatalf("go_gc_duration_seconds: ours %v, client_golang's %v", ours, before)
		}
		if len(ours.Metric) != 1 || ours.Metric[0].Summary == nil || ours.Metric[0].Summary.CreatedTimestamp == nil {
			t.Fatalf("ours: %v; want one summary with its created timestamp", ours)
		}
		ours.Metric[0].Summary.CreatedTimestamp = nil
		// The family's unit, which zerostat's exposition gives every
		// family whose name ends in its unit ("seconds"), as its
		// OpenMetrics "# UNIT" line; client_golang's Go collector sets
		// none.
		if ours.GetUnit() != "seconds" {
			t.Errorf("unit %q; want seconds", ours.GetUnit())
		}
		ours.Unit = nil
		if !proto.Equal(before, after) { // a GC cycle despite GC off (the runtime's forced ones): again
			if i == attempts {
				t.Fatalf("client_golang's summary changed between its reads %d times", attempts)
			}
			continue
		}
		if !proto.Equal(ours, before) {
			t.Fatalf("ours:\n%v\nclient_golang's:\n%v", ours, before)
		}
		if n := before.Metric[0].Summary.GetSampleCount(); n < 2 || len(before.Metric[0].Summary.Quantile) != 5 {
			t.Fatalf("client_golang's summary: %v; want 5 quantiles of 2 cycles or more", before)
		}
		q := ours.Metric[0].Summary.Quantile[2]
		q.Value = proto.Float64(q.GetValue() * 2)
		if proto.Equal(ours, before) {
			t.Error("a planted quantile value is not told apart")
		}
		return
	}
}
