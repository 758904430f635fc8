package remotewrite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// A strict test decoder of WriteRequests (the benchmarks module checks
// the same bytes with the official protobuf runtime).

type series struct {
	labels    []label
	value     float64
	ts        int64
	exemplars []exemplar
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
		default:
			return s, fmt.Errorf("TimeSeries: unexpected field %d", f)
		}
	}
	if samples != 1 {
		return s, fmt.Errorf("%d samples; want 1", samples)
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
