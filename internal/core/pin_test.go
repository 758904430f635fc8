package core

import (
	"fmt"
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

// TestPinnedStripesMoreProcsThanStripes: a striped series recorded into
// with GOMAXPROCS at 4 times its stripes (set above the CPUs, as a user
// may), through a stamped handle, an unstamped one, a kept map and the
// series' add. Ps past the stripes have none of their own: their records
// must not share the plain adds of the Ps that do (pinnedAdd), and every
// record is counted.
func TestPinnedStripesMoreProcsThanStripes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, kind := range []Kind{KindCount, testIntSum} {
		m := &Measure{Name: "pinned/aliased"}
		a := newTestAgg(kind, []string{"k"}, nil, 0)
		m.Subscribe(a)
		tags := tagsOf("k", "x")
		stamped := m.Bind(tags)
		stamped.RecordInt(1)
		s := a.AppendSeries(nil)[0]
		stamped.st.Load().ctl.Store(ownDone) // given up, as twoStrikes leaves it
		s.inflate()
		G := 4 * (s.stripes.Load().mask + 1)
		stamped.RecordInt(1)
		unstamped := m.Bind(tags)
		unstamped.RecordInt(1)
		unstamped.st.Load().ctl.Store(ownDone)
		tm := NewTagMap(tags)
		a.RecordMap(tm, 1)
		const N = 200_000
		runtime.GOMAXPROCS(G)
		done := make(chan struct{})
		for g := range G {
			go func() {
				defer func() { done <- struct{}{} }()
				for i := range N {
					switch (g + i) % 4 {
					case 0:
						stamped.RecordInt(1)
					case 1:
						unstamped.Record(1)
					case 2:
						a.RecordMap(tm, 1)
					default:
						s.add(1, nil)
					}
				}
			}()
		}
		for range G {
			<-done
		}
		runtime.GOMAXPROCS(2)
		want := int64(G*N + 4)
		if kind == KindCount {
			if got := s.ReadCount(); got != want {
				t.Errorf("count: %d; want %d (%d lost)", got, want, want-got)
			}
		} else if got := s.ReadSum(); got != float64(want) {
			t.Errorf("integer sum: %v; want %d (%v lost)", got, want, float64(want)-got)
		}
	}
}

// TestEvictAllWaitsOnce: EvictAll seals striped Count and integer Sum
// series with one wait for pinned recorders (a stop of the world) for all
// of them, and each sealed value is the live one.
func TestEvictAllWaitsOnce(t *testing.T) {
	for _, kind := range []Kind{KindCount, testIntSum} {
		a := newTestAgg(kind, []string{"k"}, nil, 0)
		var ss []*Series
		for i := range 5 {
			v := fmt.Sprint(i)
			a.RecordTags(tagsOf("k", v), 2)
			s := a.AppendSeries(nil)[i]
			s.inflate()
			for range 3 {
				s.add(2, nil)
			}
			ss = append(ss, s)
		}
		before := unpinWaits.Load()
		a.EvictAll(append(ss, ss[0])) // listed twice: sealed once
		if got := unpinWaits.Load() - before; got != 1 {
			t.Errorf("kind %d: %d stops of the world for 5 striped series; want 1", kind, got)
		}
		for i, s := range ss {
			if !s.Sealed() {
				t.Fatalf("kind %d: series %d not sealed", kind, i)
			}
			if kind == KindCount {
				if got := s.ReadCount(); got != 4 {
					t.Errorf("count %d: %d; want 4", i, got)
				}
			} else if got := s.ReadSum(); got != 8 {
				t.Errorf("sum %d: %v; want 8", i, got)
			}
		}
		if got := a.SealSeq(); got != 5 {
			t.Errorf("kind %d: SealSeq %d; want 5", kind, got)
		}
	}
}
