package stats

// Units of measure, as UCUM codes (https://ucum.org/ucum), as in OpenCensus.
const (
	UnitNone          = "1" // Deprecated: Use UnitDimensionless.
	UnitDimensionless = "1"
	UnitBytes         = "By"
	UnitMilliseconds  = "ms"
	UnitSeconds       = "s"
)
