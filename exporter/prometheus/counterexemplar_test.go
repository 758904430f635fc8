package prometheus

import (
	"encoding/hex"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// A counter's series (a Count's, a Sum's) carries, in OpenMetrics, the
// newest exemplar of its reservoir (offered by a bound handle's
// RecordExemplar: the otel MeterProvider's counters) on its _total
// sample, with its span's ids, value and time; the protobuf exposition
// the same in its Counter message (Counter.exemplar). A gauge's (an
// up-down sum's, a last value's) carries none, nor a counter shown
// "unknown" for a negative value, nor the text format. Steady state:
// no allocation.
func TestCounterExemplars(t *testing.T) {
	if was := runtime.GOMAXPROCS(0); was < 2 {
		runtime.GOMAXPROCS(2) // both offers kept: the newest is the second
		t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	}
	m := stats.Int64("promcex/m", "", stats.UnitBytes)
	neg := stats.Int64("promcex/neg", "", stats.UnitDimensionless)
	register(t,
		&view.View{Name: "promcex_requests", Measure: m, Aggregation: view.Count()},
		&view.View{Name: "promcex_sent", Measure: m, Aggregation: view.Sum()},
		&view.View{Name: "promcex_inflight", Measure: m, Aggregation: view.UpDownSum()},
		&view.View{Name: "promcex_last", Measure: m, Aggregation: view.LastValue()},
		&view.View{Name: "promcex_neg", Measure: neg, Aggregation: view.Sum()})
	scA := stats.SpanContext{TraceID: [16]byte{0x4b, 0xf9, 0x2f, 0x35, 15: 0x0a}, SpanID: [8]byte{0x00, 0xf0, 0x67, 0xaa, 7: 0x0a}}
	scB := stats.SpanContext{TraceID: [16]byte{0x4b, 0xf9, 0x2f, 0x35, 15: 0x0b}, SpanID: [8]byte{0x00, 0xf0, 0x67, 0xaa, 7: 0x0b}}
	h := m.Bind(nil)
	before := time.Now()
	h.RecordExemplar(2, scA)
	h.Record(5) // no exemplar
	h.RecordExemplar(3, scB)
	neg.Bind(nil).RecordExemplar(-4, scA)
	after := time.Now()

	hd := NewHandler(Options{})
	om := hd.AppendFormat(nil, FormatOpenMetrics)
	ex := ` # {trace_id="4bf92f3500000000000000000000000b",span_id="00f067aa0000000b"} 3.0 `
	for _, want := range []string{`promcex_requests_total 3.0` + ex, `promcex_sent_bytes_total 10.0` + ex} {
		name, _, _ := strings.Cut(want, " ")
		line := strings.TrimSpace(linesWith(om, name+" "))
		sec, err := strconv.ParseFloat(strings.TrimPrefix(line, want), 64)
		if !strings.HasPrefix(line, want) || err != nil || sec < float64(before.UnixNano())/1e9-1e-3 || sec > float64(after.UnixNano())/1e9+1e-3 {
			t.Errorf("line %q; want %q and the record's time", line, want)
		}
	}
	for _, name := range []string{"promcex_inflight_bytes ", "promcex_last_bytes ", "promcex_neg_total "} {
		line := ""
		for l := range strings.SplitSeq(string(om), "\n") {
			if strings.HasPrefix(l, name) {
				line = l
			}
		}
		if line == "" || strings.Contains(line, "#") {
			t.Errorf("%q; want a %sline without an exemplar", line, name)
		}
	}
	if text := linesWith(hd.AppendFormat(nil, FormatText), "promcex_"); strings.Contains(text, "{trace_id") {
		t.Errorf("the text format has exemplars:\n%s", text)
	}

	// The protobuf exposition: the Counter messages (Metric field 3)
	// carry it as their exemplar (field 2); the Gauge ones (field 2) none.
	pb := hd.AppendFormat(nil, FormatProtobuf)
	counters := 0
	for _, fam := range pbFamilies(t, pb) {
		n, _ := one(fam, 1)
		if !strings.HasPrefix(string(n.b), "promcex_") {
			continue
		}
		metric := mustFields(t, fieldsOf(fam, 4)[0].b)
		if g, ok := one(metric, 2); ok {
			if len(fieldsOf(mustFields(t, g.b), 2)) != 0 {
				t.Errorf("%s: a gauge with an exemplar", n.b)
			}
			continue
		}
		c, ok := one(metric, 3)
		if !ok {
			continue // promcex_neg: untyped
		}
		e, ok := one(mustFields(t, c.b), 2)
		if !ok {
			t.Errorf("%s: a Counter without an exemplar", n.b)
			continue
		}
		ef := mustFields(t, e.b)
		labels := map[string]string{}
		for _, lf := range fieldsOf(ef, 1) {
			l := mustFields(t, lf.b)
			k, _ := one(l, 1)
			v, _ := one(l, 2)
			labels[string(k.b)] = string(v.b)
		}
		v, _ := one(ef, 2)
		ts, _ := one(ef, 3)
		sec, _ := one(mustFields(t, ts.b), 1)
		if labels["trace_id"] != hex.EncodeToString(scB.TraceID[:]) || labels["span_id"] != hex.EncodeToString(scB.SpanID[:]) || len(labels) != 2 ||
			f64(v) != 3 || int64(sec.v) < before.Unix() || int64(sec.v) > after.Unix() {
			t.Errorf("%s: exemplar %v %v at %d s", n.b, labels, f64(v), sec.v)
		}
		counters++
	}
	if counters != 2 {
		t.Errorf("%d counters with exemplars in the protobuf exposition; want 2", counters)
	}

	if race.Enabled {
		return // allocations differ under -race
	}
	for _, f := range []Format{FormatOpenMetrics, FormatProtobuf} {
		buf := hd.AppendFormat(nil, f)
		if n := testing.AllocsPerRun(50, func() { buf = hd.AppendFormat(buf[:0], f) }); n != 0 {
			t.Errorf("format %v: %v allocs per exposition; want 0", f, n)
		}
	}
}
