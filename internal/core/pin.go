package core

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// procPin and procUnpin give the id of the P (scheduler processor) the
// goroutine runs on. The runtime keeps them linkable for sync.Pool-like
// users (runtime/proc.go, "Do not remove or change the type signature",
// go.dev/issue/67401). A contended series picks its stripe with it, so two
// goroutines running at the same instant never share a cell.

//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// procID returns the current P's id. Cost: two non-inlined calls, ~2 ns.
func procID() int {
	id := procPin()
	procUnpin()
	return id
}

// waitUnpinned returns once every section pinned (procPin) before the
// call has ended (procUnpin), so that a seal reads the final values of
// words that pinned recorders add to without a locked instruction
// (pinnedAdd). It stops the world (runtime.ReadMemStats does: about 35
// µs on the project's 2-core VM), and the runtime cannot stop a P whose
// goroutine is pinned until it unpins: a pinned goroutine is not
// preempted, synchronously or by signal (m.locks > 0). sync.Pool's cleanup
// relies on the same property. The stop and restart synchronise every P
// with the caller: the adds of the sections that ended are visible to it,
// and a section pinned afterwards loads what the caller stored before.
// Called by the seal of a striped Count or integer Sum (rare: a series
// recorded from several cores at once, then idle); TestWaitUnpinned checks
// the property on the running Go release.
func waitUnpinned() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	unpinWaits.Add(1)
}

// unpinWaits counts waitUnpinned's stops of the world (tests).
var unpinWaits atomic.Uint64

// stripeCount is the number of cells of a contended histogram's series
// (each cell has a lock, and any P may take any cell): GOMAXPROCS
// rounded up to a power of two, at least 2, at most 64.
func stripeCount() int { return pow2Within(runtime.GOMAXPROCS(0), 64) }

// wordStripeCount is the number of stripes of a contended Count's or Sum's
// series: GOMAXPROCS or the number of CPUs, whichever is larger, rounded
// up to a power of two, at least 2, at most 256. The runtime never raises
// GOMAXPROCS past the CPUs by itself (Go 1.25 follows a container's CPU
// limit below them), so every P has a stripe of its own unless GOMAXPROCS
// is set above the CPUs, or there are more than 256: a P without one
// records through the series' own word (Count) or the float words
// (integer Sum) with atomics (addCountAt), never into another P's plainly
// added word (pinnedAdd). Memory: 64 bytes a stripe.
func wordStripeCount() int {
	return pow2Within(max(runtime.GOMAXPROCS(0), runtime.NumCPU()), 256)
}

// pow2Within returns p rounded up to a power of two, at least 2, at most
// limit (a power of two).
func pow2Within(p, limit int) int {
	n := 2
	for n < p && n < limit {
		n *= 2
	}
	return n
}

// alignOffset returns how many words to skip so that &w[off] is at the start
// of a cache line (the garbage collector does not move heap objects).
func alignOffset[T any](w []T) int {
	var zero T
	size := unsafe.Sizeof(zero)
	mis := uintptr(unsafe.Pointer(&w[0])) % (wordsPerLine * 8)
	if mis == 0 {
		return 0
	}
	return int((wordsPerLine*8 - mis) / size)
}
