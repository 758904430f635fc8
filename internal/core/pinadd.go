//go:build !race && (amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x)

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
// overlap. A reader loads the words atomically and sees each one before
// or after an add, never torn (the Go memory model: a racy read of a
// location no larger than a machine word observes one of the writes). A
// seal publishes its marker, then waits for every pinned section
// (waitUnpinned) before it reads the words for good (sealFinish). This is
// sync.Pool's protocol for its per-P caches: plain accesses while pinned,
// and readers that rely on a stop of the world.
//
// Only on 64-bit architectures, where the add's one store writes the
// whole word; on a 32-bit one (386, arm) it stores two halves, and a
// reader between them would see a word off by 2^32. There, and under
// -race (the race detector knows nothing of pinning), it is an atomic add
// (pinadd_atomic.go), and the rest of the protocol is the same.
//
// Cost: the locked add was 5.4 of the 8.6 ns a striped record took on
// each core (perf, two goroutines sharing a handle on 2 cores); without
// it the two goroutines' records went from 4.1-4.5 to 2.3-3.7 ns an op
// (the spread is the VM's, run to run). Inlined.
func pinnedAdd(w *atomic.Uint64, d uint64) uint64 {
	p := (*uint64)(unsafe.Pointer(w))
	*p += d
	return *p
}
