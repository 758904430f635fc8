package core

import (
	"sync/atomic"
)

// Bound cells.
//
// A Bound (a handle) of a measure with one view, a Count or an integer
// Sum, records into a cell of its own, in the handle's own cache line,
// rather than into its series' word: a record then touches one line, the
// handle's, where through the series it touched two, the handle's and
// then the series' (whose address it learnt from the first). With many
// live series that second line is a dependent cache miss: at 100,000
// handles recorded in a scattered order, perf put 90% of a record's
// time on the add to the series, and a bare atomic add to the series
// (its address known without the handle) cost 7.5 ns where the handle's
// record cost 78 (scratch benchmarks, this project's VM).
//
// Readers pay for it: an export reads each attached cell, one more line
// per series. Handles bound in the order their series were created are
// read in that order: BenchmarkScale's collect (Export, a handle per
// series) went from 38.5 to 49.6 ns a series at 100k and from 38.7 to
// 49.4 at 1M (+28%, pinned A/B, n=6), still flat from 100k to 1M. A kept
// context's map takes a cell the same way (mapcell.go); its cell, in the
// context, is read in the order the contexts were built.
//
// The cell is attached to the series: the series lists it (boundCells),
// and everything that reads or freezes the series' cells does the same to
// it: a read (ReadCount, ReadSum, ReadSumParts) adds it to the word and
// the stripes, a seal seals it, a revival restores it. So a record into a
// bound cell is counted exactly as a record into the series' word is,
// whichever path a later record takes. An attached cell stays attached
// (and keeps its handle reachable) until the series is freed; it never
// moves to another series; when the series leaves its view (freed after
// eviction, or its aggregator detached), its list lets go of the cells
// (release), so that a dropped handle or map is not kept alive by a
// series that is itself kept only by other dropped handles. A series
// takes at most maxBoundCells of them
// (handles bound to the same tags beyond that record through the series:
// handles created per request cannot grow a series without bound).

// maxBoundCells is the most bound cells a series takes.
const maxBoundCells = 4

// boundCells are the cells attached to one series, in attachment order
// (nil past the last): allocated with the series (newSeries), filled in
// place under the aggregator's mutex, read with atomic loads. A reader
// that misses a cell attached meanwhile misses nothing: a cell holds 0
// when it is attached. Before, the list was copied on each attachment, and
// the copies were in the order of the attachments: a kept context's map
// attaches its cell on its third record, at any time, so a snapshot of
// many series read their lists scattered in memory (BenchmarkScale's
// collect at 1M series: 94 -> 265 ns a series with the maps' cells, where
// in place it stays flat).
type boundCells [maxBoundCells]atomic.Pointer[atomic.Uint64]

// boundCells returns the cells attached to s, nil when there are none (or
// s is not a Count's or an integer Sum's).
func (s *Series) boundCells() *boundCells {
	if s.fast != fastCount && s.fast != fastIntSum {
		return nil // and the overflow series, never cached, never attached
	}
	return (*boundCells)(atomic.LoadPointer(&s.dist))
}

// attachCell attaches c, a Bound's own cell holding 0, to s, a series of
// a (a Count's or an integer Sum's). It reports false, attaching nothing,
// when s is sealed or freed, a is detached, or s has maxBoundCells already.
// Set-up cost, once per handle or map and series: a's mutex.
func (a *Aggregator) attachCell(s *Series, c *atomic.Uint64) bool {
	if s.fast != fastCount && s.fast != fastIntSum {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	bc := s.boundCells()
	if a.detached.Load() || s.Sealed() || bc == nil {
		return false
	}
	for i := range bc {
		if bc[i].Load() == nil {
			bc[i].Store(c)
			return true
		}
	}
	return false
}

// values loads the values of bc's cells into buf and returns them, and
// whether none was sealed (a reader then waits for the seal in progress
// and reads again).
func (bc *boundCells) values(buf *[maxBoundCells]uint64) ([]uint64, bool) {
	if bc == nil {
		return nil, true
	}
	ws, live := buf[:0], true
	for i := range bc {
		c := bc[i].Load()
		if c == nil {
			break
		}
		w := c.Load()
		live = live && !intSealed(w)
		ws = append(ws, w)
	}
	return ws, live
}

// addIntPart adds the integer i (an integer Sum's cell, within about
// ±2^61) to hi, lo, keeping what float64(i) and the addition round off in
// lo.
func addIntPart(hi, lo float64, i int64) (float64, float64) {
	x := float64(i)
	n := hi + x
	return n, lo + float64(i-int64(x)) + twoSumErr(hi, x, n)
}

// seal seals bc's cells as Series.sealFinish seals the word (under the
// aggregator's mutex, so no cell is attached meanwhile) and returns the
// values they held.
func (bc *boundCells) seal() []uint64 {
	if bc == nil {
		return nil
	}
	var ws []uint64
	for i := range bc {
		c := bc[i].Load()
		if c == nil {
			break
		}
		for {
			old := c.Load()
			if c.CompareAndSwap(old, intSealedWord) {
				ws = append(ws, old)
				break
			}
		}
	}
	return ws
}

// sealedCell is the cell a freed series' list points at in place of the
// cells it let go of (release): it holds intSealedWord and nothing adds
// to it, so a reader that loaded the series live before its seal and
// reads the list after its free finds a sealed cell, waits and reads the
// seal's frozen total, as it would have with the cells.
var sealedCell = func() *atomic.Uint64 {
	c := new(atomic.Uint64)
	c.Store(intSealedWord)
	return c
}()

// release lets go of bc's cells, which keep their handles or maps
// reachable, for a series that leaves its view; freed says what each cell
// becomes for the readers that may still read the series:
//
//   - a freed series (evicted, sealed: its cells are sealed too and a
//     read takes the seal's total): sealedCell, shared by every one;
//   - a detached aggregator's series, which its view's last exports may
//     still read: a cell of the series' own, allocated here, holding what
//     the cell held when release sealed it. A reader that loaded the cell
//     before finds it sealed, waits and reads again, so no read returns
//     less than an earlier one; a record still racing with the detach,
//     whose handle or map has not yet seen the view go, finds the cell
//     sealed and goes through the series (its handle then leaves the
//     cell), not counted, as a record into a freed series' word is not.
//
// Without it a freed series kept its cells' handles, and one live handle
// kept its whole block of 8 (internal/block), whose other, dropped,
// handles kept their own freed series, and so on: a soak run with handles
// bound and dropped under eviction grew by 529 MiB a minute (issue 48).
// No cell is attached meanwhile: the series is freed, or the aggregator
// detached (attachCell checks both under the aggregator's mutex).
func (bc *boundCells) release(freed bool) {
	if bc == nil {
		return
	}
	var copies *[maxBoundCells]atomic.Uint64
	for i := range bc {
		c := bc[i].Load()
		if c == nil || c == sealedCell {
			break
		}
		if freed {
			bc[i].Store(sealedCell)
			continue
		}
		if copies == nil {
			copies = new([maxBoundCells]atomic.Uint64)
		}
		copies[i].Store(c.Swap(intSealedWord))
		bc[i].Store(&copies[i])
	}
}

// unseal restores bc's cells to ws, the values seal returned.
func (bc *boundCells) unseal(ws []uint64) {
	for i, w := range ws {
		bc[i].Load().Store(w)
	}
}
