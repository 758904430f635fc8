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
	if err := r.Stop(context.Background()); err != nil {
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
	if err := r.Stop(context.Background()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStopWaitsBoundedByContext(t *testing.T) {
	var r Runner
	release := make(chan struct{})
	started := make(chan struct{})
	r.Start(time.Millisecond, func(context.Context) error {
		select {
		case started <- struct{}{}:
		default:
		}
		<-release
		return nil
	}, nil)
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := r.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop during a stuck call: %v; want the context's deadline", err)
	}
	close(release)
}
