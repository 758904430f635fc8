package debugstats

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/push"
	"github.com/zerostat/zerostat/internal/accept"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// Defaults of Options.
const (
	DefaultRefresh = 5 * time.Second
	DefaultMaxRows = 100
)

// Options configure NewHandler and NewSnapshotHandler. The zero value is
// usable: a page of every registered view, refreshed every 5 s, linking to
// snapshots served by the handler itself, without exporter health.
type Options struct {
	// Exporters are shown in the exporter health table, as "exporter 1",
	// "exporter 2", ... (an Exporter does not expose its name); nil
	// entries are skipped. Their Stats are read at each page view.
	Exporters []*exporter.Exporter

	// ExporterStats are named sources of exporter health, shown after
	// Exporters: for exporters this process does not hold as
	// *exporter.Exporter, or to name them.
	ExporterStats []NamedStats

	// Refresh is how often the page reloads itself (a <meta
	// http-equiv="refresh">); 0 means DefaultRefresh (5 s), a negative
	// value turns reloading off. It is rounded up to whole seconds.
	Refresh time.Duration

	// SnapshotURL is where the page links each view's snapshot, with
	// "?view=NAME&format=json" or "&format=msgpack" appended ("&" when the
	// URL has a query already). Serve NewSnapshotHandler there (e.g. at
	// "/debug/stats/snapshot"). Empty (the default): the links point back
	// to the page's own URL, which serves a snapshot when the request has
	// a format parameter, so one registration of NewHandler serves both.
	SnapshotURL string

	// MaxRows caps the rows drawn per view (the overflow row is always
	// drawn): a view at a cardinality limit of 10,000 would otherwise
	// make a page of megabytes. The snapshot links have every row. 0 means
	// DefaultMaxRows (100); a negative value means no cap.
	MaxRows int

	// Title heads the page; empty means "zerostat".
	Title string

	// Resource describes the process in the snapshots (empty fields get
	// exporter.Options.Resource's defaults).
	Resource exporter.Resource
}

// NamedStats is a named source of exporter health for Options.ExporterStats.
// Stats is called at each page view, from the request's goroutine: it must
// be safe for concurrent use (every exporter's Stats is). Every push
// exporter's Stats method fits: they share push.Stats.
type NamedStats struct {
	Name  string
	Stats func() push.Stats
}

// handler serves the page. Everything but its buffer pool is read-only
// after NewHandler, so requests are served concurrently.
type handler struct {
	opts     Options
	refresh  int // seconds; 0: no refresh
	maxRows  int // <0: no cap
	snapshot *snapshotHandler
	bufs     sync.Pool // *bytes.Buffer
}

var _ http.Handler = (*handler)(nil)

// NewHandler returns the handler of the stats page: every registered view
// (sorted by name) with its rows, distributions drawn as SVG bar charts
// with percentiles estimated from their buckets, each view's cardinality
// against its limit, and the health of opts' exporters. A request with a
// "format" query parameter ("json" or "msgpack") is answered with a
// snapshot instead, as NewSnapshotHandler does.
//
// It answers GET and HEAD (others get 405). Everything shown is escaped by
// html/template: tag values are the application's input and may be a
// user's. The page is built in a pooled buffer and written in one piece
// with its Content-Length.
//
// Cost per page view: the registered callbacks (package metric, runtime
// metrics; see metric.Collect), view.RetrieveData of every view (one
// allocation per row and a sort), formatting and template execution;
// recorders are never blocked. Safe for concurrent use.
func NewHandler(opts Options) http.Handler {
	h := &handler{opts: opts, snapshot: newSnapshotHandler(opts)}
	switch {
	case opts.Refresh == 0:
		h.refresh = int(DefaultRefresh / time.Second)
	case opts.Refresh > 0:
		h.refresh = int((opts.Refresh + time.Second - 1) / time.Second)
	}
	switch {
	case opts.MaxRows == 0:
		h.maxRows = DefaultMaxRows
	case opts.MaxRows > 0:
		h.maxRows = opts.MaxRows
	default:
		h.maxRows = -1
	}
	if h.opts.Title == "" {
		h.opts.Title = "zerostat"
	}
	return h
}

// maxPooledPage is the largest page buffer kept for reuse; a larger one
// (a page of many wide views) is left to the garbage collector, as
// log/slog's internal/buffer does, so one large page does not pin its
// memory forever.
const maxPooledPage = 4 << 20

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Query().Has("format") {
		h.snapshot.ServeHTTP(w, r)
		return
	}
	buf, _ := h.bufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledPage {
			h.bufs.Put(buf)
		}
	}()
	if err := pageTemplate.Execute(buf, h.build(time.Now())); err != nil {
		http.Error(w, "zerostat: debug page: "+err.Error(), http.StatusInternalServerError) // a bug
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	accept.WriteBody(w, r, buf.Bytes(), "text/html; charset=utf-8", true)
}

// The page's model: everything formatted, so the template only places it.
type (
	pageModel struct {
		Title     string
		Generated string // human time
		Stamp     string // Unix nanoseconds, for tests to see a new page
		Refresh   int
		Views     []*viewModel
		Exporters []exporterModel
	}

	viewModel struct {
		ID          string // HTML id: "view-3"
		Name        string
		Description string
		Unit        string // of the values shown: "1" for a count
		MeasureUnit string // a count's measure's unit, when not "1"
		Agg         string // "Count", "Sum", "Distribution", "LastValue"
		Keys        []string
		Since       string // aggregating since
		Total       string // the summary column: total count, sum, or last value
		Rows        []rowModel
		Hidden      int // rows left out by MaxRows
		Card        cardinality
		JSONURL     string
		MsgpackURL  string
		IsDist      bool
	}

	cardinality struct {
		Len, Limit int
		Percent    float64 // of the limit (0 without limit)
		GaugeW     float64 // width of the gauge's bar, of gaugeWidth
		Overflowed uint64  // recordings aggregated into the overflow row
		Full       bool    // Len reached Limit
	}

	rowModel struct {
		Tags     []tagModel
		Overflow bool   // the otel.metric.overflow row
		Value    string // Count, Sum, LastValue
		Dist     *distModel
	}

	tagModel struct{ Key, Value string }

	distModel struct {
		Count                         int64
		Mean, Min, Max, P50, P90, P99 string
		Chart                         chart
		Exemplars                     []exemplarModel
	}

	// exemplarModel is a bucket's latest exemplar
	// (view.DistributionData.ExemplarsPerBucket).
	exemplarModel struct {
		Bucket      string // "[10, 100)"
		Value       string
		At          string // RFC 3339, milliseconds
		Trace, Span string // hex IDs of a stats.SpanContext attachment
		Attachments string // the others, "k=v" sorted by key
	}

	exporterModel struct {
		Name                       string
		Status                     string // "ok", "failing", "idle"
		Exports, Failures          uint64
		Payloads                   uint64
		Bytes                      string
		Retries, Dropped           uint64
		Queued                     int
		LastSuccess, LastSuccessAt string
		LastError                  string
	}
)

func (h *handler) build(now time.Time) *pageModel {
	p := &pageModel{
		Title:     h.opts.Title,
		Generated: now.Format("2006-01-02 15:04:05 MST"),
		Stamp:     strconv.FormatInt(now.UnixNano(), 10),
		Refresh:   h.refresh,
	}
	core.Collect() // callback gauges and counters (metric, runtime) read now
	for i, cv := range core.Views() {
		if vm := h.buildView(i, cv, now); vm != nil {
			p.Views = append(p.Views, vm)
		}
	}
	for i, e := range h.opts.Exporters {
		if e != nil {
			p.Exporters = append(p.Exporters, exporterOf("exporter "+strconv.Itoa(i+1), e.Stats(), now))
		}
	}
	for _, s := range h.opts.ExporterStats {
		if s.Stats != nil {
			p.Exporters = append(p.Exporters, exporterOf(s.Name, s.Stats(), now))
		}
	}
	return p
}

// buildView returns the model of one view, or nil when it was unregistered
// since core.Views was read.
func (h *handler) buildView(i int, cv *core.View, now time.Time) *viewModel {
	rows, err := view.RetrieveData(cv.Name)
	if err != nil {
		return nil
	}
	a := cv.Agg
	m := promname.MetricOf(cv) // the unit and help every exporter gives the view
	vm := &viewModel{
		ID:          "view-" + strconv.Itoa(i),
		Name:        cv.Name,
		Description: m.Help,
		Unit:        unitName(m.Unit),
		Agg:         aggName(a.Kind()),
		Keys:        cv.Keys,
		Since:       a.Start().Format("15:04:05") + " (" + ago(now.Sub(a.Start())) + ")",
		IsDist:      a.Kind() == core.KindDistribution || a.Kind() == core.KindExponential,
		JSONURL:     h.snapshotLink(cv.Name, "json"),
		MsgpackURL:  h.snapshotLink(cv.Name, "msgpack"),
		Card:        cardinality{Len: a.Len(), Limit: a.Limit(), Overflowed: a.Overflowed()},
	}
	if a.Kind() == core.KindCount && unitName(cv.Unit) != vm.Unit {
		// A count counts recordings: its values have no unit.
		vm.MeasureUnit = unitName(cv.Unit)
	}
	if m.UpperInclusive && a.Kind() == core.KindDistribution {
		// (An exponential distribution's buckets are upper-inclusive too:
		// its bars' titles say so.)
		vm.Agg += " (v <= bound)"
	}
	if c := &vm.Card; c.Limit > 0 {
		c.Percent = min(100, 100*float64(c.Len)/float64(c.Limit))
		c.Full = c.Len >= c.Limit
		c.GaugeW = round1(c.Percent * gaugeWidth / 100)
		if c.Len > 0 {
			c.GaugeW = max(c.GaugeW, 1)
		}
	}
	vm.Total = total(a.Kind(), rows)
	shown := rows
	if h.maxRows >= 0 && len(rows) > h.maxRows {
		shown = rows[:h.maxRows]
		vm.Hidden = len(rows) - h.maxRows
		if last := rows[len(rows)-1]; isOverflow(last) { // always show it
			shown = append(shown[:h.maxRows:h.maxRows], last)
			vm.Hidden--
		}
	}
	vm.Rows = make([]rowModel, len(shown))
	for j, r := range shown {
		vm.Rows[j] = rowOf(r)
	}
	return vm
}

// unitName spells out the UCUM units of package stats that are not
// obvious: "By" is bytes.
func unitName(u string) string {
	if u == "By" {
		return "bytes"
	}
	return u
}

func aggName(k core.Kind) string {
	switch k {
	case core.KindCount:
		return "Count"
	case core.KindSum:
		return "Sum"
	case core.KindDistribution:
		return "Distribution"
	case core.KindLastValue:
		return "LastValue"
	case core.KindExponential:
		return "ExponentialDistribution"
	case core.KindSummary:
		return "Summary"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// total is the view's summary value: the total count or sum over its rows
// (they partition the recordings, the overflow row included), the count of
// a distribution, or the last value of a view with one row.
func total(k core.Kind, rows []*view.Row) string {
	var n int64
	var s float64
	for _, r := range rows {
		switch d := r.Data.(type) {
		case *view.CountData:
			n += d.Value
		case *view.SumData:
			s += d.Value
		case *view.DistributionData:
			n += d.Count
		case *view.ExponentialDistributionData:
			n += d.Count
		case *view.SummaryData:
			n += d.Count
		case *view.LastValueData:
			s = d.Value
		}
	}
	switch k {
	case core.KindCount:
		return strconv.FormatInt(n, 10)
	case core.KindSummary: // summary.go
		return strconv.FormatInt(n, 10) + " summarised"
	case core.KindDistribution, core.KindExponential:
		return strconv.FormatInt(n, 10) + " recorded"
	case core.KindSum:
		return formatFloat(s)
	}
	switch len(rows) {
	case 0:
		return "-"
	case 1:
		return formatFloat(s)
	}
	return strconv.Itoa(len(rows)) + " rows"
}

func isOverflow(r *view.Row) bool { return r.IsOverflow() }

func rowOf(r *view.Row) rowModel {
	rm := rowModel{Overflow: isOverflow(r)}
	rm.Tags = make([]tagModel, len(r.Tags))
	for i, t := range r.Tags {
		rm.Tags[i] = tagModel{Key: t.Key.Name(), Value: t.Value}
	}
	if rm.Overflow { // shown as OpenTelemetry's attribute, not as its keys set to view.OverflowValue
		rm.Tags = []tagModel{{Key: view.OverflowKey.Name(), Value: "true"}}
	}
	switch d := r.Data.(type) {
	case *view.CountData:
		rm.Value = strconv.FormatInt(d.Value, 10)
	case *view.SumData:
		rm.Value = formatFloat(d.Value)
	case *view.LastValueData:
		rm.Value = formatFloat(d.Value)
	case *view.SummaryData:
		rm.Value = summaryValue(d)
	case *view.DistributionData:
		b := d.Bounds()
		rm.Dist = &distModel{
			Count: d.Count,
			Mean:  formatFloat(d.Mean),
			Min:   formatFloat(d.Min),
			Max:   formatFloat(d.Max),
			P50:   formatFloat(quantile(b, d, 0.5)),
			P90:   formatFloat(quantile(b, d, 0.9)),
			P99:   formatFloat(quantile(b, d, 0.99)),
			Chart: barChart(b, d),
		}
		rm.Dist.Exemplars = exemplarsOf(b, d.ExemplarsPerBucket)
	case *view.ExponentialDistributionData:
		s := snapshotOf(d)
		rm.Dist = &distModel{
			Count: d.Count,
			Mean:  formatFloat(d.Mean()),
			Min:   formatFloat(d.Min),
			Max:   formatFloat(d.Max),
			P50:   formatFloat(expQuantile(s, 0.5)),
			P90:   formatFloat(expQuantile(s, 0.9)),
			P99:   formatFloat(expQuantile(s, 0.99)),
			Chart: expChart(s),
		}
	}
	return rm
}

// exemplarsOf renders the buckets' exemplars, in bucket order.
func exemplarsOf(bounds []float64, exs []*view.Exemplar) []exemplarModel {
	var out []exemplarModel
	for i, e := range exs {
		if e == nil {
			continue
		}
		lo, hi := "-Inf", "+Inf"
		if i > 0 && i-1 < len(bounds) {
			lo = formatFloat(bounds[i-1])
		}
		if i < len(bounds) {
			hi = formatFloat(bounds[i])
		}
		m := exemplarModel{Bucket: "[" + lo + ", " + hi + ")", Value: formatFloat(e.Value),
			At: e.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z07:00")}
		var attrs []string
		for k, v := range e.Attachments {
			if sc, ok := v.(stats.SpanContext); ok && k == stats.AttachmentKeySpanContext {
				m.Trace, m.Span = hex.EncodeToString(sc.TraceID[:]), hex.EncodeToString(sc.SpanID[:])
				continue
			}
			attrs = append(attrs, k+"="+fmt.Sprint(v))
		}
		slices.Sort(attrs)
		m.Attachments = strings.Join(attrs, " ")
		out = append(out, m)
	}
	return out
}

// snapshotLink returns the link to a view's snapshot in format.
func (h *handler) snapshotLink(name, format string) string {
	base, sep := h.opts.SnapshotURL, "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "view=" + url.QueryEscape(name) + "&format=" + format
}

func exporterOf(name string, s push.Stats, now time.Time) exporterModel {
	m := exporterModel{
		Name:     name,
		Exports:  s.Exports,
		Failures: s.Failures,
		Payloads: s.Sent,
		Bytes:    formatBytes(s.Bytes),
		Retries:  s.Retries,
		Dropped:  s.Dropped,
		Queued:   s.Queued,
	}
	m.LastSuccess, m.LastSuccessAt = "never", ""
	if !s.LastSuccess.IsZero() {
		m.LastSuccess = ago(now.Sub(s.LastSuccess))
		m.LastSuccessAt = s.LastSuccess.Format(time.RFC3339)
	}
	if s.LastError != nil {
		m.LastError = s.LastError.Error()
	}
	switch {
	case s.Exports == 0:
		m.Status = "idle"
	case s.LastError == nil:
		m.Status = "ok"
	case s.Failures >= s.Exports || s.LastSuccess.IsZero():
		m.Status = "failing"
	default:
		// Stats does not say whether the last error is older than the last
		// success: some exports failed.
		m.Status = "errors"
	}
	return m
}
