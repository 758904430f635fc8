package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/zerostat/zerostat/view"
)

// tableExporter prints each reporting period's views as one table. The
// reporting loop hands it the views of one period one after another with
// the same End time; a new End time flushes the previous period.
type tableExporter struct {
	mu      sync.Mutex
	w       io.Writer
	end     time.Time
	pending []*view.Data
	periods int
}

var _ view.Exporter = (*tableExporter)(nil)

func newTableExporter(w io.Writer) *tableExporter { return &tableExporter{w: w} }

func (e *tableExporter) ExportView(d *view.Data) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !d.End.Equal(e.end) {
		e.flushLocked()
		e.end = d.End
	}
	e.pending = append(e.pending, d)
}

func (e *tableExporter) flush() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.flushLocked()
}

func (e *tableExporter) flushLocked() {
	if len(e.pending) == 0 {
		return
	}
	e.periods++
	sort.Slice(e.pending, func(i, j int) bool { return e.pending[i].View.Name < e.pending[j].View.Name })
	fmt.Fprintf(e.w, "\n== period %d, %s ==\n", e.periods, e.end.Format("15:04:05.000"))
	writeTable(e.w, e.pending)
	e.pending = e.pending[:0]
}

// writeTable prints views as aligned columns: view, tags, value.
func writeTable(w io.Writer, ds []*view.Data) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VIEW\tTAGS\tVALUE")
	for _, d := range ds {
		if len(d.Rows) == 0 {
			fmt.Fprintf(tw, "%s\t-\t(no data)\n", d.View.Name)
		}
		for _, r := range d.Rows {
			var tags []string
			for _, t := range r.Tags {
				tags = append(tags, t.Key.Name()+"="+t.Value)
			}
			ts := strings.Join(tags, ",")
			if ts == "" {
				ts = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", d.View.Name, ts, formatData(r.Data))
		}
	}
	tw.Flush()
}

func formatData(d view.AggregationData) string {
	switch d := d.(type) {
	case *view.CountData:
		return fmt.Sprint(d.Value)
	case *view.SumData:
		return formatFloat(d.Value)
	case *view.LastValueData:
		return formatFloat(d.Value)
	case *view.DistributionData:
		return fmt.Sprintf("count=%d mean=%.3g min=%.3g max=%.3g p50=%.3g p99=%.3g",
			d.Count, d.Mean, d.Min, d.Max, quantile(d, 0.5), quantile(d, 0.99))
	}
	return fmt.Sprint(d)
}

// quantile estimates the q-quantile of a distribution by linear
// interpolation inside its bucket, as Prometheus's histogram_quantile does,
// clamped to the observed min and max.
func quantile(d *view.DistributionData, q float64) float64 {
	if d.Count == 0 {
		return math.NaN()
	}
	bounds := d.Bounds()
	rank := q * float64(d.Count)
	var cum float64
	for i, c := range d.CountPerBucket {
		if c == 0 || cum+float64(c) < rank {
			cum += float64(c)
			continue
		}
		lo, hi := d.Min, d.Max
		if i > 0 {
			lo = math.Max(lo, bounds[i-1])
		}
		if i < len(bounds) {
			hi = math.Min(hi, bounds[i])
		}
		return lo + (hi-lo)*(rank-cum)/float64(c)
	}
	return d.Max
}

// formatFloat prints integral values in full and others with 6 digits.
func formatFloat(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}
