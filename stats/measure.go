package stats

import (
	"unsafe"

	"github.com/zerostat/zerostat/internal/core"
)

// Measure is a quantity to record, such as request latency or bytes sent.
// The concrete types are *Int64Measure and *Float64Measure.
type Measure interface {
	// Name returns the measure's name, unique within the process.
	Name() string
	// Description returns the human-readable description.
	Description() string
	// Unit returns the unit, as a UCUM code ("1", "By", "ms").
	Unit() string
}

var (
	_ Measure = (*Int64Measure)(nil)
	_ Measure = (*Float64Measure)(nil)
)

// Int64Measure is a measure of integer values.
type Int64Measure struct {
	// ref is its only field: a Measurement points at it (and Measure
	// converts back), so that a measurement is two words for the caller
	// of Record to build on its stack, not four.
	ref core.MeasureRef
}

// Int64 returns a measure of integer values. As in OpenCensus, measures are
// identified by name: a second call with the same name (Int64 or Float64)
// returns a measure that shares the first one's description, unit and
// views. Set-up cost; safe for concurrent use.
func Int64(name, description, unit string) *Int64Measure {
	return &Int64Measure{core.MeasureRef{Desc: core.MeasureFor(name, description, unit)}}
}

// M returns a measurement of v. It does not allocate.
func (m *Int64Measure) M(v int64) Measurement {
	return Measurement{v: float64(v), m: &m.ref}
}

// Name returns the measure's name.
func (m *Int64Measure) Name() string { return m.ref.Desc.Name }

// Description returns the measure's description.
func (m *Int64Measure) Description() string { return m.ref.Desc.Description }

// Unit returns the measure's unit.
func (m *Int64Measure) Unit() string { return m.ref.Desc.Unit }

// Float64Measure is a measure of floating-point values.
type Float64Measure struct {
	ref core.MeasureRef // ref, its only field, as Int64Measure's
}

// Float64 returns a measure of floating-point values; see Int64 for the
// same-name rule.
func Float64(name, description, unit string) *Float64Measure {
	return &Float64Measure{core.MeasureRef{Desc: core.MeasureFor(name, description, unit), Float: true}}
}

// M returns a measurement of v. It does not allocate.
func (m *Float64Measure) M(v float64) Measurement {
	return Measurement{v: v, m: &m.ref}
}

// Name returns the measure's name.
func (m *Float64Measure) Name() string { return m.ref.Desc.Name }

// Description returns the measure's description.
func (m *Float64Measure) Description() string { return m.ref.Desc.Description }

// Unit returns the measure's unit.
func (m *Float64Measure) Unit() string { return m.ref.Desc.Unit }

// Measurement is a value of a measure, to be recorded.
type Measurement struct {
	v float64
	m *core.MeasureRef // nil: a zero Measurement, which Record ignores
}

// Value returns the measured value (an Int64Measure's as a float64).
func (m Measurement) Value() float64 { return m.v }

// Measure returns the measure (nil for a zero Measurement).
func (m Measurement) Measure() Measure {
	switch {
	case m.m == nil:
		return nil
	case m.m.Float:
		return (*Float64Measure)(unsafe.Pointer(m.m)) // ref, its only field
	}
	return (*Int64Measure)(unsafe.Pointer(m.m))
}

// desc returns the measure's descriptor, nil for a zero Measurement.
func (m *Measurement) desc() *core.Measure { return m.m.Measure() }
