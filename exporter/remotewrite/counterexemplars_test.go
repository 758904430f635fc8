package remotewrite

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/faultserver"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestCounterExemplars: a counter's series (a Count's, a Sum's) carries
// the exemplars its reservoir holds (offered by a bound handle's
// RecordExemplar, as the otel MeterProvider's counters record), oldest
// first, with their spans' ids, values and times (in milliseconds); an
// up-down sum's and a last value's series (gauges) carry none, as
// OpenMetrics has none for gauges. They go through the histograms'
// mechanism: a push after a delivered one carries none, a new offer only
// the slot it took (the push's read ended the reservoir's sampling cycle:
// the next offer fills its first slot), and a push refused with 503 loses
// none.
func TestCounterExemplars(t *testing.T) {
	if was := runtime.GOMAXPROCS(0); was < 3 {
		runtime.GOMAXPROCS(3) // a reservoir of 3 slots at least: the offers below are all kept
		t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	}
	p := fmt.Sprintf("rwcex%d", seq.Add(1))
	m := stats.Int64(p+"/m", "", stats.UnitBytes)
	register(t,
		&view.View{Name: p + "/requests", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/sent", Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/inflight", Measure: m, Aggregation: view.UpDownSum(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/last", Measure: m, Aggregation: view.LastValue(), TagKeys: []tag.Key{keyRoute}},
	)
	h := m.Bind(tag.FromContext(ctxWith(t, tag.Upsert(keyRoute, "/a"))))
	scA, scB, scC := span(0xa), span(0xb), span(0xc)
	before := time.Now().UnixMilli()
	h.RecordExemplar(2, scA)
	h.Record(5)                      // no exemplar
	time.Sleep(2 * time.Millisecond) // in another millisecond (inOrder)
	h.RecordExemplar(3, scB)
	after := time.Now().UnixMilli()

	rcv := newCapture(t)
	w := newWriter(t, Options{URL: rcv.URL(), Retry: Retry{Disabled: true}, Logger: slog.New(slog.DiscardHandler)})
	requests, sent := p+"_requests_total{route=/a}", p+"_sent_bytes_total{route=/a}"
	// check compares the exemplars of a push with want (values and spans
	// by series), their times within [from, to].
	check := func(step string, ss []series, from, to int64, want map[string][]exemplar) {
		t.Helper()
		got := exemplarsOf(ss, p)
		for k, xs := range got {
			for i := range xs {
				if xs[i].ts < from || xs[i].ts > to {
					t.Errorf("%s: %s: exemplar %d at %d ms; want within [%d, %d]", step, k, i, xs[i].ts, from, to)
				}
				xs[i].ts = 0
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the push carries\n%v\nwant\n%v", step, got, want)
		}
	}
	both := func(xs ...exemplar) map[string][]exemplar { return map[string][]exemplar{requests: xs, sent: xs} }
	ss, _ := rcv.push(t, w)
	if len(only(ss, p+"_inflight")) != 1 || len(only(ss, p+"_last")) != 1 {
		t.Fatalf("series %v; want one of each view", only(ss, p))
	}
	check("first push", ss, before, after, both(
		exemplar{labels: spanLabels(scA), value: 2},
		exemplar{labels: spanLabels(scB), value: 3}))

	ss, _ = rcv.push(t, w)
	check("a push after a delivered one", ss, 0, 0, map[string][]exemplar{})

	time.Sleep(2 * time.Millisecond)
	before = time.Now().UnixMilli()
	h.RecordExemplar(4, scC)
	after = time.Now().UnixMilli()
	rcv.Set(faultserver.S503)
	if err := w.Push(context.Background()); err == nil {
		t.Fatal("a push refused with 503 succeeded")
	}
	rcv.Set(faultserver.OK)
	ss, _ = rcv.push(t, w)
	check("after a new offer and a refused push", ss, before, after, both(exemplar{labels: spanLabels(scC), value: 4}))
	ss, _ = rcv.push(t, w)
	check("then", ss, 0, 0, map[string][]exemplar{})
}

// inOrder keeps what Prometheus stores of a push's exemplars on one
// series: sorted by time, the first of each millisecond, each after the
// newest a delivered push carried.
func TestCounterExemplarsInOrder(t *testing.T) {
	at := func(ms, ns int64, v float64) *core.Exemplar { return &core.Exemplar{Time: ms*1e6 + ns, Value: v} }
	for _, tc := range []struct {
		name   string
		exs    []*core.Exemplar
		newest int64
		want   []float64
	}{
		{"sorted", []*core.Exemplar{at(12, 0, 2), at(10, 0, 1), at(14, 0, 3)}, -1, []float64{1, 2, 3}},
		{"one per millisecond", []*core.Exemplar{at(10, 500, 2), at(10, 100, 1), at(11, 0, 3), at(11, 999_999, 4)}, -1, []float64{1, 3}},
		{"after the newest delivered", []*core.Exemplar{at(10, 0, 1), at(11, 0, 2), at(12, 0, 3)}, 11, []float64{3}},
		{"none", nil, 5, nil},
	} {
		var got []float64
		for _, x := range inOrder(tc.exs, tc.newest) {
			got = append(got, x.Value)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v; want %v", tc.name, got, tc.want)
		}
	}
}
