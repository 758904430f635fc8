package tag

import (
	"context"
	"runtime/pprof"
)

// Do runs f with a context whose pprof labels are the tags of ctx's map
// (runtime/pprof.Do), so CPU profiles taken while f runs can be split by
// tag. Cost: a slice of the tags and pprof.Do's context and label set;
// not for hot paths. Safe for concurrent use.
func Do(ctx context.Context, f func(ctx context.Context)) {
	m := FromContext(ctx)
	var kv []string
	if m != nil {
		ts := m.core().SortedByName()
		kv = make([]string, 0, 2*len(ts))
		for _, t := range ts {
			kv = append(kv, t.Key, t.Value)
		}
	}
	pprof.Do(ctx, pprof.Labels(kv...), f)
}
