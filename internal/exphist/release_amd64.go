//go:build amd64 && !race

package exphist

import (
	"sync/atomic"
	"unsafe"
)

// releaseLock releases the lock word a recorder holds with a plain store:
// on amd64 an atomic store is an XCHG, a locked instruction that drains
// the store buffer, a second full barrier per record after the acquiring
// compare-and-swap (internal/core/release_amd64.go measured it at a
// quarter of a histogram handle's record). A plain MOV is already a
// release on amd64's total store order, and it is what the runtime's own
// StoreRel compiles to there. Under -race, and on other architectures, it
// is an atomic store (release_other.go), so the race detector checks the
// same protocol.
func releaseLock(l *atomic.Uint32) { *(*uint32)(unsafe.Pointer(l)) = lockFree }
