package core

import (
	"sync/atomic"
	"unsafe"
)

func uintptrOf(p *atomic.Uint64) uintptr { return uintptr(unsafe.Pointer(p)) }
