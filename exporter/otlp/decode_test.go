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
	kind             string // "sum", "gauge", "histogram"
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
		for num, kind := range map[uint64]string{5: "gauge", 7: "sum", 9: "histogram"} {
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
		if dm.kind == "histogram" {
			attrField = 9
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
			if dm.kind == "histogram" {
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

// pointNames lists the attribute strings of m's points, sorted.
func (m *dmetric) pointNames() []string {
	var out []string
	for k := range m.points {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
