package otelinstr_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	zotel "github.com/zerostat/zerostat/otel"
	"github.com/zerostat/zerostat/view"
)

// An otelhttp handler recording into zerostat views: the views go out
// through any zerostat exporter (OTLP, Prometheus, remote write, msgpack).
func Example_otelhttp() {
	mp := zotel.NewMeterProvider(zotel.WithViewPrefix("example."))
	defer mp.Shutdown(context.Background())
	h := otelhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}), "hello", otelhttp.WithMeterProvider(mp))
	srv := httptest.NewServer(h)
	for range 3 {
		resp, err := http.Get(srv.URL)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	srv.Close() // waits for the handlers (otelhttp records after them)
	rows, _ := view.RetrieveData("example.http.server.request.duration")
	for _, r := range rows {
		fmt.Println("requests:", r.Data.(*view.DistributionData).Count)
	}
	// Output:
	// requests: 3
}
