package prometheus

import (
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/promname"
	pw "github.com/zerostat/zerostat/internal/protowire"
)

// A summary view (view.Summary, metric.NewSummary) is a Prometheus
// summary on every path, as client_golang writes one:
//
//	# TYPE go_gc_duration_seconds summary
//	go_gc_duration_seconds{quantile="0.0"} 1.9e-05
//	...
//	go_gc_duration_seconds_sum 0.000123
//	go_gc_duration_seconds_count 2
//
// one sample per quantile labelled quantile="<q>" (promname.Family.Qs,
// spelled as "le" values are), then "_sum" and "_count" (the count as a
// counter's value: a float in the text format, an integer in
// OpenMetrics); in OpenMetrics also "_created", and no "_sum" when it is
// negative or NaN (OpenMetrics 1.0: a summary's count and sum are
// counters), as for a histogram. In the protobuf exposition, a Summary
// message per series.

// Summary fields of client_model's metrics.proto:
//
//	message Metric   { ...; Summary summary = 4; ... }
//	message Summary  { uint64 sample_count = 1; double sample_sum = 2; repeated Quantile quantile = 3; Timestamp created_timestamp = 4; }
//	message Quantile { double quantile = 1; double value = 2; }
const (
	tagMetricSummary = 4<<3 | pw.WireBytes

	tagSummaryCount    = 1<<3 | pw.WireVarint
	tagSummarySum      = 2<<3 | pw.WireFixed64
	tagSummaryQuantile = 3<<3 | pw.WireBytes
	tagSummaryCreated  = 4<<3 | pw.WireBytes

	tagQuantileQ     = 1<<3 | pw.WireFixed64
	tagQuantileValue = 2<<3 | pw.WireFixed64

	pbSummary = 2 // MetricType SUMMARY
)

// summaryQs returns the quantile labels of a summary family:
// `quantile="<q>"` per quantile.
func summaryQs(pf *promname.Family) []string {
	qs := make([]string, len(pf.Qs))
	for i, q := range pf.Qs {
		qs[i] = `quantile="` + q + `"`
	}
	return qs
}

// appendSummary appends the samples of summary series s, labelled lb,
// in the text format or (om) OpenMetrics. No allocation once h.quants has
// grown.
func (h *Handler) appendSummary(dst []byte, fam *family, s *core.Series, lb []byte, om bool) []byte {
	appendFloat := promname.AppendFloat
	if om {
		appendFloat = promname.AppendOpenMetricsFloat
	}
	n, sum, vals := s.ReadSummary(h.quants)
	h.quants = vals
	for i, v := range vals {
		dst = append(dst, fam.sampleName...)
		dst = append(dst, '{')
		if len(lb) > 0 {
			dst = append(append(dst, lb...), ',')
		}
		dst = append(dst, fam.qs[i]...)
		dst = append(dst, '}', ' ')
		dst = append(appendFloat(dst, v+0), '\n') // +0: no "-0"
	}
	if !om || promname.CounterValid(sum) {
		dst = appendName(dst, fam.sumName, lb)
		dst = append(appendFloat(dst, sum+0), '\n')
	}
	dst = appendName(dst, fam.countName, lb)
	return append(appendBucketCount(dst, int64(n), om), '\n')
}

// appendSummaryProto appends the Metric of summary series s, whose label
// fields are lb: a Summary message (count, sum, a Quantile per quantile,
// the created timestamp when withCreated); qs are its view's quantiles.
func (h *Handler) appendSummaryProto(dst []byte, qs []float64, s *core.Series, lb []byte, withCreated bool, startNs int64) []byte {
	n, sum, vals := s.ReadSummary(h.quants)
	h.quants = vals
	const qSize = 2 * pw.FixedFieldSize
	size := pw.VarintFieldSize(n) + pw.FixedFieldSize + len(vals)*pw.LenFieldSize(qSize)
	if withCreated {
		size += pw.LenFieldSize(timestampSize(startNs))
	}
	dst = pw.AppendLen(dst, tagFamilyMetric, len(lb)+pw.LenFieldSize(size))
	dst = append(dst, lb...)
	dst = pw.AppendLen(dst, tagMetricSummary, size)
	dst = pw.AppendVarint(dst, tagSummaryCount, n)
	dst = pw.AppendDouble(dst, tagSummarySum, sum+0)
	for i, v := range vals {
		dst = pw.AppendLen(dst, tagSummaryQuantile, qSize)
		dst = pw.AppendDouble(dst, tagQuantileQ, qs[i])
		dst = pw.AppendDouble(dst, tagQuantileValue, v+0)
	}
	if withCreated {
		dst = appendTimestamp(dst, tagSummaryCreated, startNs)
	}
	return dst
}
