package core

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestWaitUnpinned checks, on the running Go release, the property the
// seal of pinned stripe words rests on (pinnedAdd): waitUnpinned does not
// return while a section pinned before it is still running. A goroutine
// pins its P and spins for a while; waitUnpinned, called while it spins,
// must find its section ended. (Were the pinned goroutine stopped mid-
// section, waitUnpinned would return with done still false.)
func TestWaitUnpinned(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs 2 Ps: a pinned goroutine holds its P")
	}
	checked := 0
	for attempt := 0; attempt < 10 && checked < 3; attempt++ {
		var pinned, done atomic.Bool
		go func() {
			procPin()
			pinned.Store(true)
			// Spin (no call that could block) for 100 ms.
			for start := time.Now(); time.Since(start) < 100*time.Millisecond; {
			}
			done.Store(true)
			procUnpin()
		}()
		for !pinned.Load() {
			runtime.Gosched()
		}
		if done.Load() {
			continue // this goroutine ran late (a busy machine): no check
		}
		waitUnpinned()
		if !done.Load() {
			t.Fatal("waitUnpinned returned while a section pinned before it was still running")
		}
		checked++
	}
	if checked == 0 {
		t.Skip("the pinned goroutine always finished first (a busy machine)")
	}
}
