// Package periodic runs an exporter's exports on a ticker: the Start and
// Stop every zerostat exporter shares.
package periodic

import (
	"context"
	"sync"
	"time"
)

// Runner calls a function every interval between Start and Stop. The zero
// value is ready to use; it is safe for concurrent use.
type Runner struct {
	mu       sync.Mutex
	stopping chan struct{}
	done     chan struct{}
	cancel   context.CancelFunc // ends the context of every call
}

// Start calls fn every interval, each call with a context bounded by the
// interval (and ended by a Stop whose own context ends first), passing
// its errors to onError (if not nil). It does nothing if already started.
func (r *Runner) Start(interval time.Duration, fn func(context.Context) error, onError func(error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping != nil {
		return
	}
	base, cancel := context.WithCancel(context.Background())
	r.stopping, r.done, r.cancel = make(chan struct{}), make(chan struct{}), cancel
	go loop(base, interval, fn, onError, r.stopping, r.done)
}

func loop(base context.Context, interval time.Duration, fn func(context.Context) error, onError func(error), stopping, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stopping:
			return
		case <-t.C:
		}
		// Stop wins over a tick that was pending when it came (a call
		// that outlasted the interval returns to both ready, and select
		// picks at random): no call starts after Stop.
		select {
		case <-stopping:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(base, interval)
		if err := fn(ctx); err != nil && onError != nil {
			onError(err)
		}
		cancel()
	}
}

// Stop ends the loop: no call starts after it. It waits for a call in
// progress to return; if ctx ends first, it ends that call's context and
// returns ctx's error at once, with a channel closed when the call has
// returned (nil otherwise). Stopping a runner that is not started does
// nothing.
func (r *Runner) Stop(ctx context.Context) (running <-chan struct{}, err error) {
	r.mu.Lock()
	stopping, done, cancel := r.stopping, r.done, r.cancel
	r.stopping, r.done, r.cancel = nil, nil, nil
	r.mu.Unlock()
	if stopping == nil {
		return nil, nil
	}
	close(stopping)
	select {
	case <-done:
		cancel()
		return nil, nil
	case <-ctx.Done():
		cancel()
		return done, ctx.Err()
	}
}
