package remotewrite

import "github.com/zerostat/zerostat/internal/core"

// A summary view (view.Summary, metric.NewSummary) is written as the
// series Prometheus stores for a scraped summary: one per quantile, named
// after the family and labelled quantile="<q>" (spelled as the scrape
// handler spells it, promname.Family.Qs), then "<name>_sum" and
// "<name>_count", with SUMMARY metadata. Its family is laid out as a
// classic histogram's (family.classic) with the "le" slot named
// "quantile": a row is len(quantiles)+2 series, and a stale row marks
// each of them.

// metaSummary is prompb's MetricMetadata.MetricType SUMMARY.
const metaSummary = 5

// appendSummaryRow writes the series of summary series s: its value of
// each quantile, its sum and its count.
func (w *Writer) appendSummaryRow(f *family, s *core.Series, slots []slot, vids []uint32, strs []string, ts int64) {
	n, sum, vals := s.ReadSummary(w.quants)
	w.quants = vals
	for i, v := range vals {
		w.appendSeries(slots, vids, strs, f.sample, f.les[i], v, ts, nil)
	}
	w.appendSeries(slots, vids, strs, f.sumName, "", sum, ts, nil)
	w.appendSeries(slots, vids, strs, f.countName, "", float64(n), ts, nil)
}
