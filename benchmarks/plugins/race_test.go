//go:build race

package plugins

const raceEnabled = true
