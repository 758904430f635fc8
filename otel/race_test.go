//go:build race

package otel_test

const raceEnabled = true
