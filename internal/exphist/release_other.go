//go:build !amd64 || race

package exphist

import "sync/atomic"

// releaseLock releases the lock word a recorder holds (see
// release_amd64.go).
func releaseLock(l *atomic.Uint32) { l.Store(lockFree) }
