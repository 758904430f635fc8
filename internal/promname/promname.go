// Package promname maps zerostat's views onto Prometheus's data model:
// metric and label names, unit suffixes, and Prometheus's spelling of
// label values, help text and numbers. exporter/prometheus (the scrape
// exposition) and exporter/remotewrite (push) both name series through it,
// so a view has the same series names whichever way it reaches Prometheus.
//
// The naming rules follow Prometheus's naming practices
// (https://prometheus.io/docs/practices/naming/) and the OpenTelemetry to
// Prometheus translation
// (https://opentelemetry.io/docs/specs/otel/compatibility/prometheus_and_openmetrics/):
//
//   - a view name becomes [a-zA-Z_:][a-zA-Z0-9_:]*: every other character
//     becomes '_', a leading digit gets a '_' prefix ("demo/latency" →
//     "demo_latency");
//   - the unit is appended as a word unless the name already ends with it
//     ("ms" → "_milliseconds", "s" → "_seconds", "By" → "_bytes", "1" →
//     nothing; UCUM annotations in braces are dropped); a Count view counts
//     recordings, so its measure's unit is not appended;
//   - counters (Count and Sum views) get "_total" on their samples;
//   - tag keys become label names [a-zA-Z_][a-zA-Z0-9_]*: other characters
//     become '_', a leading digit gets the prefix "key_", a leading "__"
//     (reserved for Prometheus) the prefix "key", and a histogram's "le"
//     becomes "key_le".
//
// Everything here runs when a view is first exported (Family), or appends
// to a caller's buffer without allocating (the Append functions).
package promname

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/zerostat/zerostat/internal/core"
)

// Type is a Prometheus metric type.
type Type uint8

// Metric types zerostat views map to.
const (
	Counter   Type = 1 + iota // Count and Sum views
	Gauge                     // LastValue views
	Histogram                 // Distribution views
	// Unknown is a counter exposed in an export where some series is not
	// a valid counter value (CounterValid), and, in OpenMetrics, a
	// counter with OpenCensus naming (whose samples lack "_total").
	Unknown
	Summary // Summary views (view.Summary): quantile samples, _sum, _count
)

// String returns the type as "# TYPE" lines spell it.
func (t Type) String() string {
	switch t {
	case Counter:
		return "counter"
	case Gauge:
		return "gauge"
	case Histogram:
		return "histogram"
	case Summary:
		return "summary"
	}
	return "unknown" // OpenMetrics's; the text format says "untyped"
}

// TypeOf returns the metric type of an aggregation kind.
func TypeOf(k core.Kind) Type {
	switch k {
	case core.KindCount, core.KindSum:
		return Counter
	case core.KindLastValue:
		return Gauge
	case core.KindDistribution, core.KindExponential:
		return Histogram
	case core.KindSummary:
		return Summary
	}
	return 0
}

// Label is one label of a family: a constant label (Tag < 0, with its
// Value) or a view's tag key (Tag is the key's index in the view's
// name-ordered keys, which is also the index in core.Series.ValueIDs).
type Label struct {
	Name  string
	Value string
	Tag   int
}

// Family is the Prometheus naming of one view. Build it once per view
// (NewFamily); it is immutable and safe for concurrent reads.
type Family struct {
	// View is the view named.
	View *core.View
	// Metric is the view's mapping (MetricOf); Type is Metric.Type.
	Metric
	// Name is the metric family name (OpenMetrics's). A counter's samples
	// add "_total" (Sample); a histogram's add "_bucket", "_sum" and
	// "_count".
	Name string
	// Sample is the name of a counter's or gauge's sample: Name+"_total"
	// for a counter, Name for a gauge, Name+"_bucket" for a histogram.
	// With OpenCensus naming a counter's sample is Name.
	Sample string
	// Created is the name of the "_created" samples OpenMetrics gives a
	// counter or histogram ("" for a gauge, and with OpenCensus naming).
	Created string
	// Unit is the unit word ("seconds"), "" unless Name ends in "_"+Unit:
	// OpenMetrics's "# UNIT" line is written only then.
	Unit string
	// Les are a histogram's "le" label values, one per bound and "+Inf",
	// spelled identically on every path: OpenMetrics's canonical numbers
	// ("1.0", "2.5e-05"), which Prometheus 3 also normalises text
	// scrapes to; with OpenCensus naming, client_golang's text spelling
	// ("1"), which the OpenCensus exporter's series carry.
	Les []string
	// Qs are a summary's "quantile" label values, one per quantile,
	// spelled as Les are (OpenMetrics's "0.0", "0.25", "1.0"; with
	// OpenCensus naming client_golang's text spelling, "0", "1").
	Qs []string
	// Labels are the constant labels and the view's tag keys, sorted by
	// name, unique, never OverflowLabel.
	Labels []Label
	// OverflowLabels label the view's overflow series (the records of tag
	// combinations past its cardinality limit): the constant labels and
	// OverflowLabel="true", sorted by name.
	OverflowLabels []Label
	// OpenCensus reports OpenCensus naming (Options.OpenCensus).
	OpenCensus bool
}

// OverflowLabel is the label of an overflow series: the sanitized name
// of view.OverflowKey, OpenTelemetry's "otel.metric.overflow". No tag key
// or constant label gets this name (they get a numeric suffix), so the
// overflow series cannot be duplicated by a user's series.
const OverflowLabel = "otel_metric_overflow"

// Options choose how NewFamily names views.
type Options struct {
	// Namespace (may be "") is prefixed to every name with a '_'.
	Namespace string
	// Consts are constant labels with sanitized, unique names (see
	// ConstLabels).
	Consts []Label
	// OpenCensus names views as contrib.go.opencensus.io/exporter/prometheus
	// v0.4.2 does: Namespace + "_" + the view name sanitized its way
	// (truncated to 100 bytes, each character outside [A-Za-z0-9_] made
	// '_', a repeated '-' dropped, a leading digit or '_' prefixed), no
	// unit suffix, no "_total".
	OpenCensus bool
}

// NewFamily names view v. A tag key whose label name equals a constant
// label's replaces it for this view; tag keys that sanitize to the same
// name get numeric suffixes. Set-up cost: a few small allocations.
func NewFamily(v *core.View, o Options) *Family {
	f := &Family{View: v, Metric: MetricOf(v), OpenCensus: o.OpenCensus}
	var name string
	switch {
	case o.OpenCensus:
		name = ocSanitize(v.Name)
		if o.Namespace != "" {
			name = o.Namespace + "_" + name
		}
		if !ValidMetricName(name) { // client_golang would refuse it
			name = MetricName(name)
		}
	default:
		name = MetricName(v.Name)
		if o.Namespace != "" {
			name = MetricName(o.Namespace) + "_" + name
		}
		if f.Type == Counter {
			name = strings.TrimSuffix(name, "_total")
		}
		if v.Agg.Kind() != core.KindCount { // a Count counts recordings, whatever the unit
			if u := UnitWord(v.Unit); u != "" && name != u && !strings.HasSuffix(name, "_"+u) {
				name += "_" + u
			}
		}
		if u := UnitWord(f.Metric.Unit); u != "" && strings.HasSuffix(name, "_"+u) {
			f.Unit = u
		}
	}
	f.Name = name
	switch f.Type {
	case Counter:
		f.Sample = name + "_total"
		if o.OpenCensus {
			f.Sample = name
		}
	case Histogram:
		f.Sample = name + "_bucket"
	default:
		f.Sample = name
	}
	if !o.OpenCensus && f.Type != Gauge {
		f.Created = name + "_created"
	}
	if f.Type == Histogram {
		for _, b := range v.Agg.Bounds() {
			if o.OpenCensus {
				f.Les = append(f.Les, string(AppendFloat(nil, b)))
			} else {
				f.Les = append(f.Les, string(AppendOpenMetricsFloat(nil, b)))
			}
		}
		f.Les = append(f.Les, "+Inf")
	}
	if f.Type == Summary {
		for _, q := range v.Agg.Quantiles() {
			if o.OpenCensus {
				f.Qs = append(f.Qs, string(AppendFloat(nil, q)))
			} else {
				f.Qs = append(f.Qs, string(AppendOpenMetricsFloat(nil, q)))
			}
		}
	}

	labelName := LabelName
	if o.OpenCensus {
		labelName = ocLabelName
	}
	taken := map[string]bool{OverflowLabel: true}
	for i, k := range v.Keys {
		base := labelName(k)
		if f.Type == Histogram && base == "le" {
			base = "key_le"
		}
		if f.Type == Summary && base == "quantile" {
			base = "key_quantile"
		}
		ln := base
		for n := 1; taken[ln]; n++ {
			ln = base + "_" + strconv.Itoa(n)
		}
		taken[ln] = true
		f.Labels = append(f.Labels, Label{Name: ln, Tag: i})
	}
	for _, c := range o.Consts {
		name := c.Name
		if f.Type == Histogram && name == "le" {
			name = "key_le"
		}
		if f.Type == Summary && name == "quantile" {
			name = "key_quantile"
		}
		if !taken[name] {
			taken[name] = true
			f.Labels = append(f.Labels, Label{Name: name, Value: c.Value, Tag: -1})
		}
	}
	slices.SortFunc(f.Labels, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
	f.OverflowLabels = []Label{{Name: OverflowLabel, Value: "true", Tag: -1}}
	for _, l := range f.Labels {
		if l.Tag < 0 {
			f.OverflowLabels = append(f.OverflowLabels, l)
		}
	}
	slices.SortFunc(f.OverflowLabels, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
	return f
}

// Names returns every sample name the family's series may carry, on any
// path: two families sharing one would give invalid output (two "# TYPE"
// blocks of one name, or duplicate remote-write series).
func (f *Family) Names() []string {
	names := []string{f.Name}
	switch f.Type {
	case Histogram:
		names = append(names, f.Name+"_bucket", f.Name+"_sum", f.Name+"_count")
	case Summary:
		names = append(names, f.Name+"_sum", f.Name+"_count")
	case Counter:
		if f.Sample != f.Name {
			names = append(names, f.Sample)
		}
	}
	if f.Created != "" { // none with OpenCensus naming
		names = append(names, f.Created)
	}
	return names
}

// ocSanitize is the contrib exporter's sanitize (sanitize.go, with
// statsd_exporter v0.22.7's mapper.EscapeMetricName) for printable ASCII,
// which view names and tag keys are.
func ocSanitize(s string) string {
	if s == "" {
		return s
	}
	if len(s) > 100 {
		s = s[:100]
	}
	b := make([]byte, 0, len(s)+4)
	if isDigit(rune(s[0])) {
		b = append(b, '_')
	}
	var prev byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isAlpha(rune(c)) || isDigit(rune(c)):
			b = append(b, c)
		case c == '-' && prev == '-':
		default:
			b = append(b, '_')
		}
		prev = c
	}
	if b[0] == '_' {
		b = append([]byte("key"), b...)
	}
	return string(b)
}

// ocLabelName is ocSanitize, made valid where the contrib exporter would
// fail the scrape (an empty key).
func ocLabelName(s string) string {
	if s = ocSanitize(s); s == "" {
		return "key_"
	}
	return s
}

// ConstLabels turns a map of constant labels into sorted Labels with
// sanitized, unique names; empty names are dropped.
func ConstLabels(m map[string]string) []Label {
	var ls []Label
	taken := map[string]bool{OverflowLabel: true}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == "" {
			continue
		}
		ln := LabelName(k)
		for n := 1; taken[ln]; n++ {
			ln = LabelName(k) + "_" + strconv.Itoa(n)
		}
		taken[ln] = true
		ls = append(ls, Label{Name: ln, Value: validUTF8(m[k]), Tag: -1})
	}
	slices.SortFunc(ls, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
	return ls
}

func isAlpha(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' }
func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// MetricName sanitizes s into a valid metric name,
// [a-zA-Z_:][a-zA-Z0-9_:]*: each invalid character becomes '_', a leading
// digit gets a '_' prefix. It returns s itself when s is valid.
func MetricName(s string) string {
	if ValidMetricName(s) {
		return s
	}
	var b strings.Builder
	if s == "" || isDigit(rune(s[0])) {
		b.WriteByte('_')
	}
	for _, r := range s {
		if isAlpha(r) || isDigit(r) || r == ':' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ValidMetricName reports whether s matches [a-zA-Z_:][a-zA-Z0-9_:]*.
func ValidMetricName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(isAlpha(r) || r == ':' || i > 0 && isDigit(r)) {
			return false
		}
	}
	return true
}

// LabelName sanitizes s into a label name, [a-zA-Z_][a-zA-Z0-9_]*, that
// does not start with the reserved "__": each invalid character becomes
// '_', a leading digit gets the prefix "key_", a leading "__" the prefix
// "key" (OpenCensus's Prometheus exporter's rules).
func LabelName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if isAlpha(r) || isDigit(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	switch {
	case out == "":
		return "key_"
	case isDigit(rune(out[0])):
		return "key_" + out
	case strings.HasPrefix(out, "__"):
		return "key" + out
	}
	return out
}

// unitWords are the UCUM codes OpenCensus and OpenTelemetry use and their
// Prometheus words, from the OpenTelemetry translation table
// (https://github.com/open-telemetry/opentelemetry-collector-contrib/blob/main/pkg/translator/prometheus/normalize_name.go).
var unitWords = map[string]string{
	"d": "days", "h": "hours", "min": "minutes", "s": "seconds",
	"ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds",
	"By": "bytes", "KiBy": "kibibytes", "MiBy": "mebibytes", "GiBy": "gibibytes",
	"TiBy": "tibibytes", "KBy": "kilobytes", "MBy": "megabytes", "GBy": "gigabytes",
	"TBy": "terabytes", "m": "meters", "V": "volts", "A": "amperes", "J": "joules",
	"W": "watts", "g": "grams", "Cel": "celsius", "Hz": "hertz", "%": "percent",
	"1": "",
}

// perWords are the singular words after "_per_" ("By/s" →
// "bytes_per_second").
var perWords = map[string]string{
	"s": "second", "m": "minute", "h": "hour", "d": "day", "w": "week",
	"mo": "month", "y": "year",
}

// UnitWord returns the metric name suffix of a UCUM unit: "ms" →
// "milliseconds", "By/s" → "bytes_per_second", "1" and "" → "". UCUM
// annotations ("{request}") are dropped; an unknown unit is used
// sanitized.
func UnitWord(unit string) string {
	for {
		i := strings.IndexByte(unit, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(unit[i:], '}')
		if j < 0 {
			unit = unit[:i]
			break
		}
		unit = unit[:i] + unit[i+j+1:]
	}
	unit = strings.TrimSpace(unit)
	main, per, hasPer := strings.Cut(unit, "/")
	word := unitWord(main, unitWords)
	if hasPer {
		if p := unitWord(per, perWords); p != "" {
			if word == "" {
				return "per_" + p
			}
			return word + "_per_" + p
		}
	}
	return word
}

func unitWord(u string, table map[string]string) string {
	if w, ok := table[u]; ok {
		return w
	}
	if u == "" {
		return ""
	}
	var b strings.Builder
	for _, r := range u {
		if isAlpha(r) || isDigit(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return strings.Trim(b.String(), "_")
}

// AppendLabelValue appends v escaped for a quoted label value: '\\', '"'
// and '\n' are escaped, as in both exposition formats.
func AppendLabelValue(dst []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			dst = append(dst, '\\', '\\')
		case '"':
			dst = append(dst, '\\', '"')
		case '\n':
			dst = append(dst, '\\', 'n')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// AppendHelp appends help text escaped for a "# HELP" line: '\\' and '\n'
// are escaped, and '"' too when quote is set (OpenMetrics).
func AppendHelp(dst []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '"':
			if quote {
				dst = append(dst, '\\')
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// AppendFloat appends f as the text format 0.0.4 writes it (and as
// Prometheus's client_golang does): strconv's shortest 'g' form, "+Inf",
// "-Inf", "NaN".
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "+Inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-Inf"...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// AppendOpenMetricsFloat appends f in OpenMetrics's canonical form, as
// client_golang's expfmt writes it: like AppendFloat, with ".0" added to
// integral values ("1.0", "250.0"; OpenMetrics 1.0 "Considerations:
// Canonical Numbers").
func AppendOpenMetricsFloat(dst []byte, f float64) []byte {
	n := len(dst)
	dst = AppendFloat(dst, f)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst
	}
	for _, c := range dst[n:] {
		if c == '.' || c == 'e' {
			return dst
		}
	}
	return append(dst, '.', '0')
}
