//go:build race

package otlpcheck

const raceEnabled = true
