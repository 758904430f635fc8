package core

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// View is a registered view as exporters read it: names resolved to
// stable string ids (see Intern) at registration, so an export maps them
// to payload ids with an array lookup instead of hashing strings.
type View struct {
	Name, Description, Unit string
	Keys                    []string // tag keys sorted by name
	Agg                     *Aggregator

	NameID, DescriptionID, UnitID uint32
	KeyIDs                        []uint32 // ids of Keys
}

var registry atomic.Pointer[[]*View]

// Views returns the registered views sorted by name. The caller must not
// modify the slice. Cost: one atomic load.
func Views() []*View {
	p := registry.Load()
	if p == nil {
		return nil
	}
	return *p
}

// AddView publishes v (set-up cost; copy on write). The view package calls
// it once v is registered.
func AddView(v *View) {
	v.NameID, v.DescriptionID, v.UnitID = Intern(v.Name), Intern(v.Description), Intern(v.Unit)
	v.KeyIDs = make([]uint32, len(v.Keys))
	for i, k := range v.Keys {
		v.KeyIDs[i] = Intern(k)
	}
	regMu.Lock()
	defer regMu.Unlock()
	next := append(slices.Clone(Views()), v)
	slices.SortFunc(next, func(a, b *View) int { return strings.Compare(a.Name, b.Name) })
	registry.Store(&next)
}

// RemoveView unpublishes v.
func RemoveView(v *View) {
	regMu.Lock()
	defer regMu.Unlock()
	next := slices.DeleteFunc(slices.Clone(Views()), func(x *View) bool { return x == v })
	registry.Store(&next)
}

// The interner gives every string an exporter writes (view names, units,
// tag keys and the tag values of series) a stable id. Tag values are
// interned when their series is created, on the slow path, never per
// record. Id 0 is "", the value of an absent key.
var (
	internMu  sync.Mutex
	internIDs = map[string]uint32{"": 0}
	internTab atomic.Pointer[[]string]
)

func init() {
	t := []string{""}
	internTab.Store(&t)
}

// Intern returns the stable id of s. Set-up cost: a mutex and a map
// lookup; an unseen string is copied and appended.
func Intern(s string) uint32 {
	internMu.Lock()
	defer internMu.Unlock()
	if id, ok := internIDs[s]; ok {
		return id
	}
	s = strings.Clone(s)
	t := *internTab.Load()
	id := uint32(len(t))
	t = append(t, s)
	internTab.Store(&t)
	internIDs[s] = id
	return id
}

// Interned returns the table of interned strings, indexed by id. Entries
// are never changed once written, so the returned slice may be read while
// Intern appends. Cost: one atomic load.
func Interned() []string { return *internTab.Load() }
