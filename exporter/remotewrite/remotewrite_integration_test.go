package remotewrite

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/testbackend"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// backendFixture registers every aggregation with values whose sums are
// exact in binary and short in decimal (VictoriaMetrics stores values as
// decimals), and returns the namespace its series are pushed under.
func backendFixture(t *testing.T) string {
	p := fmt.Sprintf("rwit%d", seq.Add(1))
	lat := stats.Float64(p+"/latency", "Latency", stats.UnitSeconds)
	size := stats.Int64(p+"/size", "Size", stats.UnitBytes)
	register(t,
		&view.View{Name: p + "/requests", Measure: lat, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, keyMethod}},
		&view.View{Name: p + "/latency", Measure: lat, Aggregation: view.Distribution(0.125, 0.5, 2), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/size", Measure: size, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/last", Measure: size, Aggregation: view.LastValue(), TagKeys: []tag.Key{keyRoute}},
	)
	for i, r := range []string{"/a", "/b", `/c"\`} {
		ctx := ctxWith(t, tag.Upsert(keyRoute, r), tag.Upsert(keyMethod, []string{"GET", "", "PUT"}[i]))
		for j := range 3 + i {
			stats.Record(ctx, lat.M(float64(j)*0.25+float64(i)), size.M(int64(1000*i+j)))
		}
	}
	return "rwit_" + p
}

// expected decodes what the writer sends (series key → value).
func expected(t *testing.T, w *Writer, prefix string) map[string]float64 {
	ss, err := decodeWriteRequest(w.AppendWriteRequest(nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, s := range only(ss, prefix) {
		out[s.key()] = s.value
	}
	if len(out) < 20 {
		t.Fatalf("only %d series to push", len(out))
	}
	return out
}

func keyOf(metric map[string]string) string {
	var ls []label
	for k, v := range metric {
		ls = append(ls, label{k, v})
	}
	return series{labels: ls}.key()
}

// Remote write to a real Prometheus (--web.enable-remote-write-receiver):
// its query API returns exactly the series and values pushed.
func TestBackendRemoteWritePrometheus(t *testing.T) {
	ns := backendFixture(t)
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{RemoteWriteReceiver: true})
	log := newStateLog()
	w := newWriter(t, Options{URL: prom.URL + "/api/v1/write", Namespace: "rwit", MaxSeriesPerRequest: 7,
		ConstLabels: map[string]string{"job": "zerostat", "instance": "test"}, Logger: log.logger})
	want := expected(t, w, ns)
	if err := w.Push(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := prom.WaitQuery(t, fmt.Sprintf(`{__name__=~"%s_.+"}`, ns), len(want), 10*time.Second)
	if len(got) != len(want) {
		t.Errorf("%d series; pushed %d", len(got), len(want))
	}
	for _, s := range got {
		k := keyOf(s.Metric)
		wv, ok := want[k]
		if !ok {
			t.Errorf("unexpected series %s", k)
			continue
		}
		if s.Value != strconv.FormatFloat(wv, 'f', -1, 64) {
			t.Errorf("%s = %s; pushed %v", k, s.Value, wv)
		}
	}
	if st := w.Stats(); st.DroppedPoints != 0 || st.Requests < 2 || log.String() != "" {
		t.Errorf("stats %+v, state changes %q", st, log.String())
	}
}

// Remote write to a real VictoriaMetrics: /api/v1/export returns exactly
// the series, values and timestamps pushed.
func TestBackendRemoteWriteVictoriaMetrics(t *testing.T) {
	ns := backendFixture(t)
	vm := testbackend.StartVictoriaMetrics(t)
	w := newWriter(t, Options{URL: vm.URL + "/api/v1/write", Namespace: "rwit",
		ConstLabels: map[string]string{"job": "zerostat"}})
	want := expected(t, w, ns)
	before := time.Now().UnixMilli()
	if err := w.Push(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := time.Now().UnixMilli()
	got := vm.WaitExport(t, fmt.Sprintf(`{__name__=~"%s_.+"}`, ns), len(want), 10*time.Second)
	if len(got) != len(want) {
		t.Errorf("%d series; pushed %d", len(got), len(want))
	}
	var ts int64
	for _, s := range got {
		k := keyOf(s.Metric)
		wv, ok := want[k]
		if !ok {
			t.Errorf("unexpected series %s", k)
			continue
		}
		if len(s.Values) != 1 || s.Values[0] != wv {
			t.Errorf("%s = %v; pushed %v", k, s.Values, wv)
		}
		if len(s.Timestamps) != 1 || s.Timestamps[0] < before || s.Timestamps[0] > after || (ts != 0 && s.Timestamps[0] != ts) {
			t.Errorf("%s: timestamps %v; want one, the push's, in [%d, %d]", k, s.Timestamps, before, after)
		} else {
			ts = s.Timestamps[0]
		}
	}
	if st := w.Stats(); st.DroppedPoints != 0 || st.Points != uint64(w.total()) {
		t.Errorf("stats %+v", st)
	}
}
