package stats

import (
	"testing"
	"unsafe"

	"github.com/zerostat/zerostat/internal/core"
)

// A handle's Bound is its first and only field (bound converts the
// handle's pointer), and a nil handle's Record panics, as a method of a
// nil pointer that reads it does.
func TestHandleIsItsBound(t *testing.T) {
	if unsafe.Offsetof(Int64Handle{}.b) != 0 || unsafe.Sizeof(Int64Handle{}) != unsafe.Sizeof(core.Bound{}) ||
		unsafe.Offsetof(Float64Handle{}.b) != 0 || unsafe.Sizeof(Float64Handle{}) != unsafe.Sizeof(core.Bound{}) {
		t.Fatal("a handle is not its Bound alone")
	}
	for name, record := range map[string]func(){
		"Int64Handle":   func() { (*Int64Handle)(nil).Record(1) },
		"Float64Handle": func() { (*Float64Handle)(nil).Record(1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Record of a nil handle did not panic", name)
				}
			}()
			record()
		}()
	}
}
