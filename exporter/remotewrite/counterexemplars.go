package remotewrite

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/promname"
)

// carryExemplars reads the exemplars of series s into w.exs (a
// histogram's one per bucket, a counter's the slots of its reservoir) and
// sets in st.ex what this push carries of each: the exemplar, unless a
// delivered push carried it already (sentExemplar). st.ex is taken from
// f.sent for a series with exemplars only (a series without pays no
// lookup), and made on its first push with one, the only allocation. The
// caller clears w.exs after writing the row: it holds no exemplar past
// it.
func (w *Writer) carryExemplars(f *family, s *core.Series, st *sentSeries) []*core.Exemplar {
	exs := s.Exemplars(w.exs[:0])
	w.exs = exs
	if len(exs) > 0 {
		if st.ex = f.sent[s].ex; len(st.ex) != len(exs) {
			st.ex = make([]sentExemplar, len(exs))
		}
	}
	for i, x := range exs {
		if x == st.ex[i].delivered {
			x = nil // delivered already
		}
		st.ex[i].carried = x
	}
	return exs
}

// appendCounterRow writes the time series of a Count's or Sum's series s,
// of value v: a counter's (its family's type is promname.Counter, as
// OpenMetrics has exemplars on counters only) carries the exemplars of
// its reservoir (core.Series.Exemplars: a bound handle's offers, the otel
// MeterProvider's counters) that no delivered push carried yet, oldest
// first and one per millisecond (inOrder: what Prometheus stores),
// through the histograms' mechanism (carryExemplars, Writer.delivered).
// Reading them ends the reservoir's sampling cycle.
func (w *Writer) appendCounterRow(f *family, s *core.Series, st *sentSeries, slots []slot, vids []uint32, strs []string, v float64, ts int64) {
	var carried []*core.Exemplar
	n := 0
	if f.fam.Type == promname.Counter {
		exs := w.carryExemplars(f, s, st)
		n = len(exs)
		carried = exs[:0] // in place: st.ex holds what is carried
		newest := int64(-1)
		for i := range st.ex[:n] {
			if x := st.ex[i].carried; x != nil {
				carried = append(carried, x)
			}
			if d := st.ex[i].delivered; d != nil {
				newest = max(newest, exemplarMillis(d))
			}
		}
		carried = inOrder(carried, newest)
	}
	w.labels = w.labelsOf(slots, vids, strs, f.sample, "")
	w.pb = appendTimeSeriesExemplars(w.pb, w.labels, v, ts, carried)
	clear(w.exs[:n]) // hold no exemplar past the row
}

// inOrder sorts exs, the exemplars one push carries on a series, by time
// and keeps those Prometheus stores: one per millisecond (the first),
// each later than newest (the millisecond of the newest a delivered push
// carried on the series, -1 for none). Prometheus refuses an exemplar
// whose time, in milliseconds, is not after the last it stored for the
// series (storage.ErrOutOfOrderExemplar, logged as a warning per
// request): a reservoir's offers often share a millisecond. Those left
// out count as carried, and are never sent again. In place.
func inOrder(exs []*core.Exemplar, newest int64) []*core.Exemplar {
	slices.SortStableFunc(exs, func(a, b *core.Exemplar) int { return cmp.Compare(a.Time, b.Time) })
	out := exs[:0]
	for _, x := range exs {
		if ms := exemplarMillis(x); ms > newest {
			out = append(out, x)
			newest = ms
		}
	}
	return out
}

// appendTimeSeriesExemplars appends one WriteRequest.timeseries element:
// the labels (sorted by name, as the spec requires), one sample and the
// exemplars exs, in their order. appendTimeSeries is its case of one
// exemplar or none.
func appendTimeSeriesExemplars(b []byte, labels []label, v float64, ts int64, exs []*core.Exemplar) []byte {
	n := 0
	for _, l := range labels {
		ls := labelSize(l.name, l.value)
		n += 1 + varintSize(uint64(ls)) + ls
	}
	ss := sampleSize(v, ts)
	n += 1 + varintSize(uint64(ss)) + ss
	for _, ex := range exs {
		es := exemplarSize(ex)
		n += 1 + varintSize(uint64(es)) + es
	}
	b = append(b, keyWriteRequestTimeseries)
	b = binary.AppendUvarint(b, uint64(n))
	for _, l := range labels {
		b = appendLabel(b, l.name, l.value)
	}
	b = appendSample(b, v, ts)
	for _, ex := range exs {
		b = append(b, keyTimeSeriesExemplars)
		b = binary.AppendUvarint(b, uint64(exemplarSize(ex)))
		b = appendExemplar(b, ex)
	}
	return b
}
