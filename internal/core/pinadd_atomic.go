//go:build race || !(amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x)

package core

import "sync/atomic"

// pinnedAdd is pinadd.go's, as an atomic add: under -race, because the
// race detector does not know that only the goroutine holding a P writes
// that P's stripe words; on a 32-bit architecture, because a plain 64-bit
// add there stores two halves, and a reader between them would see a
// torn word. The rest of the protocol (the pinned section, the seal's
// wait) is the same.
func pinnedAdd(w *atomic.Uint64, d uint64) uint64 { return w.Add(d) }
