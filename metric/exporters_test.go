package metric_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/remotewrite"
	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/stats"
)

// TestEveryExporterCollects checks that each export path runs the
// callbacks first: a gauge whose value counts its own calls appears in
// the msgpack snapshot, OTLP and remote write outputs without a Collect.
func TestEveryExporterCollects(t *testing.T) {
	calls := 0
	g := metric.MustNewGauge("test/exported_everywhere", "", stats.UnitDimensionless, nil,
		func(o *metric.Observer) { calls++; o.Observe(float64(calls)) })
	defer g.Unregister()

	// The snapshot handler (JSON).
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Accept", "application/json")
	exporter.NewSnapshotHandler(exporter.SnapshotOptions{}).ServeHTTP(rec, req)
	if !strings.Contains(rec.Body.String(), `"name":"test/exported_everywhere"`) || calls != 1 {
		t.Errorf("snapshot handler: calls %d, body %.300s", calls, rec.Body.String())
	}

	// OTLP/HTTP through the push pipeline.
	bodies := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select {
		case bodies <- b:
		default:
		}
	}))
	defer srv.Close()
	oe, err := otlp.New(otlp.Options{Endpoint: srv.URL, Compression: otlp.NoCompression})
	if err != nil {
		t.Fatal(err)
	}
	if err := oe.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b := <-bodies; !strings.Contains(string(b), "test/exported_everywhere") || calls != 2 {
		t.Errorf("OTLP: calls %d, body lacks the gauge", calls)
	}

	// Remote write's request, as a push builds it.
	w, err := remotewrite.New(remotewrite.Options{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if b := w.AppendWriteRequest(nil, 1); !strings.Contains(string(b), "test_exported_everywhere") || calls != 3 {
		t.Errorf("remote write: calls %d, request lacks the gauge", calls)
	}
}

// TestStuckCallbackDoesNotFailPush checks that a push whose context
// bounds the export still sends when a callback never returns: the
// callbacks get half of the context's time, not the collect timeout.
// The export returns the callback's timeout (ErrCallback), having sent
// the rest, and does not count as a failed export.
func TestStuckCallbackDoesNotFailPush(t *testing.T) {
	metric.SetTimeout(time.Minute) // longer than the push's context
	defer metric.SetTimeout(testTimeout)
	release := make(chan struct{})
	defer close(release)
	stuck := metric.MustNewGauge("test/stuck_push", "", "1", nil, func(o *metric.Observer) { <-release })
	defer stuck.Unregister()
	good := metric.MustNewGauge("test/good_push", "", "1", nil, func(o *metric.Observer) { o.Observe(5) })
	defer good.Unregister()
	bodies := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- b
	}))
	defer srv.Close()
	oe, err := otlp.New(otlp.Options{Endpoint: srv.URL, Compression: otlp.NoCompression})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	if err := oe.Export(ctx); !errors.Is(err, metric.ErrCallback) || !strings.Contains(err.Error(), "test/stuck_push") {
		t.Fatalf("export with a stuck callback: %v; want ErrCallback naming it", err)
	}
	if st := oe.Stats(); st.Failures != 0 {
		t.Errorf("the export counted as failed: %+v", st)
	}
	if b := <-bodies; !strings.Contains(string(b), "test/good_push") {
		t.Error("the push lacks the other gauge")
	}
	if stuck.Err() == nil {
		t.Error("the stuck callback's timeout was not reported")
	}
}
