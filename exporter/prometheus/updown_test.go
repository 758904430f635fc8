package prometheus

import (
	"context"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// An up-down sum is a gauge to Prometheus (promname.MetricOf). A gauge may
// be negative: its "# TYPE ... gauge" line must not disappear when it is.
func TestUpDownSumNegativeKeepsGaugeType(t *testing.T) {
	m := stats.Int64("updown_neg/queue", "queue length", stats.UnitDimensionless)
	register(t, &view.View{Name: "updown_neg/queue", Measure: m, Aggregation: view.UpDownSum()})
	h := NewHandler(Options{})

	stats.Record(context.Background(), m.M(3))
	pos := string(h.AppendFormat(nil, FormatText))
	if !strings.Contains(pos, "# TYPE updown_neg_queue gauge\n") {
		t.Fatalf("positive: no gauge type line:\n%s", linesWith([]byte(pos), "updown_neg"))
	}
	stats.Record(context.Background(), m.M(-5))
	for _, f := range []Format{FormatText, FormatOpenMetrics} {
		out := string(h.AppendFormat(nil, f))
		if !strings.Contains(out, "# TYPE updown_neg_queue gauge\n") {
			t.Errorf("%v, value -2 (3 then -5): the gauge lost its # TYPE (and # HELP) line:\n%s", f, linesWith([]byte(out), "updown_neg"))
		}
	}
}
