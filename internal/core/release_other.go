//go:build !amd64 || race

package core

import "sync/atomic"

// releaseLock releases a distribution cell's lock word, held by this
// recorder (see release_amd64.go).
func releaseLock(l *atomic.Uint32) { l.Store(lockFree) }
