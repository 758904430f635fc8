// Package exphisttest holds what the tests of internal/exphist and the
// differential test in benchmarks/exphist share: a plain model of the
// OpenTelemetry Go SDK's exponential histogram data point with a
// pluggable bucket index, the SDK's own index function, and an exact
// index computed with math/big. Not for production code: the model
// allocates as it grows.
package exphisttest

import (
	"errors"
	"math"
	"math/big"
)

// Model is go.opentelemetry.io/otel/sdk/metric v1.47.0's
// expoHistogramDataPoint (internal/aggregate/exponential_histogram.go)
// rewritten without atomics, for one goroutine, with the index function
// as a parameter: with SDKGetBin it must give the SDK's results exactly
// (the differential test checks it), with exphist.Index it must give
// exphist's (exphist's tests check it). Its buckets are the SDK's: a slice
// from Offset, grown at either end, summed in place on a downscale.
type Model struct {
	MaxSize int32
	Index   func(v float64, scale int32) int32

	Scale          int32
	ZeroCount      uint64
	PosOffset      int32
	Pos            []uint64
	NegOffset      int32
	Neg            []uint64
	Min, Max       float64
	MinMaxSet      bool
	Underflows     int // values the SDK drops for "scale underflow"
	sum            float64
	sdkInt         int64
	sdkFloat       float64
	recordedFinite int
}

// NewModel returns an empty model at maxScale.
func NewModel(maxSize, maxScale int32, index func(float64, int32) int32) *Model {
	return &Model{MaxSize: maxSize, Index: index, Scale: maxScale}
}

// Count is the SDK's count: the zero count and every bucket.
func (m *Model) Count() uint64 {
	n := m.ZeroCount
	for _, c := range m.Pos {
		n += c
	}
	for _, c := range m.Neg {
		n += c
	}
	return n
}

// Sum is the plain running sum, in record order.
func (m *Model) Sum() float64 { return m.sum }

// SDKSum is the SDK's sum (its atomicCounter): values that are whole
// numbers representable as int64 add into an int64 (wrapping on
// overflow), the others into a float64, in record order, and the read is
// float + float64(int).
func (m *Model) SDKSum() float64 { return m.sdkFloat + float64(m.sdkInt) }

// Record is expoHistogram.measure then expoHistogramDataPoint.record.
func (m *Model) Record(v float64) {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return // measure: "Ignore NaN and infinity."
	}
	if !m.MinMaxSet {
		m.Min, m.Max, m.MinMaxSet = v, v, true
	} else {
		if v < m.Min {
			m.Min = v
		}
		if m.Max < v {
			m.Max = v
		}
	}
	m.sum += v
	if iv := int64(v); float64(iv) == v {
		m.sdkInt += iv
	} else {
		m.sdkFloat += v
	}
	m.recordedFinite++
	abs := math.Abs(v)
	if abs == 0 {
		m.ZeroCount++
		return
	}
	bin := m.Index(abs, m.Scale)
	off, counts := &m.PosOffset, &m.Pos
	if v < 0 {
		off, counts = &m.NegOffset, &m.Neg
	}
	if d := m.scaleChange(bin, *off, len(*counts)); d > 0 {
		if m.Scale-d < -10 {
			m.Underflows++
			return
		}
		m.Scale -= d
		m.PosOffset, m.Pos = downscale(m.PosOffset, m.Pos, d)
		m.NegOffset, m.Neg = downscale(m.NegOffset, m.Neg, d)
		bin = m.Index(abs, m.Scale)
	}
	*off, *counts = record(*off, *counts, bin)
}

func (m *Model) scaleChange(bin, start int32, n int) int32 {
	if n == 0 {
		return 0
	}
	lo, hi := int(start), int(bin)
	if start >= bin {
		lo, hi = int(bin), int(start)+n-1
	}
	var c int32
	for hi-lo >= int(m.MaxSize) {
		lo >>= 1
		hi >>= 1
		c++
		if c > 30 {
			return c
		}
	}
	return c
}

func record(off int32, counts []uint64, bin int32) (int32, []uint64) {
	if len(counts) == 0 {
		return bin, []uint64{1}
	}
	end := off + int32(len(counts)) - 1
	switch {
	case bin < off:
		c := make([]uint64, int(end-bin)+1)
		copy(c[off-bin:], counts)
		c[0] = 1
		return bin, c
	case bin > end:
		counts = append(counts, make([]uint64, bin-end)...)
	}
	counts[bin-off]++
	return off, counts
}

func downscale(off int32, counts []uint64, d int32) (int32, []uint64) {
	if len(counts) == 0 {
		return off >> d, counts
	}
	start, end := off>>d, (off+int32(len(counts))-1)>>d
	c := make([]uint64, end-start+1)
	for i, x := range counts {
		c[(off+int32(i))>>d-start] += x
	}
	return start, c
}

// SDKGetBin is the SDK's expoHistogramDataPoint.getBin for v > 0: exact
// for powers of two and at scales <= 0, the logarithm taken at face value
// above (see exphist.Index for where it differs).
func SDKGetBin(v float64, scale int32) int32 {
	frac, expInt := math.Frexp(v)
	exp := int32(expInt)
	if scale <= 0 {
		var correction int32 = 1
		if frac == .5 {
			correction = 2
		}
		return (exp - correction) >> (-scale)
	}
	return exp<<scale + int32(math.Log(frac)*math.Ldexp(math.Log2E, int(scale))) - 1
}

// ErrTooClose: OracleIndex could not decide (never seen for a float64).
var ErrTooClose = errors.New("exphisttest: value within 2^-250 of a bucket boundary")

// OracleIndex is the specification's bucket index of |v| (finite, not 0)
// at scale, computed with math/big: |v| = m·2^e with m in [1, 2); for
// scale > 0 the sub-index floor(log2(m^(2^scale))) is read off the
// exponent of m^(2^scale), computed by squarings at 300 bits (relative
// error under 2^-270 after 20 of them). It returns ErrTooClose if that
// power is within 2^-250 of a power of two, so that the rounding could
// have decided the result.
func OracleIndex(v float64, scale int32) (int64, error) {
	frac, exp := math.Frexp(math.Abs(v))
	m, e := frac*2, int64(exp-1)
	if m == 1 {
		if scale <= 0 {
			return (e - 1) >> -scale, nil
		}
		return e<<scale - 1, nil
	}
	if scale <= 0 {
		return e >> -scale, nil
	}
	const prec = 300
	p := new(big.Float).SetPrec(prec).SetFloat64(m)
	for range scale {
		p.Mul(p, p)
	}
	mant := new(big.Float).SetPrec(prec)
	ex := p.MantExp(mant) // p = mant·2^ex, mant in [0.5, 1)
	lo := new(big.Float).Sub(mant, big.NewFloat(0.5))
	hi := new(big.Float).Sub(big.NewFloat(1), mant)
	if lo.Sign() == 0 || lo.MantExp(nil) < -250 || hi.MantExp(nil) < -250 {
		return 0, ErrTooClose
	}
	return e<<scale + int64(ex-1), nil
}
