//go:build !linux

package runmetrics

// ProcessMetrics is empty outside Linux.
var ProcessMetrics []Metric

type procValues struct{}

func (p *procValues) value(string) (float64, bool) { return 0, false }

func readProc(*procValues) error { return nil }
