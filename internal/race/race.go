//go:build race

// Package race reports whether the race detector is on, so allocation tests
// can skip themselves (the detector's instrumentation allocates).
package race

// Enabled is true in a -race build.
const Enabled = true
