package remotewrite

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/internal/promnative"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/internal/snappy"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// expView registers an exponential view of at most maxSize buckets and
// scale maxScale, tagged by route, records vals[route] into it and
// returns the family name (without a namespace).
func expView(t testing.TB, maxSize, maxScale int32, vals map[string][]float64) string {
	p := fmt.Sprintf("rwexp%d", seq.Add(1))
	m := stats.Float64(p+"/lat", "Latency", stats.UnitSeconds)
	register(t, &view.View{Name: p + "/lat", Measure: m, Aggregation: view.ExponentialDistribution(maxSize, maxScale), TagKeys: []tag.Key{keyRoute}})
	for r, vs := range vals {
		ctx := ctxWith(t, tag.Upsert(keyRoute, r))
		for _, v := range vs {
			stats.Record(ctx, m.M(v))
		}
	}
	return p + "_lat_seconds"
}

// nativeOf is the native histogram of vals recorded into one histogram
// (maxSize, maxScale): the reference the pushed one must equal.
func nativeOf(t testing.TB, maxSize, maxScale int32, vals []float64) *promnative.Histogram {
	h := exphist.MustNew(maxSize, maxScale)
	for _, v := range vals {
		h.Record(v)
	}
	var s exphist.Snapshot
	h.Snapshot(&s)
	var nh promnative.Histogram
	if err := nh.Set(&s); err != nil {
		t.Fatal(err)
	}
	return &nh
}

// An exponential view is pushed as one native histogram per series (the
// "histograms" field): named after the family, labels sorted, the
// conversion's schema, zero count, spans and deltas, count, sum, the
// push's timestamp, reset hint UNKNOWN (left out), HISTOGRAM metadata.
// Edge input: only zeros, only negatives, scale 20 sent at schema 8, no
// counted value (only NaN), and a scale below -4, which is not sent.
func TestNativeHistograms(t *testing.T) {
	vals := map[string][]float64{
		"/a":     {1, 2, 3, 3, 100, 0.001},
		"/zeros": {0, 0, 0},
		"/neg":   {-1, -4, -4},
		"/fine":  {1, 1.0001, 1.0002},
		"/nan":   {math.NaN()},
	}
	name := "rwexp_" + expView(t, 160, 20, vals)
	low := "rwexp_" + expView(t, 160, -5, map[string][]float64{"/low": {3}})
	w := newWriter(t, Options{Namespace: "rwexp", ConstLabels: map[string]string{"job": "j"}})
	ss, md, err := decodeWriteRequestMeta(w.AppendWriteRequest(nil, 1234))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*series{}
	for _, s := range only(ss, name) {
		got[s.key()] = &s
	}
	if len(got) != len(vals) {
		t.Fatalf("%d series; want %d: %v", len(got), len(vals), got)
	}
	for r, vs := range vals {
		k := name + "{job=j,route=" + r + "}"
		s := got[k]
		if s == nil || s.hist == nil {
			t.Errorf("%s: not a native histogram series: %+v", k, s)
			continue
		}
		want := nativeOf(t, 160, 20, vs)
		if !reflect.DeepEqual(norm(s.hist), norm(want)) || s.ts != 1234 || s.resetHint != 0 {
			t.Errorf("%s: %+v at %d, hint %d; want %+v at 1234", k, s.hist, s.ts, s.resetHint, want)
		}
	}
	if h := got[name+"{job=j,route=/fine}"].hist; h.Schema != 8 {
		t.Errorf("scale 20 sent at schema %d; want 8", h.Schema)
	}
	if h := got[name+"{job=j,route=/nan}"].hist; h.Count != 0 || !h.Empty() {
		t.Errorf("only NaN: %+v; want an empty histogram", h)
	}
	if n := len(only(ss, low)); n != 0 {
		t.Errorf("scale -5: %d series sent; want none", n)
	}
	var meta *metadata
	for i := range md {
		if md[i].name == name {
			meta = &md[i]
		}
	}
	if meta == nil || meta.typ != metaHistogram || meta.help != "Latency" || meta.unit != "seconds" {
		t.Errorf("metadata %+v", meta)
	}
}

// norm makes empty slices nil, for comparison.
func norm(h *promnative.Histogram) promnative.Histogram {
	c := *h
	if len(c.PositiveSpans) == 0 {
		c.PositiveSpans, c.PositiveDeltas = nil, nil
	}
	if len(c.NegativeSpans) == 0 {
		c.NegativeSpans, c.NegativeDeltas = nil, nil
	}
	return c
}

// A native histogram series that goes away gets Prometheus's stale
// marker in native form: a histogram whose sum is StaleNaN; under
// NoNativeHistograms its three series get float stale markers.
func TestNativeHistogramStaleMarker(t *testing.T) {
	for _, noNative := range []bool{false, true} {
		p := fmt.Sprintf("rwexpst%d", seq.Add(1))
		m := stats.Float64(p+"/lat", "", stats.UnitSeconds)
		v := &view.View{Name: p + "/lat", Measure: m, Aggregation: view.ExponentialDistribution(0, 0), TagKeys: []tag.Key{keyRoute}}
		if err := view.Register(v); err != nil {
			t.Fatal(err)
		}
		stats.Record(ctxWith(t, tag.Upsert(keyRoute, "/a")), m.M(2))
		rcv := newCapture(t)
		w := newWriter(t, Options{URL: rcv.URL(), NoNativeHistograms: noNative})
		want := map[bool]int{false: 1, true: 3}[noNative]
		if ss, _ := rcv.push(t, w); len(only(ss, p)) != want {
			t.Fatalf("noNative %v: first push: %d series", noNative, len(only(ss, p)))
		}
		view.Unregister(v)
		ss, _ := rcv.push(t, w)
		got := only(ss, p)
		stale := 0
		for _, s := range got {
			if math.Float64bits(s.value) == StaleNaN && (s.hist == nil) == noNative && (s.hist == nil || s.hist.Count == 0) {
				stale++
			}
		}
		if len(got) != want || stale != want {
			t.Errorf("noNative %v: after unregistering: %+v; want %d stale markers", noNative, got, want)
		}
		if ss, _ = rcv.push(t, w); len(only(ss, p)) != 0 {
			t.Errorf("noNative %v: stale markers sent twice", noNative)
		}
	}
}

// Encoding exponential series allocates nothing in steady state.
func TestNativeEncodeAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	vals := map[string][]float64{}
	for r := range 300 {
		for i := range 40 {
			vals[fmt.Sprint("/r", r)] = append(vals[fmt.Sprint("/r", r)], float64(i*r)+0.125, -float64(i))
		}
	}
	name := expView(t, 160, 20, vals)
	w := newWriter(t, Options{})
	var z snappy.Encoder
	var zb []byte
	w.encode(1)
	if allocs := testing.AllocsPerRun(10, func() {
		w.encode(1)
		zb = z.Append(zb[:0], w.pb)
	}); allocs != 0 {
		t.Errorf("%v allocs per encode; want 0", allocs)
	}
	ss, err := decodeWriteRequest(w.AppendWriteRequest(nil, 1))
	if err != nil || len(only(ss, name)) != 300 {
		t.Errorf("%d series (%v); want 300", len(only(ss, name)), err)
	}
}

// With NoNativeHistograms an exponential view is sent as the text
// exposition shows it: "+Inf" bucket, _sum, _count, exactly its series
// and values; its stale markers are those three series'.
func TestNoNativeHistogramsSendsTheTextSeries(t *testing.T) {
	name := expView(t, 160, 20, map[string][]float64{"/a": {1, 2, -3, 0}, "/b": {0.5}})
	opts := prometheus.Options{Namespace: "x", ConstLabels: map[string]string{"env": "e"}}
	exp := parseExposition(t, string(prometheus.NewHandler(opts).AppendFormat(nil, prometheus.FormatText)))
	w := newWriter(t, Options{Namespace: "x", ConstLabels: opts.ConstLabels, NoNativeHistograms: true})
	ss, err := decodeWriteRequest(w.AppendWriteRequest(nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range only(ss, "x_"+name) {
		if s.hist != nil {
			t.Errorf("%s: a native histogram", s.key())
		}
		got[s.key()] = string(promname.AppendFloat(nil, s.value))
	}
	want := map[string]string{}
	for k, v := range exp {
		if strings.HasPrefix(k, "x_"+name) {
			want[k] = v
		}
	}
	if len(want) != 6 || !reflect.DeepEqual(got, want) {
		t.Errorf("sent %v; the exposition has %v", got, want)
	}
	if k := "x_" + name + "_bucket{env=e,le=+Inf,route=/a}"; got[k] != "4" {
		t.Errorf("%s = %q; want 4", k, got[k])
	}
}
