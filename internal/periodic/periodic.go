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
}

// Start calls fn every interval, each call with a context bounded by the
// interval, passing its errors to onError (if not nil). It does nothing if
// already started.
func (r *Runner) Start(interval time.Duration, fn func(context.Context) error, onError func(error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping != nil {
		return
	}
	r.stopping, r.done = make(chan struct{}), make(chan struct{})
	go loop(interval, fn, onError, r.stopping, r.done)
}

func loop(interval time.Duration, fn func(context.Context) error, onError func(error), stopping, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stopping:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), interval)
			if err := fn(ctx); err != nil && onError != nil {
				onError(err)
			}
			cancel()
		}
	}
}

// Stop ends the loop and waits for a call in progress to return, or for
// ctx to end (then it returns ctx's error). Stopping a runner that is not
// started does nothing.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	stopping, done := r.stopping, r.done
	r.stopping, r.done = nil, nil
	r.mu.Unlock()
	if stopping == nil {
		return nil
	}
	close(stopping)
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
