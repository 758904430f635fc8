package otlp

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// A small reader of the OTLP requests we write, for the tests of this
// module (which cannot use the protobuf runtime; benchmarks/otlpcheck
// compares with the official types). It reads the fields by number, so it
// also checks that every length is consistent.

// msg is a decoded message: its fields by number, in order.
type msg map[uint64][]field

func parseMsg(b []byte) (msg, error) {
	m := msg{}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return nil, err
		}
		m[f.num] = append(m[f.num], f)
		b = rest
	}
	return m, nil
}

func (m msg) sub(num uint64) []msg {
	var out []msg
	for _, f := range m[num] {
		s, err := parseMsg(f.data)
		if err != nil {
			panic(fmt.Sprintf("field %d: %v", num, err))
		}
		out = append(out, s)
	}
	return out
}

func (m msg) str(num uint64) string {
	if fs := m[num]; len(fs) > 0 {
		return string(fs[len(fs)-1].data)
	}
	return ""
}

func (m msg) u64(num uint64) (uint64, bool) {
	if fs := m[num]; len(fs) > 0 {
		return fs[len(fs)-1].v, true
	}
	return 0, false
}

func (m msg) f64(num uint64) (float64, bool) {
	v, ok := m.u64(num)
	return math.Float64frombits(v), ok
}

// packed64 decodes a packed repeated fixed64 field.
func (m msg) packed64(num uint64) []uint64 {
	var out []uint64
	for _, f := range m[num] {
		for d := f.data; len(d) >= 8; d = d[8:] {
			out = append(out, binary.LittleEndian.Uint64(d))
		}
	}
	return out
}

// decoded is a request as the tests look at it.
type decoded struct {
	resource     map[string]any // string or int64 values
	scope, scVer string
	metrics      map[string]*dmetric
}

type dmetric struct {
	name, desc, unit string
	kind             string // "sum", "gauge", "histogram", "exponential_histogram"
	temporality      uint64
	monotonic        bool
	points           map[string]*dpoint // by attributes, "k=v,k=v"
}

type dpoint struct {
	attrs       string
	start, time uint64
	asInt       int64
	asDouble    float64
	isInt       bool
	count       uint64
	sum         *float64
	min, max    *float64
	buckets     []uint64
	bounds      []float64
	exemplars   int // how many
	// Exponential histograms.
	scale          int32
	zeroCount      uint64
	hasPos, hasNeg bool // the Buckets field is present
	posOff, negOff int32
	pos, neg       []uint64
	flags          uint64
	zeroThreshold  float64
}

// value is the point's number, whichever field carries it.
func (p *dpoint) value() float64 {
	if p.isInt {
		return float64(p.asInt)
	}
	return p.asDouble
}

func decodeRequest(t testing.TB, b []byte) *decoded {
	t.Helper()
	req, err := parseMsg(b)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	rms := req.sub(1)
	if len(rms) != 1 {
		t.Fatalf("%d ResourceMetrics; want 1", len(rms))
	}
	d := &decoded{resource: map[string]any{}, metrics: map[string]*dmetric{}}
	for _, res := range rms[0].sub(1) {
		for _, kv := range res.sub(1) {
			av := kv.sub(2)[0]
			if _, ok := av[1]; ok {
				d.resource[kv.str(1)] = av.str(1)
			} else if v, ok := av.u64(3); ok {
				d.resource[kv.str(1)] = int64(v)
			}
		}
	}
	sms := rms[0].sub(2)
	if len(sms) != 1 {
		t.Fatalf("%d ScopeMetrics; want 1", len(sms))
	}
	sc := sms[0].sub(1)[0]
	d.scope, d.scVer = sc.str(1), sc.str(2)
	for _, m := range sms[0].sub(2) {
		dm := &dmetric{name: m.str(1), desc: m.str(2), unit: m.str(3), points: map[string]*dpoint{}}
		var data msg
		for num, kind := range map[uint64]string{5: "gauge", 7: "sum", 9: "histogram", 10: "exponential_histogram"} {
			if s := m.sub(num); len(s) > 0 {
				dm.kind, data = kind, s[0]
			}
		}
		if data == nil {
			t.Fatalf("metric %q has no data", dm.name)
		}
		dm.temporality, _ = data.u64(2)
		mono, _ := data.u64(3)
		dm.monotonic = mono == 1
		attrField := uint64(7)
		switch dm.kind {
		case "histogram":
			attrField = 9
		case "exponential_histogram":
			attrField = 1
		}
		for _, p := range data.sub(1) {
			dp := &dpoint{}
			var attrs []string
			for _, kv := range p.sub(attrField) {
				av := kv.sub(2)[0]
				if b, ok := av.u64(2); ok { // bool_value
					attrs = append(attrs, fmt.Sprintf("%s=%v", kv.str(1), b == 1))
					continue
				}
				attrs = append(attrs, kv.str(1)+"="+av.str(1))
			}
			dp.attrs = strings.Join(attrs, ",")
			dp.start, _ = p.u64(2)
			dp.time, _ = p.u64(3)
			if dm.kind == "exponential_histogram" {
				decodeExpPoint(p, dp)
			} else if dm.kind == "histogram" {
				dp.exemplars = len(p[8])
				dp.count, _ = p.u64(4)
				if v, ok := p.f64(5); ok {
					dp.sum = &v
				}
				dp.buckets = p.packed64(6)
				for _, x := range p.packed64(7) {
					dp.bounds = append(dp.bounds, math.Float64frombits(x))
				}
				if v, ok := p.f64(11); ok {
					dp.min = &v
				}
				if v, ok := p.f64(12); ok {
					dp.max = &v
				}
			} else if v, ok := p.u64(6); ok {
				dp.asInt, dp.isInt = int64(v), true
			} else {
				dp.asDouble, _ = p.f64(4)
			}
			dm.points[dp.attrs] = dp
		}
		d.metrics[dm.name] = dm
	}
	return d
}

// decodeExpPoint reads p, an ExponentialHistogramDataPoint, into dp
// (attributes and times aside).
func decodeExpPoint(p msg, dp *dpoint) {
	dp.count, _ = p.u64(4)
	if v, ok := p.f64(5); ok {
		dp.sum = &v
	}
	if v, ok := p.u64(6); ok {
		dp.scale = unzigzag32(v)
	}
	dp.zeroCount, _ = p.u64(7)
	buckets := func(num uint64) (present bool, off int32, counts []uint64) {
		bs := p.sub(num)
		if len(bs) == 0 {
			return false, 0, nil
		}
		b := bs[len(bs)-1]
		if v, ok := b.u64(1); ok {
			off = unzigzag32(v)
		}
		return true, off, b.packedVarint(2)
	}
	dp.hasPos, dp.posOff, dp.pos = buckets(8)
	dp.hasNeg, dp.negOff, dp.neg = buckets(9)
	dp.flags, _ = p.u64(10)
	dp.exemplars = len(p[11])
	if v, ok := p.f64(12); ok {
		dp.min = &v
	}
	if v, ok := p.f64(13); ok {
		dp.max = &v
	}
	dp.zeroThreshold, _ = p.f64(14)
}

// unzigzag32 decodes a sint32.
func unzigzag32(v uint64) int32 {
	u := uint32(v)
	return int32(u>>1) ^ -int32(u&1)
}

// packedVarint decodes a packed repeated varint field.
func (m msg) packedVarint(num uint64) []uint64 {
	var out []uint64
	for _, f := range m[num] {
		if f.typ == wireVarint { // unpacked, which a reader must accept too
			out = append(out, f.v)
			continue
		}
		for d := f.data; len(d) > 0; {
			v, n := binary.Uvarint(d)
			if n <= 0 {
				panic(fmt.Sprintf("field %d: malformed packed varint", num))
			}
			out = append(out, v)
			d = d[n:]
		}
	}
	return out
}

// pointNames lists the attribute strings of m's points, sorted.
func (m *dmetric) pointNames() []string {
	var out []string
	for k := range m.points {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
