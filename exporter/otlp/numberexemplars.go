package otlp

// tagNDPExemplars is NumberDataPoint's exemplars field: repeated Exemplar
// exemplars = 5 (a Sum's or a Gauge's point).
const tagNDPExemplars = 5<<3 | wireBytes

// appendNumberExemplars appends the exemplars of p (readExemplars: a
// Count's, Sum's or LastValue's series' reservoir, in slot order; in
// delta temporality those offered in the interval) as NumberDataPoint
// exemplars fields, between time_unix_nano and attributes in field
// order. The OTel SDK writes the same (its Sum's and Gauge's data points'
// exemplars, from its FixedSizeReservoir).
func (e *Encoder) appendNumberExemplars(b []byte, p *point) []byte {
	for _, x := range e.exs[p.exFrom:p.exTo] {
		b = appendExemplarField(b, tagNDPExemplars, x)
	}
	return b
}
