package zhttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/zerostat/zerostat/plugin/zhttp"
	"github.com/zerostat/zerostat/view"
)

func ExampleNewHandler() {
	if err := view.Register(zhttp.ServerResponseCountByStatusCode); err != nil {
		panic(err)
	}
	defer view.Unregister(zhttp.ServerResponseCountByStatusCode)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello "+r.PathValue("name"))
	})
	srv := httptest.NewServer(zhttp.NewHandler(mux, zhttp.Options{}))
	defer srv.Close()
	client := &http.Client{Transport: zhttp.NewTransport(nil)}
	for _, path := range []string{"/hello/a", "/hello/b", "/nowhere"} {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	rows, _ := view.RetrieveData("opencensus.io/http/server/response_count_by_status_code")
	for _, r := range rows {
		fmt.Println(r.Tags, r.Data.(*view.CountData).Value)
	}
	// Output:
	// [{http.status 200}] 2
	// [{http.status 404}] 1
}
