// Package promnative checks zerostat's Prometheus native histograms
// against the reference implementations: client_golang v1.25.0's native
// histogram (the same values, NativeHistogramBucketFactor 1.1, which is
// schema 3, against a zerostat view ExponentialDistribution(160, 3)),
// decoded with client_model and expfmt; Prometheus's own protobuf
// exposition parser (model/textparse); and Prometheus's own remote-write
// encoding of a native histogram (prompb.FromIntHistogram, marshalled by
// its generated code).
package promnative

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
	"github.com/prometheus/prometheus/prompb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	zsprom "github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/exporter/remotewrite"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

const family = "pn_latency_milliseconds"

// workload is the values each route records: wide and narrow ranges,
// powers of two (on a bucket boundary at every schema), zeros and
// negative values; every route fits 160 buckets at scale 3 (no
// downscale: client_golang's bucket limit is off).
func workload() map[string][]float64 {
	r := rand.New(rand.NewPCG(45, 3))
	w := map[string][]float64{
		"pow2":     {0.125, 0.25, 0.5, 1, 1, 2, 4, 8, 1024},
		"narrow":   {10, 10.1, 10.2, 10.5, 11, 12, 12, 12},
		"signed":   {-7, -7, -0.3, 0, 0, 0, 0.3, 5, 6, 700},
		"zeros":    {0, 0},
		"negative": {-1, -2, -2, -1e3},
	}
	for range 5000 {
		w["wide"] = append(w["wide"], 20*math.Exp(r.NormFloat64()*1.2)) // about 0.05..8000: 17 octaves
	}
	return w
}

// setup records the workload into a zerostat view and a client_golang
// native histogram of the same name, help, unit and labels, and returns
// client_golang's registry.
func setup(t testing.TB, w map[string][]float64) *prometheus.Registry {
	m := stats.Float64("pn/latency", "Latency", stats.UnitMilliseconds)
	route := tag.MustNewKey("route")
	v := &view.View{Name: "pn/latency", Measure: m, Aggregation: view.ExponentialDistribution(160, 3), TagKeys: []tag.Key{route}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	reg := prometheus.NewRegistry()
	hv := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: family, Help: "Latency", Unit: "milliseconds",
		NativeHistogramBucketFactor:  1.1, // schema 3
		NativeHistogramZeroThreshold: prometheus.NativeHistogramZeroThresholdZero,
	}, []string{"route"})
	reg.MustRegister(hv)
	for r, vals := range w {
		ctx, err := tag.New(context.Background(), tag.Upsert(route, r))
		if err != nil {
			t.Fatal(err)
		}
		o := hv.WithLabelValues(r)
		for _, x := range vals {
			stats.Record(ctx, m.M(x))
			o.Observe(x)
		}
	}
	return reg
}

// decodeDelimited decodes a protobuf exposition with expfmt.
func decodeDelimited(t testing.TB, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	dec := expfmt.NewDecoder(bytes.NewReader(b), expfmt.NewFormat(expfmt.TypeProtoDelim))
	out := map[string]*dto.MetricFamily{}
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		out[mf.GetName()] = mf
	}
}

func gathered(t testing.TB, reg *prometheus.Registry) *dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 {
		t.Fatalf("gather: %v, %d families", err, len(mfs))
	}
	return mfs[0]
}

// zerostatProtobuf scrapes zerostat's handler as Prometheus does with
// native histograms on.
func zerostatProtobuf(t testing.TB) []byte {
	t.Helper()
	h := zsprom.NewHandler(zsprom.Options{})
	hdr := http.Header{}
	hdr.Set("Accept", promAccept)
	f, ok := zsprom.Negotiate(hdr.Get("Accept"))
	if !ok || f != zsprom.FormatProtobuf {
		t.Fatalf("negotiated %v", f)
	}
	return h.AppendFormat(nil, f)
}

// promAccept is Prometheus 2.42's Accept header with
// --enable-feature=native-histograms.
const promAccept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

// byRoute indexes a family's metrics by their route label.
func byRoute(mf *dto.MetricFamily) map[string]*dto.Metric {
	out := map[string]*dto.Metric{}
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "route" {
				out[l.GetValue()] = m
			}
		}
	}
	return out
}

// zerostat's protobuf exposition of an exponential view decodes (expfmt,
// client_model) to the MetricFamily client_golang gathers for a native
// histogram of the same values: name, help, type, unit, labels, and the
// whole Histogram message (schema, zero threshold, zero count, count,
// sum, spans, deltas, the no-op span rule), except the created timestamp
// (each library's own start).
func TestProtobufMatchesClientGolang(t *testing.T) {
	w := workload()
	reg := setup(t, w)
	ours := decodeDelimited(t, zerostatProtobuf(t))[family]
	theirs := gathered(t, reg)
	if ours == nil {
		t.Fatalf("family %s missing", family)
	}
	if ours.GetHelp() != theirs.GetHelp() || ours.GetType() != theirs.GetType() || ours.GetUnit() != theirs.GetUnit() {
		t.Errorf("family head %q %v %q; client_golang %q %v %q", ours.GetHelp(), ours.GetType(), ours.GetUnit(),
			theirs.GetHelp(), theirs.GetType(), theirs.GetUnit())
	}
	om, tm := byRoute(ours), byRoute(theirs)
	if len(om) != len(w) || len(tm) != len(w) {
		t.Fatalf("%d and %d series; want %d", len(om), len(tm), len(w))
	}
	for r := range w {
		a, b := proto.Clone(om[r]).(*dto.Metric), proto.Clone(tm[r]).(*dto.Metric)
		if a.GetHistogram().GetCreatedTimestamp() == nil {
			t.Errorf("%s: no created timestamp", r)
		}
		a.Histogram.CreatedTimestamp, b.Histogram.CreatedTimestamp = nil, nil
		if !proto.Equal(a, b) {
			t.Errorf("%s:\nzerostat      %v\nclient_golang %v", r, a, b)
		}
		if a.GetHistogram().GetSchema() != 3 {
			t.Errorf("%s: schema %d; want 3", r, a.GetHistogram().GetSchema())
		}
	}
}

// familyLines returns the lines of a text exposition that belong to the
// family named name (its head and its samples).
func familyLines(text, name string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		s := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(l, "# HELP "), "# TYPE "), "# UNIT ")
		if strings.HasPrefix(s, name+" ") || strings.HasPrefix(s, name+"_") || strings.HasPrefix(s, name+"{") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// In the text format zerostat writes for an exponential view exactly what
// client_golang's expfmt writes for its native histogram without classic
// buckets ("+Inf" bucket, _sum, _count), series sorted alike; in
// OpenMetrics too, given the same created timestamps, for values with no
// negative one (with one, zerostat leaves the _sum out, as for its
// classic histograms: OpenMetrics forbids a negative sum; client_golang
// writes it).
func TestTextMatchesClientGolang(t *testing.T) {
	w := workload()
	delete(w, "signed")
	delete(w, "negative")
	reg := setup(t, w)
	h := zsprom.NewHandler(zsprom.Options{})
	theirs := gathered(t, reg)
	var text bytes.Buffer
	if _, err := expfmt.MetricFamilyToText(&text, theirs); err != nil {
		t.Fatal(err)
	}
	ours := familyLines(string(h.AppendFormat(nil, zsprom.FormatText)), family)
	if ours != text.String() {
		t.Errorf("text:\n%s\nclient_golang:\n%s", ours, text.String())
	}
	// OpenMetrics: client_golang's family with zerostat's created
	// timestamps (from its protobuf exposition).
	created := byRoute(decodeDelimited(t, zerostatProtobuf(t))[family])
	for _, m := range theirs.GetMetric() {
		for _, l := range m.GetLabel() {
			m.Histogram.CreatedTimestamp = proto.Clone(created[l.GetValue()].GetHistogram().GetCreatedTimestamp()).(*timestamppb.Timestamp)
		}
	}
	var omText bytes.Buffer
	if _, err := expfmt.MetricFamilyToOpenMetrics(&omText, theirs, expfmt.WithCreatedLines()); err != nil {
		t.Fatal(err)
	}
	ours = familyLines(string(h.AppendFormat(nil, zsprom.FormatOpenMetrics)), family)
	if ours != omText.String() {
		t.Errorf("OpenMetrics:\n%s\nclient_golang:\n%s", ours, omText.String())
	}
}

// parsed is what Prometheus's protobuf parser makes of an exposition:
// series labels → native histogram.
func parsed(t testing.TB, b []byte) map[string]*histogram.Histogram {
	t.Helper()
	p := textparse.NewProtobufParser(b, false, false, labels.NewSymbolTable())
	out := map[string]*histogram.Histogram{}
	for {
		e, err := p.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if e != textparse.EntryHistogram {
			continue
		}
		_, _, h, fh := p.Histogram()
		if h == nil || fh != nil {
			t.Fatalf("not an integer histogram: %v %v", h, fh)
		}
		var ls labels.Labels
		p.Labels(&ls)
		if err := h.Validate(); err != nil {
			t.Errorf("%s: %v", ls, err)
		}
		out[ls.String()] = h.Copy()
	}
}

// Prometheus's own protobuf exposition parser (model/textparse, as its
// scrape loop uses it) reads zerostat's exposition into the same native
// histograms, valid ones, as client_golang's.
func TestPrometheusParsesAsClientGolang(t *testing.T) {
	reg := setup(t, workload())
	ours := parsed(t, zerostatProtobuf(t))
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeProtoDelim))
	if err := enc.Encode(gathered(t, reg)); err != nil {
		t.Fatal(err)
	}
	theirs := parsed(t, buf.Bytes())
	if len(ours) != len(theirs) || len(ours) != len(workload()) {
		t.Fatalf("%d and %d histograms", len(ours), len(theirs))
	}
	for k, h := range theirs {
		if o := ours[k]; o == nil || !o.Equals(h) {
			t.Errorf("%s:\nzerostat      %v\nclient_golang %v", k, o, h)
		}
	}
}

// zerostat's remote-write Histogram of each series is byte for byte what
// Prometheus's own remote-write code (its generated prompb Marshal)
// writes for client_golang's native histogram of the same values at the
// same timestamp (fields as prompb.FromIntHistogram sets them; spans and
// deltas as client_golang lays them out); and, as Prometheus reads both,
// the same histogram as client_golang's exposition parses to. The whole
// request is prompb's canonical encoding (unmarshalled and marshalled
// again by the generated code, the same bytes).
func TestRemoteWriteMatchesPrometheus(t *testing.T) {
	reg := setup(t, workload())
	theirs := byRoute(gathered(t, reg))
	var buf bytes.Buffer
	if err := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeProtoDelim)).Encode(gathered(t, reg)); err != nil {
		t.Fatal(err)
	}
	theirsParsed := parsed(t, buf.Bytes())
	w, err := remotewrite.New(remotewrite.Options{URL: "http://127.0.0.1:1/api/v1/write"})
	if err != nil {
		t.Fatal(err)
	}
	const ts = 1_700_000_000_123
	raw := w.AppendWriteRequest(nil, ts)
	var req prompb.WriteRequest
	if err := req.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	if again, err := req.Marshal(); err != nil || !bytes.Equal(again, raw) {
		t.Errorf("the request is not prompb's canonical encoding (%v)", err)
	}
	spans := func(ss []*dto.BucketSpan) []prompb.BucketSpan {
		var out []prompb.BucketSpan
		for _, s := range ss {
			out = append(out, prompb.BucketSpan{Offset: s.GetOffset(), Length: s.GetLength()})
		}
		return out
	}
	n := 0
	for _, s := range req.Timeseries {
		var ls []string
		name, route := "", ""
		for _, l := range s.Labels {
			switch l.Name {
			case "__name__":
				name = l.Value
			case "route":
				route = l.Value
			}
			ls = append(ls, l.Name+"=\""+l.Value+"\"")
		}
		if name != family {
			continue
		}
		n++
		key := "{" + strings.Join(ls, ", ") + "}"
		if len(s.Histograms) != 1 || len(s.Samples) != 0 || theirs[route] == nil {
			t.Errorf("%s: %d histograms, %d samples; want 1, 0", key, len(s.Histograms), len(s.Samples))
			continue
		}
		d := theirs[route].GetHistogram()
		want := prompb.Histogram{
			Count: &prompb.Histogram_CountInt{CountInt: d.GetSampleCount()}, Sum: d.GetSampleSum(),
			Schema: d.GetSchema(), ZeroThreshold: d.GetZeroThreshold(),
			ZeroCount:     &prompb.Histogram_ZeroCountInt{ZeroCountInt: d.GetZeroCount()},
			NegativeSpans: spans(d.GetNegativeSpan()), NegativeDeltas: d.GetNegativeDelta(),
			PositiveSpans: spans(d.GetPositiveSpan()), PositiveDeltas: d.GetPositiveDelta(),
			Timestamp: ts,
		}
		if len(d.GetPositiveDelta()) == 0 {
			want.PositiveSpans = nil // client_golang's no-op span is the exposition's
		}
		wb, err := want.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		gb, err := s.Histograms[0].Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gb, wb) {
			t.Errorf("%s:\nzerostat   %v\nprometheus %v", key, s.Histograms[0], want)
		}
		got := s.Histograms[0].ToIntHistogram()
		if p := theirsParsed[key]; p == nil || !got.Compact(0).Equals(p.Copy().Compact(0)) {
			t.Errorf("%s: as Prometheus reads it %v; client_golang's %v", key, got, p)
		}
	}
	if n != len(workload()) {
		t.Errorf("%d native histogram series; want %d", n, len(workload()))
	}
}

// zerostat's Negotiate serves protobuf where client_golang's
// expfmt.NegotiateIncludingOpenMetrics does.
func TestNegotiateProtobufMatchesClientGolang(t *testing.T) {
	for _, h := range []string{
		promAccept,
		"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
		"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited",
		"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text",
		"application/vnd.google.protobuf",
		"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.1,application/openmetrics-text;version=1.0.0",
		"text/plain;version=0.0.4",
		"*/*",
	} {
		hdr := http.Header{}
		hdr.Set("Accept", h)
		theirs := expfmt.NegotiateIncludingOpenMetrics(hdr).FormatType()
		f, _ := zsprom.Negotiate(h)
		// zerostat has no protobuf text format: where client_golang
		// serves it, zerostat serves its fallback, the text format.
		want := map[expfmt.FormatType]zsprom.Format{expfmt.TypeProtoDelim: zsprom.FormatProtobuf,
			expfmt.TypeOpenMetrics: zsprom.FormatOpenMetrics, expfmt.TypeTextPlain: zsprom.FormatText,
			expfmt.TypeProtoText: zsprom.FormatText}[theirs]
		if f != want {
			t.Errorf("Accept %q: zerostat %v; client_golang %v", h, f, theirs)
		}
	}
}

// The protobuf exposition carries every family the text format has, with
// the same series, labels and values: zerostat's text, parsed by
// expfmt's text parser, equals its protobuf exposition decoded by
// client_model (created timestamps, exemplars, units and native fields
// set aside: the text format has none; a classic histogram's "+Inf"
// bucket, which client_golang's protobuf leaves implicit, too) for
// counters, a negative Sum (untyped), gauges, classic histograms with
// exemplars and exponential histograms.
func TestEveryFamilyMatchesText(t *testing.T) {
	setup(t, workload())
	m := stats.Float64("pnall/m", "All kinds", stats.UnitSeconds)
	neg := stats.Float64("pnall/neg", "", stats.UnitDimensionless)
	route := tag.MustNewKey("route")
	vs := []*view.View{
		{Name: "pnall/count", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{route}},
		{Name: "pnall/sum", Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{route}},
		{Name: "pnall/neg", Measure: neg, Aggregation: view.Sum()},
		{Name: "pnall/last", Measure: m, Aggregation: view.LastValue(), TagKeys: []tag.Key{route}},
		{Name: "pnall/dist", Measure: m, Aggregation: view.Distribution(0.5, 1, 2), TagKeys: []tag.Key{route}},
	}
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
	for i, r := range []string{"/a", `/b"\`, ""} {
		ctx, err := tag.New(context.Background(), tag.Upsert(route, r))
		if err != nil {
			t.Fatal(err)
		}
		for j := range 5 + i {
			stats.Record(ctx, m.M(float64(j)*0.4))
		}
		sc := stats.SpanContext{TraceID: [16]byte{0: byte(i + 1)}, SpanID: [8]byte{7: 1}}
		if err := stats.RecordWithOptions(ctx, stats.WithMeasurements(m.M(1.5)),
			stats.WithAttachments(map[string]interface{}{stats.AttachmentKeySpanContext: sc})); err != nil {
			t.Fatal(err)
		}
	}
	stats.Record(context.Background(), neg.M(-3))
	h := zsprom.NewHandler(zsprom.Options{ConstLabels: map[string]string{"env": "prod"}})
	tp := expfmt.NewTextParser(model.LegacyValidation)
	text, err := tp.TextToMetricFamilies(bytes.NewReader(h.AppendFormat(nil, zsprom.FormatText)))
	if err != nil {
		t.Fatal(err)
	}
	pb := decodeDelimited(t, h.AppendFormat(nil, zsprom.FormatProtobuf))
	kinds := map[dto.MetricType]int{}
	for name, want := range text {
		got := pb[name]
		if got == nil {
			t.Errorf("%s: not in the protobuf exposition", name)
			continue
		}
		got = proto.Clone(got).(*dto.MetricFamily)
		want = proto.Clone(want).(*dto.MetricFamily)
		got.Unit = nil
		for _, mf := range []*dto.MetricFamily{got, want} {
			for _, m := range mf.Metric {
				if c := m.Counter; c != nil {
					c.CreatedTimestamp, c.Exemplar = nil, nil
				}
				if hh := m.Histogram; hh != nil {
					keep := &dto.Histogram{SampleCount: hh.SampleCount, SampleSum: hh.SampleSum}
					for _, b := range hh.Bucket {
						if !math.IsInf(b.GetUpperBound(), 1) {
							keep.Bucket = append(keep.Bucket, &dto.Bucket{CumulativeCount: b.CumulativeCount, UpperBound: b.UpperBound})
						}
					}
					m.Histogram = keep
				}
			}
		}
		if !proto.Equal(got, want) {
			t.Errorf("%s:\nprotobuf %v\ntext     %v", name, got, want)
		}
		kinds[want.GetType()]++
	}
	if len(pb) != len(text) {
		t.Errorf("%d families in protobuf, %d in text", len(pb), len(text))
	}
	if kinds[dto.MetricType_COUNTER] < 2 || kinds[dto.MetricType_UNTYPED] != 1 || kinds[dto.MetricType_GAUGE] < 1 || kinds[dto.MetricType_HISTOGRAM] < 2 {
		t.Errorf("kinds compared %v", kinds)
	}
	// The exemplars (protobuf: on the classic buckets, as client_golang
	// puts them) are OpenMetrics's.
	var exs int
	for _, m := range pb["pnall_dist_seconds"].GetMetric() {
		for _, b := range m.GetHistogram().GetBucket() {
			if e := b.GetExemplar(); e != nil {
				exs++
				if e.GetValue() != 1.5 || len(e.GetLabel()) != 2 || e.GetLabel()[0].GetName() != "trace_id" || e.GetTimestamp() == nil {
					t.Errorf("exemplar %v", e)
				}
			}
		}
	}
	if exs != 3 {
		t.Errorf("%d exemplars; want 3", exs)
	}
}
