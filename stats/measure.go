package stats

import "github.com/zerostat/zerostat/internal/core"

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
	desc *core.Measure
}

// Int64 returns a measure of integer values. As in OpenCensus, measures are
// identified by name: a second call with the same name (Int64 or Float64)
// returns a measure that shares the first one's description, unit and
// views. Set-up cost; safe for concurrent use.
func Int64(name, description, unit string) *Int64Measure {
	return &Int64Measure{desc: core.MeasureFor(name, description, unit)}
}

// M returns a measurement of v. It does not allocate.
func (m *Int64Measure) M(v int64) Measurement {
	return Measurement{v: float64(v), m: m, desc: m.desc}
}

// Name returns the measure's name.
func (m *Int64Measure) Name() string { return m.desc.Name }

// Description returns the measure's description.
func (m *Int64Measure) Description() string { return m.desc.Description }

// Unit returns the measure's unit.
func (m *Int64Measure) Unit() string { return m.desc.Unit }

// Float64Measure is a measure of floating-point values.
type Float64Measure struct {
	desc *core.Measure
}

// Float64 returns a measure of floating-point values; see Int64 for the
// same-name rule.
func Float64(name, description, unit string) *Float64Measure {
	return &Float64Measure{desc: core.MeasureFor(name, description, unit)}
}

// M returns a measurement of v. It does not allocate.
func (m *Float64Measure) M(v float64) Measurement {
	return Measurement{v: v, m: m, desc: m.desc}
}

// Name returns the measure's name.
func (m *Float64Measure) Name() string { return m.desc.Name }

// Description returns the measure's description.
func (m *Float64Measure) Description() string { return m.desc.Description }

// Unit returns the measure's unit.
func (m *Float64Measure) Unit() string { return m.desc.Unit }

// Measurement is a value of a measure, to be recorded.
type Measurement struct {
	v    float64
	m    Measure
	desc *core.Measure
}

// Value returns the measured value (an Int64Measure's as a float64).
func (m Measurement) Value() float64 { return m.v }

// Measure returns the measure.
func (m Measurement) Measure() Measure { return m.m }
