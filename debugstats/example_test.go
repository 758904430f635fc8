package debugstats_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"

	"github.com/zerostat/zerostat/debugstats"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func ExampleNewHandler() {
	route := tag.MustNewKey("http.route")
	latency := stats.Float64("example/latency", "Request latency", stats.UnitMilliseconds)
	v := &view.View{Measure: latency, TagKeys: []tag.Key{route}, Aggregation: view.Distribution(5, 10, 50)}
	if err := view.Register(v); err != nil {
		panic(err)
	}
	defer view.Unregister(v)
	users, _ := tag.New(context.Background(), tag.Upsert(route, "/users"))
	for _, ms := range []float64{3, 7, 8, 12, 40} {
		stats.Record(users, latency.M(ms))
	}

	// A service serves the page beside its handlers; the page's snapshot
	// links point back to it (Options.SnapshotURL is empty).
	mux := http.NewServeMux()
	mux.Handle("/debug/stats", debugstats.NewHandler(debugstats.Options{}))

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/stats", nil))
	page := rec.Body.String()
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	fmt.Println("histogram drawn:", strings.Contains(page, `<svg class="hist"`))
	// p50 from the buckets: the 2.5th of 5 values, 3/4 into [5, 10).
	fmt.Println("p50:", regexp.MustCompile(`<td class="num p50">([^<]*)</td>`).FindStringSubmatch(page)[1])

	// One view's snapshot as JSON.
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/stats?view=example%2Flatency&format=json", nil))
	var snap struct {
		Views []struct {
			Name string
			Rows []struct {
				Tags    map[string]string
				Count   int
				Buckets []int
			}
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &snap); err != nil {
		panic(err)
	}
	for _, v := range snap.Views {
		for _, r := range v.Rows {
			fmt.Println(v.Name, r.Tags, r.Count, r.Buckets)
		}
	}
	// Output:
	// 200 text/html; charset=utf-8
	// histogram drawn: true
	// p50: 8.75
	// example/latency map[http.route:/users] 5 [1 2 2 0]
}
