package remotewrite

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/internal/faultserver"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// spanKey carries a stats.SpanContext in a test context, as a tracer's
// context key would.
type spanKey struct{}

// withSpans makes RecordWithOptions read a span from spanKey for the
// test's duration.
func withSpans(t testing.TB) {
	stats.SetSpanContextFunc(func(ctx context.Context) (stats.SpanContext, bool) {
		sc, ok := ctx.Value(spanKey{}).(stats.SpanContext)
		return sc, ok
	})
	t.Cleanup(func() { stats.SetSpanContextFunc(nil) })
}

// span returns a span context whose ids end in b.
func span(b byte) stats.SpanContext {
	return stats.SpanContext{TraceID: [16]byte{0x4b, 0xf9, 0x2f, 0x35, 14: b, 15: 0x01}, SpanID: [8]byte{0x00, 0xf0, 0x67, 0xaa, 7: b}}
}

// recordEx records v in ctx with attachments att (nil: none besides the
// context's span).
func recordEx(t testing.TB, ctx context.Context, m *stats.Float64Measure, v float64, att map[string]interface{}) {
	t.Helper()
	opts := []stats.Options{stats.WithMeasurements(m.M(v))}
	if att != nil {
		opts = append(opts, stats.WithAttachments(att))
	}
	if err := stats.RecordWithOptions(ctx, opts...); err != nil {
		t.Fatal(err)
	}
}

// spanLabels are the exemplar labels of sc, as OpenMetrics writes them
// (exporter/prometheus), sorted by name.
func spanLabels(sc stats.SpanContext) []label {
	return []label{{"span_id", hex.EncodeToString(sc.SpanID[:])}, {"trace_id", hex.EncodeToString(sc.TraceID[:])}}
}

// exemplarsOf returns the exemplars of the series whose names start with
// prefix, by series key.
func exemplarsOf(ss []series, prefix string) map[string][]exemplar {
	out := map[string][]exemplar{}
	for _, s := range only(ss, prefix) {
		if len(s.exemplars) > 0 {
			out[s.key()] = s.exemplars
		}
	}
	return out
}

// recorded returns what zerostat keeps as the exemplar of bucket i of the
// row of view name whose route is route ("": the overflow row), as the
// remote-write exemplar of its span sc (nil: none) must carry it: the
// value, and its time in milliseconds.
func recorded(t testing.TB, name, route string, i int, sc *stats.SpanContext) exemplar {
	t.Helper()
	rows, err := view.RetrieveData(name)
	if err != nil {
		t.Fatalf("RetrieveData(%s): %v", name, err)
	}
	var d *view.DistributionData
	for _, r := range rows {
		if route == "" && r.IsOverflow() || route != "" && len(r.Tags) == 1 && r.Tags[0].Value == route {
			d = r.Data.(*view.DistributionData)
		}
	}
	if d == nil || len(d.ExemplarsPerBucket) <= i || d.ExemplarsPerBucket[i] == nil {
		t.Fatalf("%s: no exemplar in bucket %d of route %q", name, i, route)
	}
	e := d.ExemplarsPerBucket[i]
	x := exemplar{value: e.Value, ts: e.Timestamp.UnixMilli()}
	if sc != nil {
		x.labels = spanLabels(*sc)
	}
	return x
}

// TestExemplars (issue 47, item 3): each histogram bucket series carries
// its bucket's exemplar, the one OpenMetrics exposes on the same series:
// trace_id and span_id labels (lower-case hex) from the span of the
// record's context or an explicit SpanContext attachment, no labels for
// other attachments, the recorded value and time (in milliseconds); the
// overflow series' buckets too; no other series. A push after a delivered
// one carries only the exemplars that changed.
func TestExemplars(t *testing.T) {
	p := fmt.Sprintf("rwex%d", seq.Add(1))
	lat := stats.Float64(p+"/latency", "", stats.UnitMilliseconds)
	hist := &view.View{Name: p + "/latency", Measure: lat, Aggregation: view.DistributionUpperInclusive(10, 100), TagKeys: []tag.Key{keyRoute}}
	capped := &view.View{Name: p + "/capped", Measure: lat, Aggregation: view.Distribution(10), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 1}
	register(t, hist, capped,
		&view.View{Name: p + "/requests", Measure: lat, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/total", Measure: lat, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
	)
	withSpans(t)
	scA, scB, scC, scD, scE := span(0xa), span(0xb), span(0xc), span(0xd), span(0xe)
	ctx := ctxWith(t, tag.Upsert(keyRoute, "/a"))
	inSpan := func(sc stats.SpanContext) context.Context { return context.WithValue(ctx, spanKey{}, sc) }
	recordEx(t, inSpan(scA), lat, 7, nil)                                                  // le=10, replaced before the push
	recordEx(t, inSpan(scB), lat, 3, nil)                                                  // le=10, the latest
	recordEx(t, ctx, lat, 50, map[string]interface{}{stats.AttachmentKeySpanContext: scC}) // le=100, explicit attachment
	stats.Record(ctx, lat.M(20))                                                           // le=100, no exemplar: 50 stays
	recordEx(t, ctx, lat, 500, map[string]interface{}{"user": "u"})                        // +Inf: no labels
	// A second route: its own series in the histogram, the overflow
	// series in the capped view.
	other := context.WithValue(ctxWith(t, tag.Upsert(keyRoute, "/b")), spanKey{}, scE)
	recordEx(t, other, lat, 5, nil)

	rcv := newCapture(t)
	w := newWriter(t, Options{URL: rcv.URL()})
	name := p + "_latency_milliseconds_bucket"
	cappedName := p + "_capped_milliseconds_bucket"
	want := map[string][]exemplar{
		name + "{le=10.0,route=/a}":  {recorded(t, hist.Name, "/a", 0, &scB)},
		name + "{le=100.0,route=/a}": {recorded(t, hist.Name, "/a", 1, &scC)},
		name + "{le=+Inf,route=/a}":  {recorded(t, hist.Name, "/a", 2, nil)},
		name + "{le=10.0,route=/b}":  {recorded(t, hist.Name, "/b", 0, &scE)},
		// Bucket rule of view.Distribution: 3 is in [-Inf, 10), 50 and
		// 500 in [10, +Inf).
		cappedName + "{le=10.0,route=/a}":                            {recorded(t, capped.Name, "/a", 0, &scB)},
		cappedName + "{le=+Inf,route=/a}":                            {recorded(t, capped.Name, "/a", 1, nil)},
		cappedName + "{le=10.0," + promname.OverflowLabel + "=true}": {recorded(t, capped.Name, "", 0, &scE)},
	}
	if x := want[name+"{le=10.0,route=/a}"][0]; x.value != 3 || x.ts == 0 {
		t.Fatalf("zerostat keeps %+v for le=10", x)
	}
	ss, _ := rcv.push(t, w)
	if got := exemplarsOf(ss, p); !reflect.DeepEqual(got, want) {
		t.Errorf("first push carries\n%v\nwant\n%v", got, want)
	}

	// Delivered: the next push carries none, though every bucket still
	// has its exemplar.
	ss, _ = rcv.push(t, w)
	if got := exemplarsOf(ss, p); len(got) != 0 {
		t.Errorf("a push after a delivered one carries %v; want none", got)
	}
	if n := len(only(ss, name)); n != 6 {
		t.Fatalf("%d bucket series; want 6", n)
	}

	// A new exemplar in one bucket: only that bucket carries it.
	recordEx(t, inSpan(scD), lat, 8, nil)
	want = map[string][]exemplar{
		name + "{le=10.0,route=/a}":       {recorded(t, hist.Name, "/a", 0, &scD)},
		cappedName + "{le=10.0,route=/a}": {recorded(t, capped.Name, "/a", 0, &scD)},
	}
	ss, _ = rcv.push(t, w)
	if got := exemplarsOf(ss, p); !reflect.DeepEqual(got, want) {
		t.Errorf("after a record into le=10, the push carries\n%v\nwant\n%v", got, want)
	}
}

// TestExemplarsUntilDelivered: an exemplar is carried by every push until
// one carrying it is delivered whole, as stale markers are: pushes refused
// with 503 lose none, and AppendWriteRequest, which sends nothing,
// consumes none. A series' exemplar state goes with the series: once the
// stale markers of an unregistered view are delivered, the Writer holds
// nothing of it.
func TestExemplarsUntilDelivered(t *testing.T) {
	p := fmt.Sprintf("rwex503_%d", seq.Add(1))
	lat := stats.Float64(p+"/latency", "", stats.UnitSeconds)
	v := &view.View{Name: p + "/latency", Measure: lat, Aggregation: view.Distribution(1), TagKeys: []tag.Key{keyRoute}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	withSpans(t)
	sc := span(0x5)
	recordEx(t, context.WithValue(ctxWith(t, tag.Upsert(keyRoute, "/a")), spanKey{}, sc), lat, 0.5, nil)
	want := map[string][]exemplar{p + "_latency_seconds_bucket{le=1.0,route=/a}": {recorded(t, v.Name, "/a", 0, &sc)}}

	rcv := newCapture(t)
	w := newWriter(t, Options{URL: rcv.URL(), Retry: Retry{Disabled: true}, Logger: slog.New(slog.DiscardHandler)})
	for range 2 {
		ss, err := decodeWriteRequest(w.AppendWriteRequest(nil, 1))
		if got := exemplarsOf(ss, p); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("AppendWriteRequest carries %v (%v); want %v", got, err, want)
		}
	}
	rcv.Set(faultserver.S503)
	for range 2 {
		if err := w.Push(context.Background()); err == nil {
			t.Fatal("a push refused with 503 succeeded")
		}
	}
	rcv.Set(faultserver.OK)
	if ss, _ := rcv.push(t, w); !reflect.DeepEqual(exemplarsOf(ss, p), want) {
		t.Fatalf("the push after two refused ones carries %v; want %v", exemplarsOf(ss, p), want)
	}
	if ss, _ := rcv.push(t, w); len(exemplarsOf(ss, p)) != 0 {
		t.Errorf("a delivered exemplar sent again: %v", exemplarsOf(ss, p))
	}

	view.Unregister(v)
	ss, _ := rcv.push(t, w) // the stale markers, delivered
	stale := 0
	for _, s := range only(ss, p) {
		if math.Float64bits(s.value) == StaleNaN && len(s.exemplars) == 0 {
			stale++
		}
	}
	if stale != 4 || len(exemplarsOf(ss, p)) != 0 { // 2 buckets, _sum, _count
		t.Errorf("%d stale markers, exemplars %v; want 4 markers without exemplars", stale, exemplarsOf(ss, p))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range w.fams {
		if strings.HasPrefix(f.fam.Name, p) {
			t.Errorf("the Writer still holds %s (%d series) after its stale markers were delivered", f.fam.Name, len(f.sent))
		}
	}
}
