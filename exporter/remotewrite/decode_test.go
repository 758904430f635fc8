package remotewrite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/zerostat/zerostat/internal/promnative"
)

// A strict test decoder of WriteRequests (the benchmarks module checks
// the same bytes with the official protobuf runtime).

type series struct {
	labels    []label
	value     float64 // a histogram's sum
	ts        int64
	exemplars []exemplar
	// hist is the series' native histogram (TimeSeries.histograms) and
	// resetHint its reset_hint; value and ts are then its sum and time.
	hist      *promnative.Histogram
	resetHint uint64
}

// exemplar is one TimeSeries.exemplars element.
type exemplar struct {
	labels []label
	value  float64
	ts     int64
}

// key renders the series as `name{a="x",b="y"}` with labels sorted by
// name (values unescaped).
func (s series) key() string {
	var name string
	var parts []string
	for _, l := range s.labels {
		if l.name == "__name__" {
			name = l.value
			continue
		}
		parts = append(parts, l.name+"="+l.value)
	}
	slices.Sort(parts)
	return name + "{" + strings.Join(parts, ",") + "}"
}

type reader struct{ b []byte }

func (r *reader) varint() (uint64, error) {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		return 0, errors.New("bad varint")
	}
	r.b = r.b[n:]
	return v, nil
}

func (r *reader) key() (field int, wt int, err error) {
	k, err := r.varint()
	return int(k >> 3), int(k & 7), err
}

func (r *reader) bytes() ([]byte, error) {
	n, err := r.varint()
	if err != nil {
		return nil, err
	}
	if uint64(len(r.b)) < n {
		return nil, errors.New("short length-delimited field")
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b, nil
}

func decodeWriteRequest(b []byte) ([]series, error) {
	ss, _, err := decodeWriteRequestMeta(b)
	return ss, err
}

// metadata is one MetricMetadata of a WriteRequest.
type metadata struct {
	typ              uint64
	name, help, unit string
}

// decodeWriteRequestMeta decodes the time series and the metadata.
func decodeWriteRequestMeta(b []byte) ([]series, []metadata, error) {
	r := &reader{b}
	var out []series
	var meta []metadata
	for len(r.b) > 0 {
		f, wt, err := r.key()
		if err != nil {
			return nil, nil, err
		}
		if (f != 1 && f != 3) || wt != 2 {
			return nil, nil, fmt.Errorf("WriteRequest: unexpected field %d wire type %d", f, wt)
		}
		m, err := r.bytes()
		if err != nil {
			return nil, nil, err
		}
		if f == 3 {
			md, err := decodeMetadata(m)
			if err != nil {
				return nil, nil, err
			}
			meta = append(meta, md)
			continue
		}
		s, err := decodeTimeSeries(m)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, s)
	}
	return out, meta, nil
}

func decodeMetadata(b []byte) (metadata, error) {
	r := &reader{b}
	var md metadata
	for len(r.b) > 0 {
		f, wt, err := r.key()
		if err != nil {
			return md, err
		}
		switch {
		case f == 1 && wt == 0:
			if md.typ, err = r.varint(); err != nil {
				return md, err
			}
		case (f == 2 || f == 4 || f == 5) && wt == 2:
			v, err := r.bytes()
			if err != nil {
				return md, err
			}
			switch f {
			case 2:
				md.name = string(v)
			case 4:
				md.help = string(v)
			case 5:
				md.unit = string(v)
			}
		default:
			return md, fmt.Errorf("MetricMetadata: unexpected field %d wire type %d", f, wt)
		}
	}
	if md.name == "" {
		return md, errors.New("MetricMetadata without a family name")
	}
	return md, nil
}

func decodeTimeSeries(b []byte) (series, error) {
	r := &reader{b}
	var s series
	samples := 0
	for len(r.b) > 0 {
		f, wt, err := r.key()
		if err != nil {
			return s, err
		}
		if wt != 2 {
			return s, fmt.Errorf("TimeSeries: field %d wire type %d", f, wt)
		}
		m, err := r.bytes()
		if err != nil {
			return s, err
		}
		switch f {
		case 1:
			l, err := decodeLabel(m)
			if err != nil {
				return s, err
			}
			if n := len(s.labels); n > 0 && s.labels[n-1].name >= l.name {
				return s, fmt.Errorf("labels not sorted: %q then %q", s.labels[n-1].name, l.name)
			}
			s.labels = append(s.labels, l)
		case 2:
			if len(s.exemplars) > 0 {
				return s, errors.New("TimeSeries: a sample after an exemplar (not proto.Marshal's order)")
			}
			samples++
			if s.value, s.ts, err = decodeSample(m); err != nil {
				return s, err
			}
		case 3:
			e, err := decodeExemplar(m)
			if err != nil {
				return s, err
			}
			s.exemplars = append(s.exemplars, e)
		case 4:
			if len(s.exemplars) > 0 {
				return s, errors.New("TimeSeries: a histogram after an exemplar (not proto.Marshal's order)")
			}
			samples++
			if err := decodeHistogram(m, &s); err != nil {
				return s, err
			}
		default:
			return s, fmt.Errorf("TimeSeries: unexpected field %d", f)
		}
	}
	if samples != 1 {
		return s, fmt.Errorf("%d samples and histograms; want 1", samples)
	}
	return s, nil
}

func decodeLabel(b []byte) (label, error) {
	r := &reader{b}
	var l label
	for len(r.b) > 0 {
		f, wt, err := r.key()
		if err != nil {
			return l, err
		}
		if wt != 2 || f < 1 || f > 2 {
			return l, fmt.Errorf("Label: field %d wire type %d", f, wt)
		}
		v, err := r.bytes()
		if err != nil {
			return l, err
		}
		if f == 1 {
			l.name = string(v)
		} else {
			l.value = string(v)
		}
	}
	if l.name == "" || l.value == "" {
		return l, fmt.Errorf("empty label name or value: %+v", l)
	}
	return l, nil
}

func decodeSample(b []byte) (float64, int64, error) {
	r := &reader{b}
	var v float64
	var ts int64
	for len(r.b) > 0 {
		f, wt, err := r.key()
		if err != nil {
			return 0, 0, err
		}
		switch {
		case f == 1 && wt == 1:
			if len(r.b) < 8 {
				return 0, 0, errors.New("short double")
			}
			v = math.Float64frombits(binary.LittleEndian.Uint64(r.b))
			r.b = r.b[8:]
		case f == 2 && wt == 0:
			u, err := r.varint()
			if err != nil {
				return 0, 0, err
			}
			ts = int64(u)
		default:
			return 0, 0, fmt.Errorf("Sample: field %d wire type %d", f, wt)
		}
	}
	return v, ts, nil
}

// decodeExemplar decodes an Exemplar strictly: fields in order, labels
// sorted and not empty.
func decodeExemplar(b []byte) (exemplar, error) {
	r := &reader{b}
	var e exemplar
	last := 0
	for len(r.b) > 0 {
		f, wt, err := r.key()
		if err != nil {
			return e, err
		}
		if f < last || f == last && f != 1 {
			return e, fmt.Errorf("Exemplar: field %d after %d", f, last)
		}
		last = f
		switch {
		case f == 1 && wt == 2:
			m, err := r.bytes()
			if err != nil {
				return e, err
			}
			l, err := decodeLabel(m)
			if err != nil {
				return e, err
			}
			if n := len(e.labels); n > 0 && e.labels[n-1].name >= l.name {
				return e, fmt.Errorf("exemplar labels not sorted: %q then %q", e.labels[n-1].name, l.name)
			}
			e.labels = append(e.labels, l)
		case f == 2 && wt == 1:
			if len(r.b) < 8 {
				return e, errors.New("short double")
			}
			e.value = math.Float64frombits(binary.LittleEndian.Uint64(r.b))
			r.b = r.b[8:]
		case f == 3 && wt == 0:
			u, err := r.varint()
			if err != nil {
				return e, err
			}
			e.ts = int64(u)
		default:
			return e, fmt.Errorf("Exemplar: field %d wire type %d", f, wt)
		}
	}
	return e, nil
}

// decodeHistogram decodes a prompb Histogram strictly (fields in number
// order, count_int present, deltas packed) into s.hist, its sum and
// timestamp into s.value and s.ts.
func decodeHistogram(b []byte, s *series) error {
	r := &reader{b}
	h := &promnative.Histogram{}
	last, hasCount := 0, false
	unzig := func(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
	for len(r.b) > 0 {
		f, wt, err := r.key()
		if err != nil {
			return err
		}
		if f <= last && !(f == last && (f == 8 || f == 11)) {
			return fmt.Errorf("Histogram: field %d after %d", f, last)
		}
		last = f
		switch {
		case wt == 0 && (f == 1 || f == 4 || f == 6 || f == 14 || f == 15):
			u, err := r.varint()
			if err != nil {
				return err
			}
			switch f {
			case 1:
				h.Count, hasCount = u, true
			case 4:
				h.Schema = int32(unzig(u))
			case 6:
				h.ZeroCount = u
			case 14:
				s.resetHint = u
			case 15:
				s.ts = int64(u)
			}
		case wt == 1 && (f == 3 || f == 5):
			if len(r.b) < 8 {
				return errors.New("short double")
			}
			v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
			r.b = r.b[8:]
			if f == 3 {
				h.Sum = v
			} else if v != 0 {
				return fmt.Errorf("zero threshold %v; want 0", v)
			}
		case wt == 2 && (f == 8 || f == 11):
			m, err := r.bytes()
			if err != nil {
				return err
			}
			var sp promnative.Span
			sr := &reader{m}
			for len(sr.b) > 0 {
				sf, swt, err := sr.key()
				if err != nil || swt != 0 || sf < 1 || sf > 2 {
					return fmt.Errorf("BucketSpan: field %d wire type %d (%v)", sf, swt, err)
				}
				u, err := sr.varint()
				if err != nil {
					return err
				}
				if sf == 1 {
					sp.Offset = int32(unzig(u))
				} else {
					sp.Length = uint32(u)
				}
			}
			if f == 8 {
				h.NegativeSpans = append(h.NegativeSpans, sp)
			} else {
				h.PositiveSpans = append(h.PositiveSpans, sp)
			}
		case wt == 2 && (f == 9 || f == 12):
			m, err := r.bytes()
			if err != nil {
				return err
			}
			var ds []int64
			for dr := (&reader{m}); len(dr.b) > 0; {
				u, err := dr.varint()
				if err != nil {
					return err
				}
				ds = append(ds, unzig(u))
			}
			if f == 9 {
				h.NegativeDeltas = ds
			} else {
				h.PositiveDeltas = ds
			}
		default:
			return fmt.Errorf("Histogram: unexpected field %d wire type %d", f, wt)
		}
	}
	if !hasCount {
		return errors.New("Histogram without count_int")
	}
	s.hist, s.value = h, h.Sum
	return nil
}
