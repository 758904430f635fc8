package core

import (
	"math"
	"slices"
	"sync/atomic"
	"time"
	"weak"
)

// Eviction of idle series (delta temporality).
//
// A series is evicted in two steps, so that no record and no reader's
// final delta is lost:
//
//  1. Evict seals it: every cell is marked so that a record cannot update
//     it and the values freeze. The series stays in the table, so every
//     reader still reads it, now with its final values. A record that
//     finds it sealed (Aggregator.recordSealed) revives it (unseal, under
//     mu) and goes on: a series that was not idle after all loses nothing.
//  2. Sweep frees it once every registered delta reader has read the table
//     after the seal (ReaderMark.Ack): it leaves the table, stops counting
//     against the cardinality limit, and its ID is reused with the next
//     generation. A later record of the same tags creates a new series.
//
// Started push exporters (core.ExportReader), cumulative ones too, hold a
// sealed series likewise until each has read the views after its seal
// (sealsDone, readSeals), so that each sends its final values. Pull readers
// (RetrieveData, Prometheus scrapes) see the series until it is freed,
// then no more; if it is recorded again it starts over
// from zero with a new start time, as a re-created counter does.

// sealState is what a sealed series keeps: its stripes (orig, restored on
// revival), the values of its word cells, and the seal's sequence number.
type sealState struct {
	seq   uint64
	gseq  uint64 // its number among every aggregator's seals (sealsDone), set under mu
	orig  *stripes
	words []uint64    // Count, Sum, LastValue: the word, then each stripe's
	cells *boundCells // the bound cells attached (Count, integer Sum)
	bound []uint64    // their values
	total uint64      // the value a read returns, combined as a live read would
	done  atomic.Bool // words and total are set
	freed atomic.Bool // left the table (set under Aggregator.mu)
	// pinned: the stripes' words include pinned ones (pinnedAdd), which
	// the seal reads once pinned recorders have finished (sealBegin).
	pinned bool
}

// ReaderMark is a delta reader's acknowledgement of the seals it has seen:
// Ack(seq) says the reader has read every series sealed up to seq. A series
// is freed only when every registered mark acknowledges its seal. The
// aggregator holds marks weakly: a reader dropped without RemoveReader does
// not hold series forever.
type ReaderMark struct {
	acked atomic.Uint64
	// A mark under 16 bytes would come from the runtime's tiny allocator,
	// which frees a block only when all its objects are dead: a dropped
	// mark could then outlive its reader. A line of its own also keeps
	// readers' acknowledgements apart.
	_ [56]byte
}

// Ack records that the reader has read the table through, having loaded
// seq (SealSeq) before it began.
func (m *ReaderMark) Ack(seq uint64) { m.acked.Store(seq) }

// AddReader registers a delta reader, whose first Ack must come before any
// series sealed from now on is freed. Set-up cost.
func (a *Aggregator) AddReader() *ReaderMark {
	m := new(ReaderMark)
	a.mu.Lock()
	a.marks = append(a.marks, weak.Make(m))
	a.keepErrs.Store(a.kind == KindSum || a.kind == KindDistribution)
	a.mu.Unlock()
	return m
}

// RemoveReader unregisters m (the reader stopped) and frees what only it
// held.
func (a *Aggregator) RemoveReader(m *ReaderMark) {
	a.mu.Lock()
	wm := weak.Make(m)
	a.marks = slices.DeleteFunc(a.marks, func(x weak.Pointer[ReaderMark]) bool { return x == wm })
	a.keepErrs.Store((a.kind == KindSum || a.kind == KindDistribution) && len(a.marks) > 0)
	a.mu.Unlock()
	a.Sweep()
}

// SealSeq returns the sequence number of the latest seal. A reader loads it
// before reading the table and acknowledges it after.
func (a *Aggregator) SealSeq() uint64 { return a.sealSeq.Load() }

// Evicted returns how many series have been freed.
func (a *Aggregator) Evicted() uint64 { return a.evicted.Load() }

// Sealed reports whether s is sealed (evicted and not revived).
func (s *Series) Sealed() bool {
	st := s.stripes.Load()
	return st != nil && st.seal != nil
}

// freed reports whether s has left its table.
func (s *Series) freed() bool {
	st := s.stripes.Load()
	return st != nil && st.seal != nil && st.seal.freed.Load()
}

// Evict seals s (step 1 above), unless it is the overflow series, already
// sealed, a summary's (KindSummary: a state set whole, never evicted), or
// its aggregator is detached. Cost: the aggregator's mutex and
// three small allocations, and for a striped Count or integer Sum a stop
// of the world (see sealBegin; EvictAll pays one for many series); the
// recorders of other series are not disturbed.
func (s *Series) Evict() {
	if a := s.agg; a != nil {
		a.EvictAll([]*Series{s})
	}
}

// EvictAll seals each series of ss, a's series, as Evict seals one, with
// one wait for pinned recorders (waitUnpinned) for all of them: a delta
// reader evicts the idle series of a view together, once it has read
// them all (delta.View.Done). It keeps no reference to ss.
func (a *Aggregator) EvictAll(ss []*Series) {
	if len(ss) == 0 || a.kind == KindSummary {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.detached.Load() {
		return
	}
	// The seal's number is published once the seal is complete: a reader
	// that loads it (SealSeq) before reading the table must find the
	// series frozen, or its acknowledgement would free values it never
	// read. Seals are serialised by mu.
	seq := a.sealSeq.Load()
	type begun struct {
		s  *Series
		ss *sealState
	}
	var buf [8]begun
	seals, wait := buf[:0], false
	for _, s := range ss {
		if s.overflow || s.agg != a || s.Sealed() { // Sealed: listed twice too
			continue
		}
		seq++
		ss := s.sealBegin(seq)
		seals = append(seals, begun{s, ss})
		wait = wait || ss.pinned
	}
	if wait {
		waitUnpinned()
	}
	for _, b := range seals {
		s, ss := b.s, b.ss
		s.sealFinish(ss)
		a.sealSeq.Store(ss.seq)
		// Counted once complete: an export reader that loads the count
		// (ExportReader.Ticket) before it reads the views reads s sealed.
		ss.gseq = sealsDone.Add(1)
		a.sealed = append(a.sealed, s)
	}
	a.nsealed.Store(int64(len(a.sealed)))
}

// Sweep frees the sealed series every registered reader has read sealed
// (step 2 above). Cost when nothing is sealed: one atomic load; else
// linear in the sealed series, the release of the freed ones' values
// arranged after the mutex is released (see releaseAllOnceUnreachable).
func (a *Aggregator) Sweep() {
	if a.nsealed.Load() == 0 {
		return
	}
	a.mu.Lock()
	exported := readSeals.Load()
	if a.detached.Load() || a.retired.Load() || a.shadowed.Load() || a.readFloor.Load() > exported {
		// Detached or unregistered (Detach keeps what its view's last
		// exports read), or an export reader has not read the view yet
		// (retire.go): it must read the series before they go.
		a.mu.Unlock()
		return
	}
	upTo := uint64(math.MaxUint64)
	a.marks = slices.DeleteFunc(a.marks, func(w weak.Pointer[ReaderMark]) bool {
		m := w.Value()
		if m != nil {
			upTo = min(upTo, m.acked.Load())
		}
		return m == nil
	})
	keep := a.sealed[:0]
	var gone []*Series
	for _, s := range a.sealed {
		st := s.stripes.Load()
		switch {
		case st == nil || st.seal == nil || st.seal.freed.Load(): // revived, or listed twice
		case st.seal.seq > upTo || st.seal.gseq > exported:
			keep = append(keep, s) // a delta reader, or a started exporter, has not read it sealed
		default:
			a.free(s, st.seal)
			gone = append(gone, s)
		}
	}
	clear(a.sealed[len(keep):])
	a.sealed = keep
	a.nsealed.Store(int64(len(keep)))
	nextID := a.nextID
	a.mu.Unlock()
	releaseAllOnceUnreachable(gone, nextID) // gone keeps them reachable until then
}

// free removes sealed s from the table. Called under a.mu; the caller
// arranges the release of its values (releaseAllOnceUnreachable).
func (a *Aggregator) free(s *Series, ss *sealState) {
	ss.freed.Store(true)
	s.boundCells().release(true) // the handles and maps it kept (boundcell.go)
	a.table.Load().remove(s)
	a.tombs++
	a.setID(s.id, nil)
	a.n.Add(-1)
	a.changes.Add(1)
	a.gens[s.id]++
	a.freeIDs = append(a.freeIDs, s.id)
	a.evicted.Add(1)
	if a.firstFree.Load() == 0 {
		a.firstFree.Store(time.Now().UnixNano())
	}
}

// AfterFree reports whether s was created after a series of its view was
// freed. Only such a series can have the tags of a freed one, whose
// cumulative values it restarts from zero: a cumulative reader gives it its
// own start time (Start) rather than the view's, so that backends see a
// reset, not a decrease. Both times are taken under the aggregator's mutex;
// a wall clock stepped back between them makes this false. Cost: one
// atomic load.
func (s *Series) AfterFree() bool {
	f := s.agg.firstFree.Load()
	return f != 0 && s.start >= f
}

// revive unseals s if it is sealed, so that a record that found it sealed
// can go on, and reports whether s can take records: false once s has
// been freed or its aggregator detached. Called without a.mu.
func (a *Aggregator) revive(s *Series) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := s.stripes.Load()
	switch {
	case a.detached.Load() || st != nil && st.seal != nil && st.seal.freed.Load():
		return false
	case st != nil && st.seal != nil:
		s.unseal(st.seal)
	}
	return true
}

// waitSeal waits for a seal in progress (a reader found a sealed cell
// before the seal's values were set): the sealer holds mu throughout.
func (a *Aggregator) waitSeal() {
	a.mu.Lock()
	a.mu.Unlock() //nolint:staticcheck // an empty critical section: waiting is the point
}

// A seal freezes a series s: sealBegin, then, if it says so,
// waitUnpinned, then sealFinish (EvictAll), under a.mu, on an unsealed
// series. Recorders race with it: the marker is published first, so
// recorders that load the stripes pointer from then on turn back; those
// that loaded it before may still update a cell until that cell is sealed
// (or, for the pinned words of a Count's or an integer Sum's stripes,
// until their pinned section ends, which the seal waits for), and their
// updates are in the frozen values. Cost: a few atomics per cell; for a
// striped Count or integer Sum, one stop of the world too (waitUnpinned),
// shared by the series EvictAll seals together.

// sealBegin publishes the seal's marker and returns its state; pinned
// says whether the seal must wait for pinned recorders (waitUnpinned)
// before sealFinish: the stripes' integer words (a Count's, an integer
// Sum's) take plain adds from pinned recorders (pinnedAdd), and once
// every recorder pinned before the marker's publication has finished,
// none writes them while the marker stands, and their values are final;
// they are read, not sealed. The series' own word and the float words
// take atomic adds and compare-and-swaps from recorders that are not
// pinned, and are sealed by sealFinish.
func (s *Series) sealBegin(seq uint64) *sealState {
	ss := &sealState{seq: seq}
	mark := &stripes{seal: ss}
	for !s.stripes.CompareAndSwap(nil, mark) {
		if st := s.stripes.Load(); st != nil { // inflate only moves it from nil
			ss.orig = st
			s.stripes.Store(mark)
			break
		}
	}
	ss.pinned = ss.orig != nil && (s.agg.kind == KindCount || s.agg.intSum)
	if sealHook != nil {
		sealHook(seq)
	}
	return ss
}

// sealFinish seals the cells of s, whose marker sealBegin published (and,
// if ss.pinned, whose pinned recorders have finished), and sets the
// sealed values.
func (s *Series) sealFinish(ss *sealState) {
	if s.agg.kind == KindDistribution {
		s.distCell().swapLock(lockFree, lockSealed)
		if ss.orig != nil {
			for p := range ss.orig.dists {
				ss.orig.dists[p].swapLock(lockFree, lockSealed)
			}
		}
		ss.done.Store(true)
		return
	}
	if s.agg.kind == KindExponential {
		s.sealExp(ss.orig)
		ss.done.Store(true)
		return
	}
	n := 1
	if ss.orig != nil {
		n += ss.orig.mask + 1
		if s.intWords() {
			n += ss.orig.mask + 1
		}
	}
	ss.words = make([]uint64, n)
	for i := range ss.words {
		w := s.wordCell(ss.orig, i)
		if s.pinnedCell(ss.orig, i) {
			ss.words[i] = w.Load()
			continue
		}
		for {
			old := w.Load()
			if w.CompareAndSwap(old, s.sealValue(ss.orig, i)) {
				ss.words[i] = old
				break
			}
		}
	}
	ss.cells = s.boundCells()
	ss.bound = ss.cells.seal()
	// The value a live read would have returned, combined in its order.
	switch s.agg.kind {
	case KindCount:
		var c uint64
		for _, w := range ss.words {
			c += w
		}
		for _, w := range ss.bound {
			c += w
		}
		ss.total = c
	case KindSum:
		f, _ := s.ownSum(ss.words[0])
		floats, ints := ss.stripeWords()
		for _, w := range floats {
			f += math.Float64frombits(w)
		}
		for _, w := range ints {
			f += float64(int64(w))
		}
		for _, w := range ss.bound {
			f += float64(int64(w))
		}
		ss.total = math.Float64bits(f)
	default:
		ss.total = ss.words[0]
	}
	ss.done.Store(true)
}

// pinnedCell reports whether word cell i of s, of stripes st (see
// wordCell), takes its adds from pinned recorders only (pinnedAdd): a
// Count's stripe word, an integer Sum's integer word.
func (s *Series) pinnedCell(st *stripes, i int) bool {
	return i > 0 && (s.agg.kind == KindCount || s.agg.intSum && i > st.mask+1)
}

// sealValue returns what a seal stores in word cell i of s, of stripes st
// (see wordCell): an integer cell's seal, or a float cell's.
func (s *Series) sealValue(st *stripes, i int) uint64 {
	if s.agg.kind == KindCount || s.agg.intSum && (i == 0 || i > st.mask+1) {
		return intSealedWord
	}
	return sealedWord
}

// stripeWords returns the sealed values of the stripes' float words (a
// Count's: its words) and of an integer Sum's integer words (see
// wordCell).
func (ss *sealState) stripeWords() (floats, ints []uint64) {
	if ss.orig == nil {
		return nil, nil
	}
	n := ss.orig.mask + 1
	return ss.words[1 : 1+n], ss.words[1+n:]
}

// sealHook, when set (tests), runs in the middle of a seal: marker
// published, cells not sealed yet.
var sealHook func(seq uint64)

// unseal restores the cells as they were sealed and the stripes pointer.
// Called under a.mu.
func (s *Series) unseal(ss *sealState) {
	if s.agg.kind == KindDistribution {
		s.distCell().swapLock(lockSealed, lockFree)
		if ss.orig != nil {
			for p := range ss.orig.dists {
				ss.orig.dists[p].swapLock(lockSealed, lockFree)
			}
		}
	} else if s.agg.kind == KindExponential {
		s.unsealExp(ss.orig)
	} else {
		for i, v := range ss.words {
			if !s.pinnedCell(ss.orig, i) { // never sealed: still v
				s.wordCell(ss.orig, i).Store(v)
			}
		}
		if ss.cells != nil {
			ss.cells.unseal(ss.bound)
		}
	}
	s.stripes.Store(ss.orig)
}

// wordCell returns word cell i of s: the series' word, then each stripe's,
// then, for an integer Sum, each stripe's integer word.
func (s *Series) wordCell(st *stripes, i int) *atomic.Uint64 {
	if i == 0 {
		return &s.word
	}
	if n := st.mask + 1; i > n {
		return &st.words[(i-1-n)*wordsPerLine+stripeInt]
	}
	return &st.words[(i-1)*wordsPerLine]
}

// sealedTotal returns the frozen value of a sealed word series, waiting for
// a seal in progress; ok is false when st is not a seal marker.
func (s *Series) sealedTotal(st *stripes) (total uint64, ok bool) {
	if st == nil || st.seal == nil {
		return 0, false
	}
	for !st.seal.done.Load() {
		s.agg.waitSeal() // the sealer holds mu until done is set
	}
	return st.seal.total, true
}
