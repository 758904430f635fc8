package block

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
	"weak"

	"github.com/zerostat/zerostat/internal/race"
)

type line struct {
	w [8]uint64 // 64 bytes
}

func TestNewIsZeroDistinctAndPacked(t *testing.T) {
	var p Pool[line]
	n := 3 * BlockBytes / 64
	seen := map[*line]bool{}
	var prev uintptr
	for i := range n {
		l := p.New()
		if l.w != ([8]uint64{}) {
			t.Fatalf("value %d: got %v; want zero", i, l.w)
		}
		if seen[l] {
			t.Fatalf("value %d: %p handed out twice", i, l)
		}
		seen[l] = true
		l.w[0] = uint64(i) + 1 // a value handed out is the caller's
		addr := uintptr(unsafe.Pointer(l))
		if addr%64 != 0 {
			t.Errorf("value %d at %#x: want 64-byte alignment", i, addr)
		}
		if i%(BlockBytes/64) != 0 && addr != prev+64 {
			t.Errorf("value %d at %#x: want the next of its block, %#x", i, addr, prev+64)
		}
		prev = addr
	}
	for l := range seen {
		if l.w[0] == 0 {
			t.Fatalf("%p: a later New overwrote a value handed out", l)
		}
	}
}

func TestLargeValuesOneABlock(t *testing.T) {
	type big struct{ b [BlockBytes + 8]byte }
	var p Pool[big]
	a, b := p.New(), p.New()
	if a == b {
		t.Fatal("two News of a value larger than a block returned the same pointer")
	}
	if got := perBlock[big](); got != 1 {
		t.Errorf("perBlock of a %d-byte value: got %d; want 1", unsafe.Sizeof(big{}), got)
	}
}

// A block is freed once none of its values is reachable, and not before.
func TestBlockFreedWithItsLastValue(t *testing.T) {
	var p Pool[line]
	per := BlockBytes / 64
	vals := make([]*line, per)
	for i := range vals {
		vals[i] = p.New()
	}
	p.New() // the pool moves on to a second block
	w := weak.Make(&vals[0].w[0])
	keep := vals[per-1]
	vals = nil
	runtime.GC()
	runtime.GC()
	if w.Value() == nil {
		t.Fatal("the block was freed while one of its values was reachable")
	}
	runtime.KeepAlive(keep)
	keep = nil
	runtime.GC()
	runtime.GC()
	if w.Value() != nil {
		t.Fatal("the block outlived its last reachable value")
	}
}

func TestConcurrentNewExact(t *testing.T) {
	var p Pool[line]
	const goroutines, each = 8, 1000
	var mu sync.Mutex
	seen := make(map[*line]bool, goroutines*each)
	var dup atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]*line, each)
			for i := range mine {
				mine[i] = p.New()
				mine[i].w[1]++ // racing writers to one value would show under -race
			}
			mu.Lock()
			for _, l := range mine {
				if seen[l] {
					dup.Add(1)
				}
				seen[l] = true
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if d := dup.Load(); d != 0 || len(seen) != goroutines*each {
		t.Fatalf("got %d distinct values and %d duplicates; want %d and 0", len(seen), d, goroutines*each)
	}
	for l := range seen {
		if l.w[1] != 1 {
			t.Fatalf("%p: written %d times; want once", l, l.w[1])
		}
	}
}

// A block costs BlockBytes of heap, no more: a block of more than 512
// bytes holding pointers would carry the runtime's 8-byte malloc header
// and round up to the next size class (1 KiB took 1,152 bytes).
func TestBlockCostsItsSize(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	// The runtime gives a pointerful object a malloc header above
	// PtrSize*PtrSize*8 bytes: 512 on 64-bit platforms, the ones the block
	// size is chosen for, 128 on 32-bit ones, where a block does carry it.
	const ptrSize = unsafe.Sizeof(uintptr(0))
	if BlockBytes > ptrSize*ptrSize*8 {
		t.Skipf("%d-byte pointers: a %d-byte block carries a malloc header here", ptrSize, BlockBytes)
	}
	type handleLike struct {
		p *int // pointers, as a handle has
		w [7]uint64
	}
	if s := unsafe.Sizeof(handleLike{}); s != 64 {
		t.Fatalf("handleLike is %d bytes; want 64", s)
	}
	var p Pool[handleLike]
	const blocks = 256
	n := blocks * BlockBytes / 64
	keep := make([]*handleLike, n)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range keep {
		keep[i] = p.New()
	}
	runtime.ReadMemStats(&after)
	// TotalAlloc also counts what another goroutine allocated meanwhile:
	// up to 1 KiB of it is let through. A header per block would add
	// blocks × 128 bytes (32 KiB).
	if got, want := after.TotalAlloc-before.TotalAlloc, uint64(blocks*BlockBytes); got < want || got > want+1024 {
		t.Errorf("%d values took %d bytes of heap; want %d (%d blocks of %d)", n, got, want, blocks, BlockBytes)
	}
	runtime.KeepAlive(keep)
}
