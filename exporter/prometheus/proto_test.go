package prometheus

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/internal/promnative"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// A minimal protobuf reader for the tests: a message is its fields in
// order (the benchmarks module decodes the exposition with client_model
// and Prometheus's own parser).
type pbField struct {
	num int
	v   uint64 // varint, fixed64
	b   []byte // length-delimited
}

func pbFields(b []byte) ([]pbField, error) {
	var out []pbField
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("bad key")
		}
		b = b[n:]
		f := pbField{num: int(key >> 3)}
		switch key & 7 {
		case 0:
			f.v, n = binary.Uvarint(b)
			if n <= 0 {
				return nil, errors.New("bad varint")
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return nil, errors.New("short fixed64")
			}
			f.v, b = binary.LittleEndian.Uint64(b), b[8:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return nil, errors.New("bad length")
			}
			f.b, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return nil, fmt.Errorf("wire type %d", key&7)
		}
		out = append(out, f)
	}
	return out, nil
}

func mustFields(t testing.TB, b []byte) []pbField {
	t.Helper()
	fs, err := pbFields(b)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// pbFamilies splits a delimited exposition into its MetricFamily messages.
func pbFamilies(t testing.TB, b []byte) [][]pbField {
	t.Helper()
	var out [][]pbField
	for len(b) > 0 {
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			t.Fatalf("bad length prefix")
		}
		out = append(out, mustFields(t, b[n:n+int(l)]))
		b = b[n+int(l):]
	}
	return out
}

func fieldsOf(fs []pbField, num int) []pbField {
	var out []pbField
	for _, f := range fs {
		if f.num == num {
			out = append(out, f)
		}
	}
	return out
}

func one(fs []pbField, num int) (pbField, bool) {
	g := fieldsOf(fs, num)
	if len(g) == 0 {
		return pbField{}, false
	}
	return g[0], true
}

func f64(f pbField) float64 { return math.Float64frombits(f.v) }

// toText renders a decoded protobuf exposition as zerostat's text format
// spells it (labels in the order sent, "le" as OpenMetrics spells it, a
// classic histogram's "+Inf" bucket from its count, a native one's
// count alone), so that a test can compare it with FormatText's output.
func toText(t testing.TB, b []byte) string {
	t.Helper()
	var out []byte
	types := map[uint64]string{0: "counter", 1: "gauge", 3: "untyped", 4: "histogram"}
	for _, fam := range pbFamilies(t, b) {
		nameF, _ := one(fam, 1)
		name := string(nameF.b)
		if help, ok := one(fam, 2); ok {
			out = append(out, "# HELP "+name+" "...)
			out = append(promname.AppendHelp(out, string(help.b), false), '\n')
		}
		typ, _ := one(fam, 3)
		out = append(out, "# TYPE "+name+" "+types[typ.v]+"\n"...)
		for _, mf := range fieldsOf(fam, 4) {
			m := mustFields(t, mf.b)
			var lb []byte
			for _, lf := range fieldsOf(m, 1) {
				l := mustFields(t, lf.b)
				n, _ := one(l, 1)
				v, _ := one(l, 2)
				if len(lb) > 0 {
					lb = append(lb, ',')
				}
				lb = append(lb, string(n.b)+`="`...)
				lb = append(promname.AppendLabelValue(lb, string(v.b)), '"')
			}
			for _, k := range []int{2, 3, 5} { // gauge, counter, untyped
				if vf, ok := one(m, k); ok {
					v, _ := one(mustFields(t, vf.b), 1)
					out = appendName(out, name, lb)
					out = append(promname.AppendFloat(out, f64(v)), '\n')
				}
			}
			hf, ok := one(m, 7)
			if !ok {
				continue
			}
			h := mustFields(t, hf.b)
			count, _ := one(h, 1)
			sum, _ := one(h, 2)
			bucket := func(le string, n uint64) {
				out = append(out, name+"_bucket{"...)
				if len(lb) > 0 {
					out = append(append(out, lb...), ',')
				}
				out = append(out, `le="`+le+`"} `...)
				out = append(appendCount(out, int64(n), false), '\n')
			}
			for _, bf := range fieldsOf(h, 3) {
				bk := mustFields(t, bf.b)
				c, _ := one(bk, 1)
				u, _ := one(bk, 2)
				if !math.IsInf(f64(u), 1) {
					bucket(string(promname.AppendOpenMetricsFloat(nil, f64(u))), c.v)
				}
			}
			bucket("+Inf", count.v)
			out = appendName(out, name+"_sum", lb)
			out = append(promname.AppendFloat(out, f64(sum)), '\n')
			out = appendName(out, name+"_count", lb)
			out = append(appendCount(out, int64(count.v), false), '\n')
		}
	}
	return string(out)
}

// familiesText returns the families of a text exposition whose name has
// prefix.
func familiesText(text []byte, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(string(text), "\n") {
		name := strings.TrimPrefix(strings.TrimPrefix(l, "# HELP "), "# TYPE ")
		if strings.HasPrefix(name, prefix) {
			b.WriteString(l)
		}
	}
	return b.String()
}

// The protobuf exposition carries every family, series, label and value
// the text format has: rendered back as text, it is the text exposition
// (the fixture has every aggregation, constant labels, escapes, an absent
// tag, a negative sum, an infinite value).
func TestProtobufCarriesTheText(t *testing.T) {
	p := fixture(t)
	neg := stats.Float64(p+"/neg", "", stats.UnitDimensionless)
	register(t, &view.View{Name: p + "/neg", Measure: neg, Aggregation: view.Sum()})
	stats.Record(context.Background(), neg.M(-2))
	h := NewHandler(Options{ConstLabels: map[string]string{"env": "prod", "z.z": `q"`}})
	want := familiesText(h.AppendFormat(nil, FormatText), p+"_")
	got := familiesText([]byte(toText(t, h.AppendFormat(nil, FormatProtobuf))), p+"_")
	if got != want || !strings.Contains(want, "untyped") {
		t.Errorf("protobuf as text:\n%s\ntext:\n%s", got, want)
	}
}

// expFixture registers an exponential view (scale at most maxScale) with
// a tag and records vals under route "/a", and returns its family name.
func expFixture(t testing.TB, maxSize, maxScale int32, vals ...float64) string {
	fixtureSeq++
	p := fmt.Sprintf("exp%d", fixtureSeq)
	m := stats.Float64(p+"/lat", "Latency", stats.UnitMilliseconds)
	register(t, &view.View{Name: p + "/lat", Measure: m, Aggregation: view.ExponentialDistribution(maxSize, maxScale), TagKeys: []tag.Key{keyRoute}})
	ctx := ctxWith(t, tag.Upsert(keyRoute, "/a"))
	for _, v := range vals {
		stats.Record(ctx, m.M(v))
	}
	return p + "_lat_milliseconds"
}

// familyNamed returns the decoded family called name.
func familyNamed(t testing.TB, b []byte, name string) []pbField {
	t.Helper()
	for _, fam := range pbFamilies(t, b) {
		if n, _ := one(fam, 1); string(n.b) == name {
			return fam
		}
	}
	return nil
}

// nativeOf decodes the native histogram of a Histogram message.
func nativeOf(t testing.TB, h []pbField) (promnative.Histogram, bool) {
	t.Helper()
	var nh promnative.Histogram
	schema, ok := one(h, 5)
	if !ok {
		return nh, false
	}
	nh.Schema = int32(schema.v>>1) ^ -int32(schema.v&1)
	c, _ := one(h, 1)
	s, _ := one(h, 2)
	z, _ := one(h, 7)
	nh.Count, nh.Sum, nh.ZeroCount = c.v, f64(s), z.v
	if zt, ok := one(h, 6); !ok || f64(zt) != 0 {
		t.Errorf("zero threshold %v, %v; want 0, written", f64(zt), ok)
	}
	spans := func(num int) []promnative.Span {
		var out []promnative.Span
		for _, f := range fieldsOf(h, num) {
			sp := mustFields(t, f.b)
			o, _ := one(sp, 1)
			l, _ := one(sp, 2)
			out = append(out, promnative.Span{Offset: int32(o.v>>1) ^ -int32(o.v&1), Length: uint32(l.v)})
		}
		return out
	}
	deltas := func(num int) []int64 {
		var out []int64
		for _, f := range fieldsOf(h, num) {
			for b := f.b; len(b) > 0; {
				v, n := binary.Uvarint(b)
				b = b[n:]
				out = append(out, int64(v>>1)^-int64(v&1))
			}
		}
		return out
	}
	nh.NegativeSpans, nh.NegativeDeltas = spans(9), deltas(10)
	nh.PositiveSpans, nh.PositiveDeltas = spans(12), deltas(13)
	return nh, true
}

// An exponential view is a native histogram in the protobuf exposition
// (schema, zero threshold 0, zero count, spans and deltas as
// client_golang encodes them, count, sum, created timestamp), and in the
// text formats what client_golang writes for a native histogram without
// classic buckets: a "+Inf" bucket, _sum and _count.
func TestExponentialExposition(t *testing.T) {
	before := time.Now()
	name := expFixture(t, 160, 3, 1, 2, 3, 3, -1, 0)
	h := NewHandler(Options{})
	fam := familyNamed(t, h.AppendFormat(nil, FormatProtobuf), name)
	if typ, _ := one(fam, 3); fam == nil || typ.v != pbHistogram {
		t.Fatalf("family %s: %v", name, fam)
	}
	ms := fieldsOf(fam, 4)
	if len(ms) != 1 {
		t.Fatalf("%d metrics; want 1", len(ms))
	}
	m := mustFields(t, ms[0].b)
	hf, _ := one(m, 7)
	hist := mustFields(t, hf.b)
	got, ok := nativeOf(t, hist)
	// Scale 3: 1 is Prometheus bucket 0, 2 bucket 8, 3 bucket 13
	// (log2(3)*8 = 12.7); -1 negative bucket 0; 0 the zero bucket.
	want := promnative.Histogram{Schema: 3, ZeroCount: 1, Count: 6, Sum: 8,
		PositiveSpans:  []promnative.Span{{Offset: 0, Length: 1}, {Offset: 7, Length: 1}, {Offset: 4, Length: 1}},
		PositiveDeltas: []int64{1, 0, 1},
		NegativeSpans:  []promnative.Span{{Offset: 0, Length: 1}}, NegativeDeltas: []int64{1}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("native histogram %+v; want %+v", got, want)
	}
	if len(fieldsOf(hist, 3)) != 0 {
		t.Errorf("classic buckets sent")
	}
	ct, ok := one(hist, 15)
	if !ok {
		t.Fatal("no created timestamp")
	}
	sec, _ := one(mustFields(t, ct.b), 1)
	if int64(sec.v) < before.Unix()-1 || int64(sec.v) > time.Now().Unix() {
		t.Errorf("created %d s; want the view's start", sec.v)
	}
	text := linesWith(h.AppendFormat(nil, FormatText), name)
	wantText := strings.ReplaceAll(`# HELP NAME Latency
# TYPE NAME histogram
NAME_bucket{route="/a",le="+Inf"} 6
NAME_sum{route="/a"} 8
NAME_count{route="/a"} 6
`, "NAME", name)
	if text != wantText {
		t.Errorf("text:\n%s\nwant:\n%s", text, wantText)
	}
	// OpenMetrics: integers for the bucket and count; no _sum, as for a
	// classic histogram of negative values (OpenMetrics forbids it).
	om := linesWith(h.AppendFormat(nil, FormatOpenMetrics), name)
	wantOM := strings.ReplaceAll(`# HELP NAME Latency
# TYPE NAME histogram
# UNIT NAME milliseconds
NAME_bucket{route="/a",le="+Inf"} 6
NAME_count{route="/a"} 6
NAME_created{route="/a"} `, "NAME", name)
	if !strings.HasPrefix(om, wantOM) {
		t.Errorf("OpenMetrics:\n%s\nwant:\n%s", om, wantOM)
	}
}

// Edge input: no counted value (only NaN and +Inf) gives client_golang's
// no-op span; only zeros the zero count; only negatives negative
// buckets; scale 20 is lowered to schema 8; a scale below -4 has no
// native form: the series is left out of the protobuf exposition (and
// its family with it when it has no other), not out of the text.
func TestExponentialEdgeInput(t *testing.T) {
	native := func(name string) []promnative.Histogram {
		t.Helper()
		var out []promnative.Histogram
		fam := familyNamed(t, NewHandler(Options{}).AppendFormat(nil, FormatProtobuf), name)
		for _, mf := range fieldsOf(fam, 4) {
			hf, _ := one(mustFields(t, mf.b), 7)
			nh, ok := nativeOf(t, mustFields(t, hf.b))
			if !ok {
				t.Errorf("%s: no schema", name)
			}
			out = append(out, nh)
		}
		return out
	}
	nonFinite := expFixture(t, 160, 20, math.NaN(), math.Inf(1))
	if got := native(nonFinite); len(got) != 1 || !reflect.DeepEqual(got[0], promnative.Histogram{Schema: 8,
		PositiveSpans: []promnative.Span{{}}}) {
		t.Errorf("no counted value: %+v; want schema 8, count 0, one no-op span", got)
	}
	zeros := expFixture(t, 160, 20, 0, 0)
	if got := native(zeros); len(got) != 1 || got[0].ZeroCount != 2 || got[0].Count != 2 || got[0].PositiveSpans != nil {
		t.Errorf("zeros: %+v", got)
	}
	// -1 is bucket 0, -4 bucket 2 (schema 0): the empty bucket 1 between
	// them stays in the span.
	negs := expFixture(t, 160, 0, -1, -4, -4)
	if got := native(negs); len(got) != 1 || !reflect.DeepEqual(got[0], promnative.Histogram{Count: 3, Sum: -9,
		NegativeSpans: []promnative.Span{{Offset: 0, Length: 3}}, NegativeDeltas: []int64{1, -1, 2}}) {
		t.Errorf("negatives: %+v", got)
	}
	fine := expFixture(t, 160, 20, 1, 1.0001)
	if got := native(fine); len(got) != 1 || got[0].Schema != 8 || !reflect.DeepEqual(got[0].PositiveSpans, []promnative.Span{{Offset: 0, Length: 2}}) {
		t.Errorf("scale 20: %+v; want schema 8, buckets 0 and 1", got)
	}
	low := expFixture(t, 160, -5, 3)
	h := NewHandler(Options{})
	if fam := familyNamed(t, h.AppendFormat(nil, FormatProtobuf), low); fam != nil {
		t.Errorf("scale -5: family sent: %v", fam)
	}
	if text := linesWith(h.AppendFormat(nil, FormatText), low); !strings.Contains(text, low+`_count{route="/a"} 1`) {
		t.Errorf("scale -5: text:\n%s", text)
	}
	atMin := expFixture(t, 160, -4, 3)
	if got := native(atMin); len(got) != 1 || got[0].Schema != -4 {
		t.Errorf("scale -4: %+v", got)
	}
}

func TestNegotiateProtobuf(t *testing.T) {
	for h, want := range map[string]Format{
		// Prometheus 2.42 with --enable-feature=native-histograms
		// (logged by TestBackendPrometheusNativeHistograms).
		"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1": FormatProtobuf,
		"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2":                                                                                              FormatProtobuf,
		"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75":                                          FormatProtobuf,
		`application/vnd.google.protobuf; proto="io.prometheus.client.MetricFamily"; encoding="delimited"`:                                                                                                                                       FormatProtobuf,
		"application/vnd.google.protobuf": FormatText, // no proto, no encoding
		"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text":                                                       FormatText,
		"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0":                                              FormatText,
		"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.1,application/openmetrics-text;version=1.0.0": FormatOpenMetrics,
		"*/*": FormatText,
	} {
		if got, _ := Negotiate(h); got != want {
			t.Errorf("Negotiate(%q) = %v; want %v", h, got, want)
		}
	}
	if race.Enabled {
		return
	}
	h := "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
	if n := testing.AllocsPerRun(100, func() { Negotiate(h) }); n != 0 {
		t.Errorf("Negotiate: %v allocs; want 0", n)
	}
}

// ServeHTTP serves the protobuf exposition to Prometheus's Accept
// header, with its Content-Type, gzipped when asked.
func TestServeHTTPProtobuf(t *testing.T) {
	name := expFixture(t, 160, 20, 5)
	srv := httptest.NewServer(NewHandler(Options{}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,*/*;q=0.1")
	resp, err := http.DefaultClient.Do(req) // net/http asks for gzip and unzips
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != ContentTypeProtobuf {
		t.Errorf("Content-Type %q", ct)
	}
	if !resp.Uncompressed {
		t.Errorf("not gzipped")
	}
	if familyNamed(t, body, name) == nil {
		t.Errorf("family %s missing", name)
	}
}

// Classic histograms carry their buckets' exemplars (labels, value,
// timestamp) as client_golang does, the "+Inf" bucket written only for
// its exemplar.
func TestProtobufExemplars(t *testing.T) {
	m := stats.Float64("pbex/latency", "", stats.UnitMilliseconds)
	register(t, &view.View{Name: "pbex_latency", Measure: m, Aggregation: view.DistributionUpperInclusive(10, 100)})
	sc := stats.SpanContext{TraceID: [16]byte{0x4b, 15: 0x01}, SpanID: [8]byte{0xf0, 7: 0xba}}
	at := time.Now()
	if err := stats.RecordWithOptions(context.Background(), stats.WithMeasurements(m.M(7)),
		stats.WithAttachments(map[string]interface{}{stats.AttachmentKeySpanContext: sc})); err != nil {
		t.Fatal(err)
	}
	stats.Record(context.Background(), m.M(50))
	if err := stats.RecordWithOptions(context.Background(), stats.WithMeasurements(m.M(500)),
		stats.WithAttachments(map[string]interface{}{"user": "u"})); err != nil {
		t.Fatal(err)
	}
	fam := familyNamed(t, NewHandler(Options{}).AppendFormat(nil, FormatProtobuf), "pbex_latency_milliseconds")
	hf, _ := one(mustFields(t, fieldsOf(fam, 4)[0].b), 7)
	buckets := fieldsOf(mustFields(t, hf.b), 3)
	if len(buckets) != 3 {
		t.Fatalf("%d buckets; want 10, 100 and +Inf (for its exemplar)", len(buckets))
	}
	type ex struct {
		labels map[string]string
		value  float64
	}
	var got []*ex
	for _, bf := range buckets {
		e, ok := one(mustFields(t, bf.b), 3)
		if !ok {
			got = append(got, nil)
			continue
		}
		ef := mustFields(t, e.b)
		x := &ex{labels: map[string]string{}}
		for _, lf := range fieldsOf(ef, 1) {
			l := mustFields(t, lf.b)
			n, _ := one(l, 1)
			v, _ := one(l, 2)
			x.labels[string(n.b)] = string(v.b)
		}
		v, _ := one(ef, 2)
		x.value = f64(v)
		ts, _ := one(ef, 3)
		sec, _ := one(mustFields(t, ts.b), 1)
		if d := int64(sec.v) - at.Unix(); d < 0 || d > 2 {
			t.Errorf("exemplar time %d s; recorded at %d", sec.v, at.Unix())
		}
		got = append(got, x)
	}
	want := []*ex{
		{labels: map[string]string{"trace_id": hex.EncodeToString(sc.TraceID[:]), "span_id": hex.EncodeToString(sc.SpanID[:])}, value: 7},
		nil,
		{labels: map[string]string{}, value: 500},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("exemplars %+v %+v %+v; want %+v %+v", got[0], got[1], got[2], want[0], want[2])
	}
}

// The overflow series of a view past its cardinality limit has its
// labels in the protobuf exposition too.
func TestProtobufOverflow(t *testing.T) {
	fixtureSeq++
	p := fmt.Sprintf("pbovf%d", fixtureSeq)
	m := stats.Int64(p+"/m", "", "By")
	register(t, &view.View{Name: p + "/e", Measure: m, Aggregation: view.ExponentialDistribution(0, 0), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 1})
	for _, r := range []string{"/a", "/b", "/c"} {
		stats.Record(ctxWith(t, tag.Upsert(keyRoute, r)), m.M(4))
	}
	h := NewHandler(Options{ConstLabels: map[string]string{"zone": "z"}})
	got := familiesText([]byte(toText(t, h.AppendFormat(nil, FormatProtobuf))), p+"_")
	want := familiesText(h.AppendFormat(nil, FormatText), p+"_")
	if got != want || !strings.Contains(got, `otel_metric_overflow="true",zone="z"} 2`) {
		t.Errorf("protobuf as text:\n%s\ntext:\n%s", got, want)
	}
}

// In steady state a protobuf scrape allocates nothing, exponential
// series included.
func TestProtobufAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	registry10k(t)
	fixtureSeq++
	p := fmt.Sprintf("pballoc%d", fixtureSeq)
	m := stats.Float64(p+"/m", "", stats.UnitMilliseconds)
	register(t, &view.View{Name: p + "/e", Measure: m, Aggregation: view.ExponentialDistribution(160, 20), TagKeys: []tag.Key{keyRoute}})
	for r := range 200 {
		ctx := ctxWith(t, tag.Upsert(keyRoute, fmt.Sprintf("/r%d", r)))
		for i := range 50 {
			stats.Record(ctx, m.M(float64(i*r)+0.25))
		}
	}
	h := NewHandler(Options{ConstLabels: map[string]string{"env": "test"}})
	var n int
	allocs := testing.AllocsPerRun(20, func() { n, _ = h.WriteFormat(io.Discard, FormatProtobuf) })
	if allocs != 0 {
		t.Errorf("%v allocs per scrape; want 0", allocs)
	}
	if n < 10000*20 {
		t.Errorf("wrote only %d bytes", n)
	}
	if bytes.Count(h.AppendFormat(nil, FormatProtobuf), []byte(p+"_e_milliseconds")) != 1 {
		t.Errorf("exponential family missing")
	}
}

// Scrapes in every format while recorders fill an exponential view (its
// scale going down as values spread) are race-free, and the last one
// counts every record, in its native histogram and in the text.
func TestExponentialConcurrentScrapes(t *testing.T) {
	name := expFixture(t, 20, 20)
	m := stats.Float64(strings.TrimSuffix(name, "_lat_milliseconds")+"/lat", "Latency", stats.UnitMilliseconds)
	h := NewHandler(Options{})
	start := make(chan struct{})
	var wg sync.WaitGroup
	const recorders, records = 4, 2000
	ctx := ctxWith(t, tag.Upsert(keyRoute, "/a"))
	for g := range recorders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range records {
				stats.Record(ctx, m.M(math.Ldexp(1+float64(i%7)/8, (g*records+i)%60-30)))
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		for range 20 {
			for _, f := range []Format{FormatProtobuf, FormatText, FormatOpenMetrics} {
				_, _ = h.WriteFormat(io.Discard, f)
			}
		}
	}()
	close(start)
	wg.Wait()
	fam := familyNamed(t, h.AppendFormat(nil, FormatProtobuf), name)
	hf, _ := one(mustFields(t, fieldsOf(fam, 4)[0].b), 7)
	nh, _ := nativeOf(t, mustFields(t, hf.b))
	var inBuckets int64
	for _, ds := range [][]int64{nh.PositiveDeltas, nh.NegativeDeltas} {
		var c int64
		for _, d := range ds {
			c += d
			inBuckets += c
		}
	}
	if nh.Count != recorders*records || inBuckets != recorders*records {
		t.Errorf("count %d, in buckets %d; want %d", nh.Count, inBuckets, recorders*records)
	}
	if text := linesWith(h.AppendFormat(nil, FormatText), name+"_count"); !strings.HasSuffix(text, fmt.Sprint(" ", recorders*records, "\n")) {
		t.Errorf("text %q", text)
	}
}
