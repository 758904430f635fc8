package otel

import (
	"unsafe"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The one-option fast path. A measurement with a single
// metric.WithAttributeSet option (OTel's advice for hot paths) carries the
// set's precomputed hash in the option itself: reading it there skips
// metric.NewAddConfig, whose option loop costs two interface calls and two
// reflection-based Set.Len calls (about half of the record path). The
// option is the API's unexported *attrOpt{set attribute.Set}, and a Set
// begins with its hash (otel v1.47.0); init checks both on a probe option
// and leaves the fast path off when this otel release lays them out
// differently, so a layout change costs speed, never correctness.
//
// Cost: comparing the option's type word and one load. Records through a
// set not bound yet, several options, or any other option type take the
// API's path.

type iface struct{ tab, data unsafe.Pointer }

var addOptTab, recOptTab unsafe.Pointer // nil: the fast path is off

func init() {
	s := attribute.NewSet(attribute.String("zerostat.probe", "1"), attribute.Int("n", 2))
	want := distinctHash(&s)
	if want == 0 {
		return
	}
	a := []metric.AddOption{metric.WithAttributeSet(s)}
	if h, tab := optHash(unsafe.Pointer(&a[0])); h == want {
		if got := metric.NewAddConfig(a).Attributes(); got.Equals(&s) {
			addOptTab = tab
		}
	}
	r := []metric.RecordOption{metric.WithAttributeSet(s)}
	if h, tab := optHash(unsafe.Pointer(&r[0])); h == want {
		if got := metric.NewRecordConfig(r).Attributes(); got.Equals(&s) {
			recOptTab = tab
		}
	}
}

// optHash reads the type word of the interface at p and the first word of
// the value it points to.
func optHash(p unsafe.Pointer) (uint64, unsafe.Pointer) {
	f := (*iface)(p)
	if f.data == nil {
		return 0, nil
	}
	return *(*uint64)(f.data), f.tab
}

// oneSetHash returns the hash of the attribute set of opts when opts is
// one WithAttributeSet option (of the interface type whose type word for
// that option is tab) of a non-empty set.
func oneSetHash[O any](opts []O, tab unsafe.Pointer) (uint64, bool) {
	if len(opts) != 1 || tab == nil {
		return 0, false
	}
	f := (*iface)(unsafe.Pointer(&opts[0]))
	if f.tab != tab {
		return 0, false
	}
	h := *(*uint64)(f.data)
	return h, h != 0
}
