//go:build !race

package core

import (
	"sync/atomic"
	"unsafe"
)

// pinnedAdd adds d to w, a word of the current P's stripe (a Count's, or
// an integer Sum's integer word), and returns its new value, with a plain
// add: no locked instruction. Only the goroutine running on P p writes
// p's stripe words, and only while it holds p (procPin), from before its
// load of the series' stripes pointer until after the add; the runtime
// runs no other goroutine on p meanwhile, so no two adds to one word
// overlap. A reader loads the words atomically, and sees each one before
// or after an add, never torn (the Go memory model: a racy read of a
// machine word observes one of the writes); a seal publishes its marker,
// then waits for every pinned section (waitUnpinned) before it reads the
// words for good (seal). This is sync.Pool's protocol for its per-P
// caches: plain accesses while pinned, and readers that rely on a stop of
// the world.
//
// Cost: a locked add was 5.4 of the 8.6 ns a striped record took on each
// core (perf, two goroutines sharing a handle on 2 cores); with the plain
// add the record takes about 4.4. Under -race (pinadd_race.go) it is an
// atomic add, so that the race detector, which knows nothing of pinning,
// checks the rest of the protocol. Inlined.
func pinnedAdd(w *atomic.Uint64, d uint64) uint64 {
	p := (*uint64)(unsafe.Pointer(w))
	*p += d
	return *p
}
