// Package block hands out values allocated many to a block, so that values
// created one at a time over a program's life (stats handles) lie next to
// each other in memory instead of between whatever else was allocated
// meanwhile.
//
// Why: a record through a handle touches the handle's own cache line and
// nothing else of its own. With 100,000 live handles recorded in a
// scattered order, that line is usually a cache and TLB miss, and what a
// miss costs grows with the number of pages the handles are spread over.
// One 64-byte handle per allocation shares its size class's spans with the
// series (also 64 bytes) and any other 64-byte object created meanwhile:
// in BenchmarkScale, 100,000 handles bound in the order their series were
// created lay on 3,228 pages (132 bytes of address space a handle), and
// after a GC they fill the holes garbage left all over the heap. Eight to a
// 512-byte block, the same handles lie on 1,667 pages (100,000 × 64 bytes
// is 1,563).
//
// Cost: a block is freed only when none of its values is reachable, so a
// program that keeps one value of each block holds the block's memory: at
// most BlockBytes per kept value (8 times a 64-byte handle), and in
// practice what long-lived handles make of it, about their own size. The
// pool keeps its current block until it hands out its last value.
package block

import (
	"sync"
	"unsafe"
)

// BlockBytes is the size of the blocks a Pool allocates (for values of
// at most this size): 512 bytes, a size class of its own, so a block
// starts on a 512-byte boundary and values whose size divides it keep
// their alignment to it (a 64-byte value: its own cache line). Not more:
// an object of more than 512 bytes that holds pointers carries an
// 8-byte header, so a 1 KiB block took 1,152 bytes (8 bytes more per
// handle: BenchmarkScale's heap per series at 1M, 571 -> 579 B).
const BlockBytes = 512

// Pool hands out pointers to zero values of T, allocated BlockBytes at a
// time. The zero Pool is ready to use. Safe for concurrent use: New holds
// a mutex (set-up paths only, never a record).
type Pool[T any] struct {
	mu   sync.Mutex
	free []T // the rest of the current block
}

// perBlock is how many Ts a block holds (1 for a T of more than
// BlockBytes, which then gains nothing from the pool).
func perBlock[T any]() int {
	var t T
	if n := BlockBytes / int(unsafe.Sizeof(t)); n > 1 {
		return n
	}
	return 1
}

// New returns a pointer to a zero T, the next of the current block; the
// pointer keeps the block alive. Cost: a mutex, and one allocation of
// BlockBytes every BlockBytes/size(T) calls.
func (p *Pool[T]) New() *T {
	p.mu.Lock()
	if len(p.free) == 0 {
		p.free = make([]T, perBlock[T]())
	}
	t := &p.free[0]
	p.free = p.free[1:len(p.free):len(p.free)]
	p.mu.Unlock()
	return t
}
