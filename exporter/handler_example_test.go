package exporter_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

func ExampleNewSnapshotHandler() {
	jobs := stats.Int64("example/snapshot_jobs", "Jobs done", stats.UnitDimensionless)
	v := &view.View{Measure: jobs, Aggregation: view.Count()}
	if err := view.Register(v); err != nil {
		panic(err)
	}
	defer view.Unregister(v)
	stats.Record(context.Background(), jobs.M(1), jobs.M(1))

	srv := httptest.NewServer(exporter.NewSnapshotHandler(exporter.SnapshotOptions{}))
	defer srv.Close()
	for _, accept := range []string{"application/msgpack", "text/plain", "image/png"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
		switch accept {
		case "application/msgpack":
			p, err := wire.Decode(body)
			if err != nil {
				panic(err)
			}
			for _, v := range p.Views {
				if v.Name == "example/snapshot_jobs" {
					fmt.Println(v.Name, v.Rows[0].Count)
				}
			}
		case "text/plain":
			for _, l := range strings.Split(string(body), "\n") {
				if strings.HasPrefix(l, "example_snapshot_jobs") {
					fmt.Println(l)
				}
			}
		}
	}
	// Output:
	// 200 application/msgpack
	// example/snapshot_jobs 2
	// 200 text/plain; version=0.0.4; charset=utf-8
	// example_snapshot_jobs_total 2
	// 406 text/plain; charset=utf-8
}
