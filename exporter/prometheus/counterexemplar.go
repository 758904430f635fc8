package prometheus

import (
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/promname"
	pw "github.com/zerostat/zerostat/internal/protowire"
)

// appendCounterExemplar appends, in OpenMetrics, the exemplar of a
// counter's series s when it has some: the newest of its reservoir, which
// only a bound handle fills for a Count or a Sum (core.Bound.KeepExemplar,
// stats.Int64Handle.RecordExemplar: the otel MeterProvider's counters;
// the OTel SDK keeps the same reservoir, and its Prometheus exporter
// writes one exemplar per counter sample too). OpenMetrics allows
// exemplars on a counter's _total sample and on histogram buckets only:
// not on a gauge's (an up-down sum's, a last value's), nor on an
// "unknown" one (a counter shown untyped, see exposition); the text
// format has none. Reading the exemplars ends the reservoir's sampling
// cycle (core.Series.Exemplars). No allocation.
func (h *Handler) appendCounterExemplar(dst []byte, fam *family, s *core.Series, x *exposition) []byte {
	if !x.om || x.untyped || fam.fam.Type != promname.Counter {
		return dst
	}
	exs := s.Exemplars(h.exs[:0])
	h.exs = exs
	if e := newestExemplar(exs); e != nil {
		dst = appendExemplar(dst, e)
	}
	clear(exs) // hold no exemplar past the series
	return dst
}

// tagCounterExemplar is the protobuf exposition's Counter.exemplar field
// (Exemplar exemplar = 2; see proto.go).
const tagCounterExemplar = 2<<3 | pw.WireBytes

// counterExemplarProto returns the exemplar the protobuf exposition
// writes in the Counter message of s (a counter shown as one): the
// newest of its reservoir, as OpenMetrics has it (appendCounterExemplar),
// nil when it has none. The caller writes it before the next series
// reads h.exs again.
func (h *Handler) counterExemplarProto(s *core.Series) *core.Exemplar {
	exs := s.Exemplars(h.exs[:0])
	h.exs = exs
	e := newestExemplar(exs)
	clear(exs) // hold no exemplar past the series (e is the caller's)
	return e
}

// newestExemplar returns the exemplar of exs with the latest time (the
// first of them on a tie), nil when exs holds none.
func newestExemplar(exs []*core.Exemplar) *core.Exemplar {
	var newest *core.Exemplar
	for _, e := range exs {
		if e != nil && (newest == nil || e.Time > newest.Time) {
			newest = e
		}
	}
	return newest
}
