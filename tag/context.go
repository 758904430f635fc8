package tag

import (
	"context"

	"github.com/zerostat/zerostat/internal/core"
)

// FromContext returns the tag map of ctx, or nil when it has none.
// Cost: one context.Value lookup; no allocation.
func FromContext(ctx context.Context) *Map {
	return (*Map)(core.FromContext(ctx))
}

// NewContext returns a child of ctx that carries m.
func NewContext(ctx context.Context, m *Map) context.Context {
	return core.NewContext(ctx, (*core.TagMap)(m))
}
