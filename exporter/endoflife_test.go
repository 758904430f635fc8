package exporter

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestStopDuringRetryingExportReleases (issue 41, item 5): Stop whose
// deadline ends while a periodic export retries a backend that is down
// returns by its deadline with an error saying what it leaves unsent, and
// still lets go of the exporter's delta reader once that export returns:
// series another exporter evicts are then freed. Before, the stopped
// exporter stayed a registered reader for the life of the process (its
// series were never freed) and Stop returned a bare "context deadline
// exceeded".
func TestStopDuringRetryingExportReleases(t *testing.T) {
	m := stats.Int64("eol/retrying", "", "")
	v := &view.View{Name: "eol/retrying", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	ctx := context.Background()
	rc, err := tag.New(ctx, tag.Upsert(keyRoute, "/a"))
	if err != nil {
		t.Fatal(err)
	}
	stats.Record(rc, m.M(1))

	calls := make(chan struct{}, 1)
	down := FuncSink(func(ctx context.Context, _ Payload) error {
		select {
		case calls <- struct{}{}:
		default:
		}
		<-ctx.Done() // no answer: the export lasts until its deadline, however busy the machine
		return Retryable(errors.New("backend down"), 0)
	})
	quiet := slog.New(slog.DiscardHandler)
	stuck, err := New(down, Options{Temporality: Delta, Interval: time.Second, Timeout: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	stuck.Start()
	<-calls // a periodic export is retrying (its tracker read the view)
	sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err = stuck.Stop(sctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "unsent") {
		t.Fatalf("Stop during a retrying export: %v; want the deadline, saying what is unsent", err)
	}

	evicting, err := New(FuncSink(func(context.Context, Payload) error { return nil }), Options{Temporality: Delta, EvictIdleAfter: 1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	// Once the stuck export has returned, the series is read, sealed, read
	// sealed and freed by the evicting exporter alone.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if err := evicting.Export(ctx); err != nil {
			t.Fatal(err)
		}
		if rows, _ := view.RetrieveData(v.Name); len(rows) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the series is never freed: the stopped exporter still holds it")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// blockingWriter blocks every Write until release is closed.
type blockingWriter struct{ release chan struct{} }

func (w *blockingWriter) Write(p []byte) (int, error) {
	<-w.release
	return 0, io.ErrClosedPipe
}

// TestStopDeadlineWithBlockedWriterSink (issue 41, item 3): a WriterSink
// whose writer blocks (a full pipe) does not hold Stop past its deadline;
// the abandoned write breaks the stream, and later payloads are dropped
// and counted, never written after it. Before, Stop with a 200 ms
// deadline had not returned after 3 s.
func TestStopDeadlineWithBlockedWriterSink(t *testing.T) {
	m := stats.Int64("eol/blocked", "", "")
	v := &view.View{Name: "eol/blocked", Measure: m, Aggregation: view.Count()}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	stats.Record(context.Background(), m.M(1))
	w := &blockingWriter{release: make(chan struct{})}
	defer close(w.release)
	sink := &WriterSink{W: w}
	e, err := New(sink, Options{Temporality: Delta, Interval: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	e.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- e.Stop(ctx) }()
	select {
	case err := <-stopped:
		if err == nil || !strings.Contains(err.Error(), "abandoned") {
			t.Errorf("Stop with a blocked writer: %v; want the abandoned write's error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Stop with a 200 ms deadline did not return within 30 s")
	}
	err = sink.Send(context.Background(), Payload{Data: []byte{0x90}})
	if err == nil || !strings.Contains(err.Error(), "abandoned") {
		t.Errorf("Send after an abandoned write: %v; want the stream broken", err)
	}
	if s := e.Stats(); s.Dropped == 0 {
		t.Errorf("stats %+v; want the payload the broken stream could not take dropped", s)
	}
}
