package delta

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zerostat/zerostat/internal/core"
)

// Preference is exporter.TemporalityPreference (documented there): which
// temporality each aggregation kind is read with, as
// OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE chooses for
// OpenTelemetry instruments.
type Preference uint8

const (
	PreferCumulative Preference = iota
	PreferDelta
	PreferLowMemory
)

var preferenceNames = [...]string{"cumulative", "delta", "lowmemory"}

// String returns the preference's name in the environment variable.
func (p Preference) String() string {
	if int(p) < len(preferenceNames) {
		return preferenceNames[p]
	}
	return "TemporalityPreference(" + strconv.Itoa(int(p)) + ")"
}

// ParsePreference parses cumulative, delta or lowmemory, in any case (the
// specification's values are case-insensitive).
func ParsePreference(s string) (Preference, error) {
	for i, n := range preferenceNames {
		if strings.EqualFold(s, n) {
			return Preference(i), nil
		}
	}
	return 0, fmt.Errorf("unknown temporality preference %q (want cumulative, delta or lowmemory)", s)
}

// Delta reports whether kind k is read as deltas under p: the
// specification's table for synchronous instruments, zerostat's Count
// and Sum being Counters, Distribution and the exponential distribution
// Histograms, LastValue a Gauge.
func (p Preference) Delta(k core.Kind) bool {
	if p != PreferDelta && p != PreferLowMemory {
		return false
	}
	switch k {
	case core.KindCount, core.KindSum: // Counter: delta under delta and lowmemory
		return true
	case core.KindDistribution, core.KindExponential: // Histogram: delta under delta and lowmemory
		return true
	}
	// Gauge: cumulative (its point is its last value either way). An
	// UpDownCounter (view.UpDownSum) is cumulative too: see Kinds.Reads.
	// A summary (core.KindSummary) is never delta, under any preference
	// or an exporter's Temporality Delta (Kinds has no entry for it): its
	// quantiles cannot be subtracted, so its points are its current
	// values, as OTLP's Summary (which has no temporality) holds them.
	return false
}

// Kinds says which aggregation kinds an exporter reads as deltas, and
// whether observed sums (asynchronous counters) stay cumulative (the
// lowmemory preference).
type Kinds struct {
	d              [core.KindExponential + 1]bool
	observedTotals bool
}

// NewKinds returns the kinds read as deltas when every view is delta
// (all: an exporter's Temporality Delta) or under preference p. Setting
// both is an error, naming the options after prefix ("otlp: ").
func NewKinds(all bool, p Preference, prefix string) (Kinds, error) {
	var k Kinds
	d := &k.d
	if p > PreferLowMemory {
		return k, fmt.Errorf("%sunknown TemporalityPreference %d", prefix, p)
	}
	if all && p != PreferCumulative {
		return k, fmt.Errorf("%sTemporality Delta and TemporalityPreference %v are both set; set one", prefix, p)
	}
	for kind := core.KindCount; int(kind) < len(d); kind++ {
		d[kind] = all || p.Delta(kind)
	}
	// lowmemory: "Synchronous Counter: Delta; Asynchronous Counter:
	// Cumulative" (the specification's table), where delta makes both
	// delta.
	k.observedTotals = p == PreferLowMemory
	return k, nil
}

// OneTemporality returns d for an encoder whose payload has one
// temporality for all its views (zerostat's msgpack format): observed
// sums are then read as deltas under lowmemory too, as every other sum
// (a total in a delta payload would be misread as an interval's). OTLP
// gives each metric its own temporality and keeps d as it is.
func (d Kinds) OneTemporality() Kinds {
	d.observedTotals = false
	return d
}

// Any reports whether some kind is read as deltas: the exporter then
// needs a Tracker and queues the requests it could not send.
func (d *Kinds) Any() bool {
	for _, b := range d.d {
		if b {
			return true
		}
	}
	return false
}

// Has reports whether kind k is read as deltas.
func (d *Kinds) Has(k core.Kind) bool { return int(k) < len(d.d) && d.d[k] }

// Reads reports whether view v is read as deltas: its kind's choice, but
// never for an up-down sum (view.UpDownSum), which is always read as its
// total, as the specification's delta and lowmemory preferences keep an
// UpDownCounter cumulative: a delta of a total that goes both ways is
// what a delta-to-Prometheus pipeline drops; nor, under the lowmemory
// preference, for an observed sum (an asynchronous counter, whose total a
// callback reports), which that preference keeps cumulative. Every
// exporter decides with it, so a view has one temporality on every path.
func (d *Kinds) Reads(v *core.View) bool {
	return !v.UpDown && !(v.Observed && d.observedTotals) && d.Has(v.Agg.Kind())
}
