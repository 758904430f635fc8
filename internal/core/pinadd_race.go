//go:build race

package core

import "sync/atomic"

// pinnedAdd is pinadd.go's, as an atomic add: the race detector does not
// know that only the goroutine holding a P writes that P's stripe words.
func pinnedAdd(w *atomic.Uint64, d uint64) uint64 { return w.Add(d) }
