package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/zerostat/zerostat/exporter/wire"
	quant "github.com/zerostat/zerostat/internal/quantile"
)

// writePayloadTable prints a payload's views as aligned columns: view,
// tags, value; only those show accepts (nil: all), and a count of the
// others.
func writePayloadTable(w io.Writer, p *wire.Payload, show func(string) bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VIEW\tTAGS\tVALUE")
	hidden := 0
	defer func() {
		tw.Flush()
		if hidden > 0 {
			fmt.Fprintf(w, "(%d more views: /metrics, /snapshot and /debug/stats show every view)\n", hidden)
		}
	}()
	for i := range p.Views {
		v := &p.Views[i]
		if show != nil && !show(v.Name) {
			hidden++
			continue
		}
		if len(v.Rows) == 0 && v.Overflow == nil {
			fmt.Fprintf(tw, "%s\t-\t(no data)\n", v.Name)
		}
		// Rows come in the exporter's (hash) order; print them sorted.
		rows := make([]*wire.Row, len(v.Rows))
		for j := range v.Rows {
			rows[j] = &v.Rows[j]
		}
		sort.Slice(rows, func(a, b int) bool { return slices.Compare(rows[a].Values, rows[b].Values) < 0 })
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Name, formatTags(v.Keys, r.Values), formatRow(v, r))
		}
		if v.Overflow != nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Name, "otel.metric.overflow=true", formatRow(v, v.Overflow))
		}
	}
}

func formatTags(keys, values []string) string {
	var tags []string
	for i, val := range values {
		if val != "" {
			tags = append(tags, keys[i]+"="+val)
		}
	}
	if len(tags) == 0 {
		return "-"
	}
	return strings.Join(tags, ",")
}

func formatRow(v *wire.View, r *wire.Row) string {
	switch v.Aggregation {
	case wire.Count:
		return strconv.FormatUint(r.Count, 10)
	case wire.Sum, wire.UpDownSum:
		return formatFloat(r.Sum)
	case wire.LastValue:
		return formatFloat(r.Value)
	}
	return fmt.Sprintf("count=%d mean=%.3g min=%.3g max=%.3g p50=%.3g p99=%.3g",
		r.Count, r.Mean(), r.Min, r.Max, quantile(v.Bounds, r, 0.5), quantile(v.Bounds, r, 0.99))
}

// formatFloat prints integral values in full and others with 6 digits.
func formatFloat(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// quantile estimates the q-quantile of a distribution row from its buckets.
func quantile(bounds []float64, r *wire.Row, q float64) float64 {
	return quant.Estimate(bounds, r.Buckets, r.Min, r.Max, q)
}
