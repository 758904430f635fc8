package core

import (
	"maps"
	"sync"

	"github.com/zerostat/zerostat/internal/attrval"
)

// Key types: what type a tag key's values have where a format has types
// (package attrval). A view's key is typed by its aggregator's
// SetKeyType (the otel provider, from the first attribute of the key it
// binds), else by SetGlobalKeyType (a plug-in's semantic conventions:
// http.response.status_code is an int), else a string. Set up once,
// read by exporters per view; never on the record path.

var (
	globalTypesMu sync.Mutex
	globalTypes   map[string]attrval.Type
)

// SetGlobalKeyType types the values of every view's key named name that
// its aggregator does not type itself: a semantic convention's type. The
// first type set for a name wins. Safe for concurrent use.
func SetGlobalKeyType(name string, t attrval.Type) {
	globalTypesMu.Lock()
	defer globalTypesMu.Unlock()
	if _, ok := globalTypes[name]; ok {
		return
	}
	if globalTypes == nil {
		globalTypes = map[string]attrval.Type{}
	}
	globalTypes[name] = t
}

// SetKeyType types the values of a's key named name: the first type set
// wins (an attribute key keeps the type it was first recorded with; a
// later value that does not parse as it is exported as a string). Safe
// for concurrent use; copy on write.
func (a *Aggregator) SetKeyType(name string, t attrval.Type) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := a.keyTypes.Load()
	if cur != nil {
		if _, ok := (*cur)[name]; ok {
			return
		}
	}
	next := map[string]attrval.Type{name: t}
	if cur != nil {
		next = maps.Clone(*cur)
		next[name] = t
	}
	a.keyTypes.Store(&next)
}

// KeyTypes appends to dst the type of each of keys (a view's Keys) and
// returns it, and whether any is not a string. Cost: a map lookup per
// key, and the global table's lock when it has entries.
func (a *Aggregator) KeyTypes(dst []attrval.Type, keys []string) ([]attrval.Type, bool) {
	own := a.keyTypes.Load()
	globalTypesMu.Lock()
	defer globalTypesMu.Unlock()
	typed := false
	for _, k := range keys {
		t, ok := attrval.String, false
		if own != nil {
			t, ok = (*own)[k]
		}
		if !ok {
			t = globalTypes[k]
		}
		typed = typed || t != attrval.String
		dst = append(dst, t)
	}
	return dst, typed
}
