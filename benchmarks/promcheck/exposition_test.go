package promcheck

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	zsprom "github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/internal/race"
)

// only keeps the fixture's lines (other views may be registered).
func only(text []byte) string { return linesOf(string(text), namePrefix) }

// linesOf keeps the lines of the families whose names start with prefix:
// their samples and their "# HELP", "# TYPE" and "# UNIT" lines.
func linesOf(text, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		if strings.Contains(l, " "+prefix) || strings.HasPrefix(l, prefix) {
			b.WriteString(l)
		}
	}
	return b.String()
}

func promText(t testing.TB) []byte {
	mfs, err := promRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func vmText() []byte {
	var buf bytes.Buffer
	vmSet().WritePrometheus(&buf)
	return buf.Bytes()
}

// samples parses the text format with client_golang's parser into flat
// samples, "name{sorted labels}" → value, histograms as their _bucket
// (with le), _sum and _count samples, so that untyped families (as
// VictoriaMetrics writes without metadata) compare with typed ones.
func samples(t testing.TB, text string) map[string]float64 {
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse: %v\n%.300s", err, text)
	}
	out := map[string]float64{}
	key := func(name string, ls []string, extra ...string) string {
		all := append(append([]string(nil), ls...), extra...)
		sort.Strings(all)
		return name + "{" + strings.Join(all, ",") + "}"
	}
	for name, mf := range mfs {
		for _, m := range mf.Metric {
			var ls []string
			for _, lp := range m.Label {
				ls = append(ls, lp.GetName()+"="+lp.GetValue())
			}
			switch {
			case m.Counter != nil:
				out[key(name, ls)] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[key(name, ls)] = m.Gauge.GetValue()
			case m.Untyped != nil:
				out[key(name, ls)] = m.Untyped.GetValue()
			case m.Histogram != nil:
				h := m.Histogram
				out[key(name+"_count", ls)] = float64(h.GetSampleCount())
				out[key(name+"_sum", ls)] = h.GetSampleSum()
				out[key(name+"_bucket", ls, "le=+Inf")] = float64(h.GetSampleCount())
				for _, b := range h.Bucket {
					le := strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)
					if math.IsInf(b.GetUpperBound(), 1) {
						le = "+Inf"
					}
					out[key(name+"_bucket", ls, "le="+le)] = float64(b.GetCumulativeCount())
				}
			}
		}
	}
	return out
}

// zerostat's text exposition of the fixture is byte for byte what
// client_golang writes for the same series (families sorted by name,
// series by label values, labels by name, the same number spelling).
func TestTextMatchesClientGolang(t *testing.T) {
	zerostatFixture(t)
	ours := only(zsprom.NewHandler(zsprom.Options{}).AppendFormat(nil, zsprom.FormatText))
	// One deliberate difference: "le" is spelled as OpenMetrics spells it
	// ("1.0", not "1") on every path, so that a bucket is one series
	// whichever way it reaches Prometheus (docs/metric-mapping.md).
	theirs := canonicalLe(only(promText(t)))
	sameLines(t, ours, theirs)
	if n := strings.Count(ours, "\n"); n < nSeries {
		t.Fatalf("only %d lines", n)
	}
}

// sameLines fails t at the first line where ours and theirs
// (client_golang's) differ, or when one has more lines.
func sameLines(t testing.TB, ours, theirs string) {
	t.Helper()
	if ours == theirs {
		return
	}
	ol, tl := strings.Split(ours, "\n"), strings.Split(theirs, "\n")
	for i := range min(len(ol), len(tl)) {
		if ol[i] != tl[i] {
			t.Fatalf("line %d differs:\nzerostat:      %s\nclient_golang: %s", i+1, ol[i], tl[i])
		}
	}
	t.Fatalf("%d lines; client_golang %d", len(ol), len(tl))
}

// The same series and values as VictoriaMetrics/metrics writes (its text
// differs: label order as given, no metadata lines by default).
func TestSamplesMatchVictoriaMetrics(t *testing.T) {
	zerostatFixture(t)
	ours := samples(t, only(zsprom.NewHandler(zsprom.Options{}).AppendFormat(nil, zsprom.FormatText)))
	theirs := samples(t, only(vmText()))
	if len(ours) != len(theirs) {
		t.Errorf("%d samples; VictoriaMetrics %d", len(ours), len(theirs))
	}
	bad := 0
	for k, v := range ours {
		if w, ok := theirs[k]; !ok || w != v {
			if bad++; bad < 10 {
				t.Errorf("%s: zerostat %v, VictoriaMetrics %v (present %v)", k, v, w, ok)
			}
		}
	}
}

// zerostat's negotiation picks what client_golang's
// NegotiateIncludingOpenMetrics picks.
func TestNegotiateMatchesClientGolang(t *testing.T) {
	for _, h := range []string{
		"",
		"*/*",
		"text/plain",
		"text/plain;version=0.0.4",
		"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		"application/openmetrics-text; version=0.0.1",
		"application/openmetrics-text;version=1.0.0",
		"application/json",
	} {
		hdr := http.Header{}
		if h != "" {
			hdr.Set("Accept", h)
		}
		theirs := expfmt.NegotiateIncludingOpenMetrics(hdr).FormatType() == expfmt.TypeOpenMetrics
		f, _ := zsprom.Negotiate(h)
		if ours := f == zsprom.FormatOpenMetrics; ours != theirs {
			t.Errorf("Accept %q: zerostat OpenMetrics=%v; client_golang %v", h, ours, theirs)
		}
	}
}

func TestWriteFormatAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	zerostatFixture(t)
	h := zsprom.NewHandler(zsprom.Options{})
	for _, f := range []zsprom.Format{zsprom.FormatText, zsprom.FormatOpenMetrics} {
		if n := testing.AllocsPerRun(10, func() { _, _ = h.WriteFormat(io.Discard, f) }); n != 0 {
			t.Errorf("%v: %v allocs; want 0", f, n)
		}
	}
}

// countingDiscard counts the bytes written to it.
type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkExposition10k: writing the exposition of the 10,000 series to
// a discarding writer. zerostat: Handler.WriteFormat (snapshot + text, one
// Write). prometheus: Registry.Gather then expfmt's text encoder, the
// work of promhttp's handler. victoriametrics: Set.WritePrometheus.
func BenchmarkExposition10k(b *testing.B) {
	zerostatFixture(b)
	bench := func(b *testing.B, write func(w io.Writer)) {
		b.ReportAllocs()
		var c countingDiscard
		write(&c) // warm up, and measure the size
		for b.Loop() {
			write(io.Discard)
		}
		b.ReportMetric(float64(c.n), "bytes")
	}
	h := zsprom.NewHandler(zsprom.Options{})
	b.Run("format=text/impl=zerostat", func(b *testing.B) {
		bench(b, func(w io.Writer) { _, _ = h.WriteFormat(w, zsprom.FormatText) })
	})
	b.Run("format=openmetrics/impl=zerostat", func(b *testing.B) {
		bench(b, func(w io.Writer) { _, _ = h.WriteFormat(w, zsprom.FormatOpenMetrics) })
	})
	reg := promRegistry()
	for _, f := range []struct{ name, ft string }{{"text", "text"}, {"openmetrics", "openmetrics"}} {
		format := expfmt.NewFormat(expfmt.TypeTextPlain)
		if f.ft == "openmetrics" {
			format = expfmt.NewFormat(expfmt.TypeOpenMetrics)
		}
		b.Run("format="+f.name+"/impl=prometheus", func(b *testing.B) {
			bench(b, func(w io.Writer) {
				mfs, err := reg.Gather()
				if err != nil {
					b.Fatal(err)
				}
				enc := expfmt.NewEncoder(w, format)
				for _, mf := range mfs {
					if err := enc.Encode(mf); err != nil {
						b.Fatal(err)
					}
				}
				if c, ok := enc.(expfmt.Closer); ok {
					_ = c.Close()
				}
			})
		})
	}
	set := vmSet()
	b.Run("format=text/impl=victoriametrics", func(b *testing.B) {
		bench(b, func(w io.Writer) { set.WritePrometheus(w) })
	})
}

// canonicalLe respells the le values of a text exposition as OpenMetrics's
// canonical numbers ("1" → "1.0").
func canonicalLe(text string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, `le="`)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:i+4])
		text = text[i+4:]
		j := strings.IndexByte(text, '"')
		if f, err := strconv.ParseFloat(text[:j], 64); err == nil {
			b.Write(promname.AppendOpenMetricsFloat(nil, f))
		} else {
			b.WriteString(text[:j])
		}
		text = text[j:]
	}
}
