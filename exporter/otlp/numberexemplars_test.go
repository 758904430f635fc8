package otlp

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// numberExemplars returns the exemplars (value@span byte) of the
// NumberDataPoints of the request's metrics (a Sum's or a Gauge's), by
// metric name, checking that each is field 5 and that the fields of the
// point come in field-number order (the oneof value last), as
// protobuf-go writes them.
func numberExemplars(t *testing.T, body []byte) map[string][]string {
	t.Helper()
	req, err := parseMsg(body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, m := range req.sub(1)[0].sub(2)[0].sub(2) {
		for _, num := range []uint64{5, 7} { // Gauge, Sum
			for _, data := range m.sub(num) {
				for _, f := range data[1] {
					var order []uint64
					for b := f.data; len(b) > 0; {
						g, rest, err := nextField(b)
						if err != nil {
							t.Fatal(err)
						}
						order = append(order, g.num)
						b = rest
					}
					// By field number, the value (as_double 4 or as_int 6,
					// a oneof) last.
					last := order[len(order)-1]
					if !slices.IsSorted(order[:len(order)-1]) || last != 4 && last != 6 || slices.Contains(order[:len(order)-1], 4) {
						t.Errorf("%s: point fields in order %v", m.str(1), order)
					}
					p, _ := parseMsg(f.data)
					for _, x := range p.sub(5) {
						v, _ := x.f64(3)
						span := byte(0)
						if ids := x[4]; len(ids) > 0 {
							span = ids[0].data[7]
						}
						out[m.str(1)] = append(out[m.str(1)], fmt.Sprintf("%v@%d", v, span))
					}
				}
			}
		}
	}
	return out
}

// A Count's, a Sum's and a LastValue's point carry the exemplars of
// their series' reservoir (a bound handle's RecordExemplar: the otel
// MeterProvider's counters, up-down counters and gauges) as
// NumberDataPoint.exemplars, in slot order; with delta temporality only
// those offered in the interval (an up-down sum, cumulative, all of
// them); an exponential view's point none.
func TestNumberExemplars(t *testing.T) {
	if was := runtime.GOMAXPROCS(0); was < 2 {
		runtime.GOMAXPROCS(2) // reservoirs of 2 slots at least: both offers kept
		t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	}
	m := stats.Int64("otlpnex/m", "", stats.UnitBytes)
	vs := []*view.View{
		{Name: "otlpnex/count", Measure: m, Aggregation: view.Count()},
		{Name: "otlpnex/sum", Measure: m, Aggregation: view.Sum()},
		{Name: "otlpnex/updown", Measure: m, Aggregation: view.UpDownSum()},
		{Name: "otlpnex/last", Measure: m, Aggregation: view.LastValue()},
		{Name: "otlpnex/exp", Measure: m, Aggregation: view.ExponentialDistribution(160, 20)},
	}
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
	cum, err := NewEncoder(Cumulative, exporter.Resource{})
	if err != nil {
		t.Fatal(err)
	}
	del, err := NewEncoder(Delta, exporter.Resource{})
	if err != nil {
		t.Fatal(err)
	}
	span := func(b byte) stats.SpanContext {
		return stats.SpanContext{TraceID: [16]byte{15: b}, SpanID: [8]byte{7: b}}
	}
	h := m.Bind(nil)
	h.RecordExemplar(2, span(1))
	h.Record(5)
	h.RecordExemplar(3, span(2))
	all := func(xs ...string) map[string][]string {
		return map[string][]string{"otlpnex/count": xs, "otlpnex/sum": xs, "otlpnex/updown": xs, "otlpnex/last": xs}
	}
	body := cum.Encode(time.Now())
	if got, want := numberExemplars(t, body), all("2@1", "3@2"); !reflect.DeepEqual(got, want) {
		t.Errorf("cumulative: %v; want %v", got, want)
	}
	if p := decodeRequest(t, body).metrics["otlpnex/exp"].points[""]; p == nil || p.exemplars != 0 {
		t.Errorf("the exponential point: %+v; want one without exemplars", p)
	}
	if got, want := numberExemplars(t, del.Encode(time.Now())), all("2@1", "3@2"); !reflect.DeepEqual(got, want) {
		t.Errorf("delta, first interval: %v; want %v", got, want)
	}
	// A new offer: the reads above ended the sampling cycle, so it takes
	// the first slot.
	h.RecordExemplar(4, span(3))
	if got, want := numberExemplars(t, cum.Encode(time.Now())), all("4@3", "3@2"); !reflect.DeepEqual(got, want) {
		t.Errorf("cumulative, after another offer: %v; want %v", got, want)
	}
	want := all("4@3")
	want["otlpnex/updown"] = []string{"4@3", "3@2"} // cumulative in a delta export
	if got := numberExemplars(t, del.Encode(time.Now())); !reflect.DeepEqual(got, want) {
		t.Errorf("delta, second interval: %v; want %v", got, want)
	}
}
