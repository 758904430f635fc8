package periodic

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunner(t *testing.T) {
	var r Runner
	var calls, errs atomic.Int64
	fn := func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("no deadline")
		}
		if calls.Add(1)%2 == 0 {
			return errors.New("even")
		}
		return nil
	}
	r.Start(5*time.Millisecond, fn, func(error) { errs.Add(1) })
	r.Start(5*time.Millisecond, fn, nil) // started: ignored
	deadline := time.Now().Add(5 * time.Second)
	for calls.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if _, err := r.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := calls.Load()
	if n < 4 || errs.Load() < 1 {
		t.Fatalf("%d calls, %d errors", n, errs.Load())
	}
	time.Sleep(20 * time.Millisecond)
	if calls.Load() != n {
		t.Error("called after Stop")
	}
	if _, err := r.Stop(context.Background()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStopWaitsBoundedByContext(t *testing.T) {
	var r Runner
	release := make(chan struct{})
	started := make(chan struct{})
	ended := make(chan error, 1)
	r.Start(time.Millisecond, func(ctx context.Context) error {
		select {
		case started <- struct{}{}:
		default:
			return nil
		}
		<-ctx.Done() // a call that honours its context
		ended <- ctx.Err()
		<-release
		return nil
	}, nil)
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	running, err := r.Stop(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || running == nil {
		t.Errorf("Stop during a stuck call: %v, %v; want the context's deadline and the call's channel", running, err)
	}
	// Stop's deadline ended the call's context (the call's own interval
	// is 1 ms, but it is the runner's cancellation either way).
	if err := <-ended; err == nil {
		t.Error("the call's context did not end")
	}
	select {
	case <-running:
		t.Fatal("running closed before the call returned")
	default:
	}
	close(release)
	<-running
}

// TestStopWinsOverPendingTick: a call that outlasts the interval returns
// with a tick pending; Stop, called meanwhile, wins every time: no call
// starts after it. (Before, select chose at random between the tick and
// the stop: about half the runs started a call after Stop.)
func TestStopWinsOverPendingTick(t *testing.T) {
	for i := range 40 {
		var r Runner
		var after atomic.Bool
		var stopped atomic.Bool
		inCall := make(chan struct{})
		release := make(chan struct{})
		first := true
		r.Start(time.Millisecond, func(context.Context) error {
			if stopped.Load() {
				after.Store(true)
			}
			if first {
				first = false
				close(inCall)
				<-release
			}
			return nil
		}, nil)
		<-inCall
		time.Sleep(3 * time.Millisecond) // a tick is pending (the ticker keeps one)
		stopped.Store(true)
		r.mu.Lock()
		stopping := r.stopping
		r.mu.Unlock()
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := r.Stop(context.Background()); err != nil {
				t.Error(err)
			}
		}()
		<-stopping // Stop has been called: the call returns to a pending tick and the stop
		close(release)
		<-done
		if after.Load() {
			t.Fatalf("run %d: a call started after Stop", i)
		}
	}
}
