package remotewrite_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/zerostat/zerostat/exporter/remotewrite"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

func Example() {
	jobs := stats.Int64("example/jobs", "Jobs done", stats.UnitDimensionless)
	v := &view.View{Measure: jobs, Aggregation: view.Count()}
	if err := view.Register(v); err != nil {
		panic(err)
	}
	defer view.Unregister(v)
	stats.Record(context.Background(), jobs.M(1))

	// A stand-in for Prometheus's /api/v1/write.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Println(r.Header.Get("Content-Type"), r.Header.Get("Content-Encoding"),
			r.Header.Get("X-Prometheus-Remote-Write-Version"), len(body) > 0)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	w, err := remotewrite.New(remotewrite.Options{URL: srv.URL, ConstLabels: map[string]string{"job": "example"}})
	if err != nil {
		panic(err)
	}
	w.Start()
	if err := w.Stop(context.Background()); err != nil { // the final push
		panic(err)
	}
	st := w.Stats()
	fmt.Println(st.Points >= 1, st.DroppedPoints)
	// Output:
	// application/x-protobuf snappy 0.1.0 true
	// true 0
}
