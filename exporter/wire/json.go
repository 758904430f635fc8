package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"time"
)

// jsonFloat writes non-finite values, which JSON lacks, as the strings
// "NaN", "+Inf" and "-Inf" (Prometheus's spelling).
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

type jsonRow struct {
	Tags            map[string]string `json:"tags"`
	Count           *uint64           `json:"count,omitempty"`
	Sum             *jsonFloat        `json:"sum,omitempty"`
	Value           *jsonFloat        `json:"value,omitempty"`
	Min             *jsonFloat        `json:"min,omitempty"`
	Max             *jsonFloat        `json:"max,omitempty"`
	SumOfSquaredDev *jsonFloat        `json:"sum_sq_dev,omitempty"`
	Buckets         []uint64          `json:"buckets,omitempty"`
	// An exponential distribution's (View.Exp): its scale, zero count
	// and the two bucket ranges.
	Scale     *int32          `json:"scale,omitempty"`
	ZeroCount *uint64         `json:"zero_count,omitempty"`
	Positive  *jsonExpBuckets `json:"positive,omitempty"`
	Negative  *jsonExpBuckets `json:"negative,omitempty"`
	// A summary's (View.RowQuantiles): each quantile and its value.
	Quantiles []jsonQuantile `json:"quantiles,omitempty"`
	Start     *time.Time     `json:"start,omitempty"` // a row's own start (View.RowStarts, View.OverflowStart)
}

// jsonExpBuckets is one sign's buckets of an exponential distribution:
// offset and counts as on the wire (and in OTLP's JSON), and, for people,
// the range of values they cover, low to high: (low, high] for the
// positive buckets, [low, high) for the negative ones (low and high
// negative). An empty range has no low and high.
type jsonExpBuckets struct {
	Offset int32      `json:"offset"`
	Counts []uint64   `json:"counts"`
	Low    *jsonFloat `json:"low,omitempty"`
	High   *jsonFloat `json:"high,omitempty"`
}

func jsonExpOf(h *ExpHistogram, b *ExpBuckets, negative bool) *jsonExpBuckets {
	jb := &jsonExpBuckets{Offset: b.Offset, Counts: b.Counts}
	if jb.Counts == nil {
		jb.Counts = []uint64{}
	}
	if n := len(b.Counts); n > 0 {
		lo, _ := h.Bounds(b.Offset)
		_, hi := h.Bounds(b.Offset + int32(n) - 1)
		if negative {
			lo, hi = -hi, -lo
		}
		jb.Low, jb.High = fp(lo), fp(hi)
	}
	return jb
}

type jsonView struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Unit        string   `json:"unit"`
	Aggregation string   `json:"aggregation"`
	Keys        []string `json:"keys"`
	// KeyTypes names the type of each typed key (View.KeyTypes); tag
	// values stay their strings.
	KeyTypes map[string]string `json:"key_types,omitempty"`
	Bounds   []jsonFloat       `json:"bounds,omitempty"`
	// UpperInclusive: a distribution's buckets count b[i-1] < v <= b[i]
	// (View.UpperInclusive).
	UpperInclusive bool      `json:"upper_inclusive,omitempty"`
	Start          time.Time `json:"start"`
	Overflow       *jsonRow  `json:"overflow,omitempty"`
	Rows           []jsonRow `json:"rows"` // last: WriteJSON streams them
}

type jsonPayload struct {
	Version     int               `json:"version"`
	Start       time.Time         `json:"start"`
	End         time.Time         `json:"end"`
	Temporality string            `json:"temporality"`
	Sequence    uint64            `json:"sequence"`
	Part        uint64            `json:"part"`
	Last        bool              `json:"last"`
	Resource    map[string]string `json:"resource"`
	Views       []jsonView        `json:"views"`
}

func fp(v float64) *jsonFloat { f := jsonFloat(v); return &f }

// MarshalJSON renders the payload for people and tools: tags and resource
// as objects (absent tags left out), aggregations by name, non-finite
// floats as "NaN", "+Inf", "-Inf". It is WriteJSON into one buffer.
func (p *Payload) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	err := p.WriteJSON(&b)
	return b.Bytes(), err
}

// WriteJSON writes the JSON MarshalJSON returns to w, a row at a time:
// it holds one row's JSON at once, not the payload's (a payload of
// 690,000 rows, as the receiver's caps admit, took 400 MiB to marshal
// whole). Cost: a few allocations per row.
func (p *Payload) WriteJSON(w io.Writer) error {
	jp := jsonPayload{
		Version: p.Version, Start: p.Start, End: p.End, Temporality: p.Temporality.String(),
		Sequence: p.Sequence, Part: p.Part, Last: p.Last,
		Resource: map[string]string{}, Views: []jsonView{},
	}
	for _, a := range p.Resource {
		jp.Resource[a.Key] = a.Value
	}
	bw := bufio.NewWriter(w)
	// Each object's last field is an empty array, "...[]}": write the
	// object up to its "[", the elements, then "]}".
	open := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = bw.Write(b[:len(b)-2])
		return err
	}
	if err := open(jp); err != nil {
		return err
	}
	for i := range p.Views {
		v := &p.Views[i]
		jv := jsonView{Name: v.Name, Description: v.Description, Unit: v.Unit,
			Aggregation: v.Aggregation.String(), Keys: v.Keys, UpperInclusive: v.UpperInclusive,
			Start: v.Start, Rows: []jsonRow{}}
		for k, t := range v.KeyTypes {
			if t != AttrString {
				if jv.KeyTypes == nil {
					jv.KeyTypes = map[string]string{}
				}
				jv.KeyTypes[v.Keys[k]] = t.String()
			}
		}
		for _, b := range v.Bounds {
			jv.Bounds = append(jv.Bounds, jsonFloat(b))
		}
		if v.Overflow != nil {
			jr := jsonRowOf(v, v.Overflow, v.OverflowExp)
			jr.Tags = map[string]string{"otel.metric.overflow": "true"}
			if !v.OverflowStart.IsZero() {
				jr.Start = &v.OverflowStart
			}
			jv.Overflow = &jr
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		if err := open(jv); err != nil {
			return err
		}
		starts := v.RowStarts
		for r := range v.Rows {
			var e *ExpHistogram
			if r < len(v.Exp) {
				e = &v.Exp[r]
			}
			jr := jsonRowOf(v, &v.Rows[r], e)
			jsonSummaryOf(v, r, &jr)
			if len(starts) > 0 && starts[0].Row == r {
				jr.Start = &starts[0].Start
				starts = starts[1:]
			}
			b, err := json.Marshal(jr)
			if err != nil {
				return err
			}
			if r > 0 {
				bw.WriteByte(',')
			}
			bw.Write(b)
		}
		bw.WriteString("]}")
	}
	bw.WriteString("]}")
	return bw.Flush()
}

func jsonRowOf(v *View, r *Row, e *ExpHistogram) jsonRow {
	jr := jsonRow{Tags: map[string]string{}}
	for k, val := range r.Values {
		if val != "" {
			jr.Tags[v.Keys[k]] = val
		}
	}
	switch v.Aggregation {
	case Count:
		jr.Count = &r.Count
	case Sum, UpDownSum:
		jr.Sum = fp(r.Sum)
	case LastValue:
		jr.Value = fp(r.Value)
	case Distribution:
		jr.Count, jr.Sum, jr.Min, jr.Max, jr.SumOfSquaredDev = &r.Count, fp(r.Sum), fp(r.Min), fp(r.Max), fp(r.SumOfSquaredDev)
		jr.Buckets = r.Buckets
	case ExponentialDistribution:
		jr.Count, jr.Sum, jr.Min, jr.Max = &r.Count, fp(r.Sum), fp(r.Min), fp(r.Max)
		if e != nil {
			jr.Scale, jr.ZeroCount = &e.Scale, &e.ZeroCount
			jr.Positive, jr.Negative = jsonExpOf(e, &e.Positive, false), jsonExpOf(e, &e.Negative, true)
		}
	}
	return jr
}
