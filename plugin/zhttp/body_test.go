package zhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/internal/viewtest"
	"github.com/zerostat/zerostat/plugin/zhttp"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// sizes returns the count and sum of each row of the distribution view
// named name, by row tags.
func sizes(t *testing.T, name string) map[string][2]float64 {
	t.Helper()
	rows, err := view.RetrieveData(name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]float64{}
	for _, r := range rows {
		var kv []string
		for _, tg := range r.Tags {
			kv = append(kv, tg.Key.Name()+"="+tg.Value)
		}
		d := r.Data.(*view.DistributionData)
		out[strings.Join(kv, ",")] = [2]float64{float64(d.Count), d.Sum()}
	}
	return out
}

// sum returns the count and sum over every row of the view named name.
func sum(t *testing.T, name string) (count, total float64) {
	t.Helper()
	for _, cs := range sizes(t, name) {
		count += cs[0]
		total += cs[1]
	}
	return count, total
}

// chunked is a request body of unknown length: net/http sends it chunked.
func chunked(n int) io.Reader { return io.MultiReader(strings.NewReader(strings.Repeat("x", n))) }

// TestIssue43BodySizes (issue 43, item 6): the OpenTelemetry body sizes
// are the bytes the handler read and wrote, as otelhttp counts them, not
// the Content-Length: a 2,000-byte chunked POST is 2,000 (the
// Content-Length gave 0), a body the handler never reads is 0 (it gave
// the declared length). ochttp's request_bytes keeps ochttp's
// Content-Length.
func TestIssue43BodySizes(t *testing.T) {
	register(t, zhttp.OTelServerViews...)
	register(t, zhttp.ServerRequestBytesView)
	m := http.NewServeMux()
	m.HandleFunc("POST /read", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		io.WriteString(w, strings.Repeat("y", int(n)/2))
	})
	m.HandleFunc("POST /unread", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ignored") })
	srv := httptest.NewServer(zhttp.NewHandler(m, zhttp.Options{}))
	defer srv.Close()
	for _, c := range []struct {
		path string
		body io.Reader
	}{{"/read", chunked(2000)}, {"/unread", strings.NewReader(strings.Repeat("z", 1000))}} {
		resp, err := http.Post(srv.URL+c.path, "text/plain", c.body)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	srv.Close() // the handlers recorded
	for _, c := range []struct {
		view        string
		route       string
		count, want float64
	}{
		{zhttp.OTelServerRequestSizeView.Name, "/read", 1, 2000},
		{zhttp.OTelServerRequestSizeView.Name, "/unread", 1, 0},
		{zhttp.OTelServerResponseSizeView.Name, "/read", 1, 1000},
		{zhttp.OTelServerResponseSizeView.Name, "/unread", 1, 7},
	} {
		var got [2]float64
		for k, cs := range sizes(t, c.view) {
			if strings.Contains(k, "http.route="+c.route+",") {
				got = cs
			}
		}
		if got != [2]float64{c.count, c.want} {
			t.Errorf("%s, route %s: count and sum %v; want %v and %v", c.view, c.route, got, c.count, c.want)
		}
	}
	if n, total := sum(t, zhttp.ServerRequestBytesView.Name); n != 2 || total != 1000 {
		t.Errorf("ochttp's request_bytes: count %v sum %v; want 2 and 1000 (the Content-Lengths: 0 for chunked, 1000)", n, total)
	}
}

// TestHandlerRestoresBody: the handler sees a counting body, and the
// request's own body is back once ServeHTTP returns; a NoBody body is
// left as it is.
func TestHandlerRestoresBody(t *testing.T) {
	var seen io.ReadCloser
	h := zhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Body }), zhttp.Options{})
	req := httptest.NewRequest("POST", "/x", strings.NewReader("abc"))
	own := req.Body
	h.ServeHTTP(httptest.NewRecorder(), req)
	if seen == own || req.Body != own {
		t.Errorf("handler saw the request's own body %v, body after %v; want a wrapper, then the request's own", seen == own, req.Body == own)
	}
	req = httptest.NewRequest("GET", "/x", nil)
	h.ServeHTTP(httptest.NewRecorder(), req)
	if seen != http.NoBody || req.Body != http.NoBody {
		t.Errorf("NoBody: handler saw %T, body after %T; want NoBody both", seen, req.Body)
	}
}

// TestIssue43ClientRequestBodySize (issue 43, items 4 and 6):
// http.client.request.body.size is the bytes Base read from the request
// body (0 without one), recorded with the client's tags, in both modes.
func TestIssue43ClientRequestBodySize(t *testing.T) {
	register(t, zhttp.OTelClientViews...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	for _, atHeaders := range []bool{false, true} {
		client := &http.Client{Transport: &zhttp.Transport{AtHeaders: atHeaders}}
		for _, body := range []io.Reader{chunked(2000), strings.NewReader("12345"), nil} {
			req, err := http.NewRequest("POST", srv.URL, body)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Request != req {
				t.Errorf("resp.Request is not the caller's request")
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	if n, total := sum(t, zhttp.OTelClientRequestSizeView.Name); n != 6 || total != 2*2005 {
		t.Errorf("%s: count %v sum %v; want 6 and %d", zhttp.OTelClientRequestSizeView.Name, n, total, 2*2005)
	}
	if n, _ := sum(t, zhttp.OTelClientDurationView.Name); n != 6 {
		t.Errorf("%s: count %v; want 6", zhttp.OTelClientDurationView.Name, n)
	}
}

// lateBase answers at once, and reads and closes the request body only
// when released, as a transport still sending the body after the
// response headers does; with never it does not close it at all.
type lateBase struct {
	release chan struct{}
	done    chan struct{}
	never   bool
}

func (b *lateBase) RoundTrip(req *http.Request) (*http.Response, error) {
	go func() {
		defer close(b.done)
		<-b.release
		io.Copy(io.Discard, req.Body)
		if !b.never {
			req.Body.Close()
		}
	}()
	return &http.Response{StatusCode: 200, Proto: "HTTP/1.1", Body: http.NoBody, Request: req}, nil
}

// TestClientBodyClosedAfterResponse: the request body's size is recorded
// when Base closes the body, after the response (the rest of the request
// is recorded at the response); a Base that never closes it leaves out
// only the size.
func TestClientBodyClosedAfterResponse(t *testing.T) {
	register(t, zhttp.OTelClientViews...)
	for _, never := range []bool{false, true} {
		b := &lateBase{release: make(chan struct{}), done: make(chan struct{}), never: never}
		req := httptest.NewRequest("PUT", "http://example.com/x", chunked(300))
		if _, err := zhttp.NewTransport(b).RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		close(b.release)
		<-b.done
	}
	if n, _ := sum(t, zhttp.OTelClientDurationView.Name); n != 2 {
		t.Errorf("%s: count %v; want 2", zhttp.OTelClientDurationView.Name, n)
	}
	if n, total := sum(t, zhttp.OTelClientRequestSizeView.Name); n != 1 || total != 300 {
		t.Errorf("%s: count %v sum %v; want 1 and 300 (the body closed; none for the one never closed)", zhttp.OTelClientRequestSizeView.Name, n, total)
	}
}

// TestTransportConcurrentSafe: Base closing the request body while the
// caller ends the response body, in either order, records each request's
// measures once (run it with -race).
func TestTransportConcurrentSafe(t *testing.T) {
	register(t, zhttp.OTelClientViews...)
	const goroutines, each = 4, 100
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; i < each; i++ {
				b := &racingBase{}
				req := httptest.NewRequest("POST", "http://example.com/x", strings.NewReader("abcd"))
				resp, err := zhttp.NewTransport(b).RoundTrip(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				b.wg.Wait()
			}
		}()
	}
	close(start)
	wg.Wait()
	if n, total := sum(t, zhttp.OTelClientRequestSizeView.Name); n != goroutines*each || total != 4*goroutines*each {
		t.Errorf("%s: count %v sum %v; want %d and %d", zhttp.OTelClientRequestSizeView.Name, n, total, goroutines*each, 4*goroutines*each)
	}
	if n, _ := sum(t, zhttp.OTelClientDurationView.Name); n != goroutines*each {
		t.Errorf("%s: count %v; want %d", zhttp.OTelClientDurationView.Name, n, goroutines*each)
	}
}

// racingBase reads and closes the request body in a goroutine of its
// own, racing the response body's end.
type racingBase struct{ wg sync.WaitGroup }

func (b *racingBase) RoundTrip(req *http.Request) (*http.Response, error) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}()
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Request: req}, nil
}

// TestClientFailureClosesBody: a failed round trip with a body records
// once, with the bytes Base read before failing (here none).
func TestClientFailureClosesBody(t *testing.T) {
	register(t, zhttp.OTelClientViews...)
	fail := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		req.Body.Close()
		return nil, errors.New("no")
	})
	req := httptest.NewRequest("POST", "http://example.com/x", strings.NewReader("abcd"))
	if _, err := zhttp.NewTransport(fail).RoundTrip(req); err == nil {
		t.Fatal("no error")
	}
	viewtest.Equal(t, zhttp.OTelClientRequestSizeView.Name, map[string]float64{
		tags(h11, "error.type=_OTHER", "http.request.method=POST", "server.address=example.com", "server.port=80", "url.scheme=http"): 1})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// resettableBody is a request body a test reads again after Reset,
// allocating nothing.
type resettableBody struct{ r strings.Reader }

func (b *resettableBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *resettableBody) Close() error               { return nil }

// TestHandlerBodyAllocs: counting the request body's bytes allocates
// nothing (the counter is a field of the pooled response writer wrapper).
func TestHandlerBodyAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	register(t, zhttp.DefaultServerViews...)
	register(t, zhttp.OTelServerViews...)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf [8]byte
		for {
			if _, err := r.Body.Read(buf[:]); err != nil {
				break
			}
		}
		w.Write(body)
	})
	req := httptest.NewRequest("POST", "/items", nil)
	b := &resettableBody{}
	req.Body, req.ContentLength = b, 11
	w := &nopWriter{h: http.Header{}}
	bare := testing.AllocsPerRun(200, func() { b.r.Reset("hello world"); next.ServeHTTP(w, req) })
	h := zhttp.NewHandler(next, zhttp.Options{})
	wrapped := testing.AllocsPerRun(200, func() { b.r.Reset("hello world"); h.ServeHTTP(w, req) })
	if wrapped != bare {
		t.Errorf("allocs per request with a body: %v wrapped, %v bare; want the handler to add none", wrapped, bare)
	}
	if n, total := sum(t, zhttp.OTelServerRequestSizeView.Name); n != 201 || total != 11*201 {
		t.Errorf("%s: count %v sum %v; want 201 and %d", zhttp.OTelServerRequestSizeView.Name, n, total, 11*201)
	}
}

// TestTransportBodyAllocs: a request with a body costs one allocation in
// both modes, whatever the response (here one without a body): the
// request's copy, its body's counter and the response body's wrapper,
// together.
func TestTransportBodyAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	register(t, zhttp.ClientCompletedCount, zhttp.ClientReceivedBytesDistribution)
	register(t, zhttp.OTelClientViews...)
	b := &resettableBody{}
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		var buf [8]byte
		for {
			if _, err := req.Body.Read(buf[:]); err != nil {
				break
			}
		}
		req.Body.Close()
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: req}, nil
	})
	req := httptest.NewRequest("POST", "http://example.com/x", nil)
	req.Body, req.ContentLength = b, 5
	run := func(rt http.RoundTripper) float64 {
		return testing.AllocsPerRun(200, func() {
			b.r.Reset("hello")
			resp, _ := rt.RoundTrip(req)
			resp.Body.Close()
		})
	}
	bare := run(base)
	for _, atHeaders := range []bool{false, true} {
		if wrapped := run(&zhttp.Transport{Base: base, AtHeaders: atHeaders}); wrapped != bare+1 {
			t.Errorf("AtHeaders %v: allocs per request with a body %v through the Transport, %v bare; want 1 more", atHeaders, wrapped, bare)
		}
	}
	if n, total := sum(t, zhttp.OTelClientRequestSizeView.Name); n != 2*201 || total != 5*2*201 {
		t.Errorf("%s: count %v sum %v; want %d and %d", zhttp.OTelClientRequestSizeView.Name, n, total, 2*201, 5*2*201)
	}
}

// TestTransportBodyContextTags: a request with a body whose context
// carries tags records them with the Transport's own.
func TestTransportBodyContextTags(t *testing.T) {
	tenant := tag.MustNewKey("tenant")
	v := &view.View{Name: "test/client_size_by_tenant", Measure: zhttp.ClientRequestSize, Aggregation: view.Sum(), TagKeys: []tag.Key{tenant}}
	register(t, v)
	ctx, err := tag.New(context.Background(), tag.Upsert(tenant, "a"))
	if err != nil {
		t.Fatal(err)
	}
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: req}, nil
	})
	req := httptest.NewRequest("POST", "http://example.com/x", strings.NewReader("abc")).WithContext(ctx)
	if _, err := zhttp.NewTransport(base).RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	viewtest.Equal(t, v.Name, map[string]float64{"tenant=a": 3})
}
