package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Callback is a set of values read by a user function when a snapshot is
// taken (the metric package's callback gauges and counters, the runtime
// package's metrics). Collect, which every snapshot path calls before it
// reads the views, runs Run of every registered callback, each on a
// goroutine of its own, waits for them up to the collect timeout, and
// then calls Apply of each one that returned in time, in registration
// order, so a callback only ever records from the collecting goroutine and
// never after its deadline.
//
// A callback that panics is reported (Panics, Err) and its values of that
// snapshot are dropped; one that has not returned by the deadline is
// reported (Timeouts, Err), its values dropped, and it is not run again
// until it returns: a stuck callback costs one goroutine, never one per
// snapshot. Either way the other callbacks and every view still go out.
type Callback struct {
	Name string
	// Run reads the values into the callback's own buffer. It must not
	// record: Apply does, if Run returned in time.
	Run func()
	// Apply records what Run read. Called by Collect, serialised with
	// every other Apply, only after Run returned without panicking.
	Apply func()

	running  atomic.Bool // Run is in progress (possibly past its deadline)
	panics   atomic.Uint64
	timeouts atomic.Uint64
	errors   atomic.Uint64
	lastErr  atomic.Pointer[error]
}

// Report records a failure of the callback other than a panic or a
// timeout (a bad value it read, an error it returned): Errors counts it,
// Err returns it, and, reported from Apply, the collect's error holds it.
func (c *Callback) Report(err error) {
	c.fail(err)
	c.errors.Add(1) // after fail: a collect that sees the count sees err
}

// Errors returns how many failures Report recorded.
func (c *Callback) Errors() uint64 { return c.errors.Load() }

// Panics returns how many runs of the callback panicked.
func (c *Callback) Panics() uint64 { return c.panics.Load() }

// Timeouts returns how many snapshots went out without the callback's
// values because it had not returned in time (including the snapshots
// taken while a previous run was still stuck).
func (c *Callback) Timeouts() uint64 { return c.timeouts.Load() }

// Err returns the callback's last failure (a panic or a timeout), nil
// when it never failed. Safe for concurrent use.
func (c *Callback) Err() error {
	if p := c.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// fail records err as the callback's last failure and returns it.
func (c *Callback) fail(err error) error { c.lastErr.Store(&err); return err }

var (
	cbMu      sync.Mutex // guards cbs' writers
	cbs       atomic.Pointer[[]*Callback]
	collectMu sync.Mutex // serialises Collect
	timeout   atomic.Int64
)

// DefaultCollectTimeout bounds how long Collect waits for the callbacks
// of one snapshot: long enough for a callback that does real work (a
// syscall, a runtime/metrics read) on a loaded machine, short enough that
// a stuck one delays a Prometheus scrape (10 s timeout by default) by a
// fraction of it.
const DefaultCollectTimeout = time.Second

func init() { timeout.Store(int64(DefaultCollectTimeout)) }

// SetCollectTimeout sets how long Collect waits for the callbacks of one
// snapshot (d <= 0: DefaultCollectTimeout).
func SetCollectTimeout(d time.Duration) {
	if d <= 0 {
		d = DefaultCollectTimeout
	}
	timeout.Store(int64(d))
}

// CollectTimeout returns how long Collect waits for the callbacks of one
// snapshot (SetCollectTimeout).
func CollectTimeout() time.Duration { return time.Duration(timeout.Load()) }

// AddCallback registers c (set-up cost; copy on write).
func AddCallback(c *Callback) {
	cbMu.Lock()
	defer cbMu.Unlock()
	next := append(slices.Clone(Callbacks()), c)
	cbs.Store(&next)
}

// RemoveCallback unregisters c. A run in progress finishes, but its values
// are applied only if Collect is already waiting for it.
func RemoveCallback(c *Callback) {
	cbMu.Lock()
	defer cbMu.Unlock()
	next := slices.DeleteFunc(slices.Clone(Callbacks()), func(x *Callback) bool { return x == c })
	cbs.Store(&next)
}

// Callbacks returns the registered callbacks. The caller must not modify
// the slice. Cost: one atomic load.
func Callbacks() []*Callback {
	if p := cbs.Load(); p != nil {
		return *p
	}
	return nil
}

// Collect runs the registered callbacks and records their values: every
// path that takes a snapshot (the push pipeline, the Prometheus handler,
// the snapshot handler, /debug/stats) calls it before reading core.Views.
// Without callbacks it costs one atomic load. With n callbacks: n
// goroutines, a channel and a timer, and what the callbacks themselves
// cost; it returns once all have returned, or after the collect timeout.
// Safe for concurrent use; concurrent calls run one after the other.
func Collect() { CollectContext(context.Background()) }

// ErrCallback is wrapped by the error CollectContext returns: a callback
// of the snapshot failed (panicked, did not return in time, or reported
// an error), and its values are left out of it or incomplete; every
// other value of the snapshot is in.
var ErrCallback = errors.New("callback failed")

// callbackError is CollectContext's error: the failures of one collect,
// each naming its callback.
type callbackError struct{ errs []error }

func (e *callbackError) Error() string {
	msg := "zerostat: " + strconv.Itoa(len(e.errs)) + " callback(s) failed in this snapshot: " + e.errs[0].Error()
	for _, err := range e.errs[1:] {
		msg += "; " + err.Error()
	}
	return msg
}

func (e *callbackError) Is(target error) bool { return target == ErrCallback }
func (e *callbackError) Unwrap() []error      { return e.errs }

// CollectContext is Collect bounded by ctx as well: it waits for the
// callbacks no longer than half the time left before ctx's deadline (so
// that a push whose context bounds the whole export still has time to
// send), nor past ctx's end. It returns what failed in this collect
// (wrapping ErrCallback; nil when every callback ran and applied): each
// callback that panicked, did not return in time, or reported an error
// (Report) while its values were applied.
func CollectContext(ctx context.Context) error {
	list := Callbacks()
	if len(list) == 0 {
		return nil
	}
	var errs []error
	collectMu.Lock()
	defer collectMu.Unlock()
	done := make(chan ran, len(list))
	started := make([]bool, len(list))
	pending := 0
	for i, c := range list {
		if !c.running.CompareAndSwap(false, true) {
			c.timeouts.Add(1)
			errs = append(errs, c.fail(fmt.Errorf("callback %q: still running since an earlier snapshot; its values are left out", c.Name)))
			continue
		}
		started[i] = true
		pending++
		go run(c, done)
	}
	ok := make([]bool, len(list))
	receive := func(r ran) {
		pending--
		if r.panicked != nil {
			errs = append(errs, r.panicked)
		} else if i := slices.Index(list, r.c); i >= 0 {
			ok[i] = true
		}
	}
	limit := time.Duration(timeout.Load())
	if dl, ok := ctx.Deadline(); ok {
		limit = min(limit, time.Until(dl)/2)
	}
	if pending > 0 {
		timer := time.NewTimer(limit)
		defer timer.Stop()
	wait:
		for pending > 0 {
			select {
			case r := <-done:
				receive(r)
			case <-timer.C:
				break wait
			case <-ctx.Done():
				break wait
			}
		}
	}
	if pending > 0 { // timed out: take what arrived meanwhile, report the rest
		for drained := false; !drained; {
			select {
			case r := <-done:
				receive(r)
			default:
				drained = true
			}
		}
		d := limit
		for i, c := range list {
			if started[i] && !ok[i] && c.running.Load() {
				c.timeouts.Add(1)
				errs = append(errs, c.fail(fmt.Errorf("callback %q: did not return within %v; its values are left out", c.Name, d)))
			}
		}
	}
	for i, c := range list {
		if ok[i] && c.Apply != nil {
			n := c.errors.Load()
			c.Apply()
			if c.errors.Load() != n { // Apply reported an error (Applies are serialised)
				errs = append(errs, c.Err())
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &callbackError{errs}
}

// ran is what a run of a callback sends back: the callback, or the
// error of its panic.
type ran struct {
	c        *Callback
	panicked error
}

// run calls c.Run, recovering a panic, and reports c on done (nil after a
// panic). done is buffered for every callback of the collect, so a late
// run never blocks.
func run(c *Callback, done chan<- ran) {
	out := ran{c: c}
	defer func() {
		if p := recover(); p != nil {
			c.panics.Add(1)
			out.panicked = c.fail(fmt.Errorf("callback %q: panicked: %v; its values are left out", c.Name, p))
		}
		c.running.Store(false)
		done <- out
	}()
	c.Run()
}
