package exporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var snapSeq atomic.Int64

// snapFixture registers a count and a distribution view and records into
// them; it returns the view name prefix.
func snapFixture(t testing.TB, rows int) string {
	t.Helper()
	p := fmt.Sprintf("snap%d", snapSeq.Add(1))
	m := stats.Float64(p+"/latency", "Latency", stats.UnitMilliseconds)
	vs := []*view.View{
		{Name: p + "/count", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}},
		{Name: p + "/dist", Measure: m, Aggregation: view.Distribution(1, 10, 100), TagKeys: []tag.Key{keyRoute, keyStatus}},
	}
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
	for r := range rows {
		ctx, err := tag.New(context.Background(), tag.Upsert(keyRoute, fmt.Sprintf("/r%d", r)), tag.Upsert(keyStatus, "200"))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			stats.Record(ctx, m.M(float64(r+i*20)))
		}
	}
	return p
}

type snapResponse struct {
	status                        int
	contentType, encoding, length string
	body                          []byte
}

func get(t *testing.T, url, method, acceptHdr, encoding string) snapResponse {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if acceptHdr != "" {
		req.Header.Set("Accept", acceptHdr)
	}
	req.Header.Set("Accept-Encoding", encoding) // explicit: no transparent gunzip
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return snapResponse{resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"), resp.Header.Get("Content-Length"), body}
}

func TestSnapshotHandlerNegotiates(t *testing.T) {
	p := snapFixture(t, 5)
	srv := httptest.NewServer(NewSnapshotHandler(SnapshotOptions{
		Resource:   Resource{ServiceName: "snaptest"},
		Prometheus: prometheus.Options{Namespace: "ns"},
	}))
	defer srv.Close()

	checkPayload := func(t *testing.T, pl *wire.Payload) {
		t.Helper()
		found := 0
		for _, v := range pl.Views {
			switch v.Name {
			case p + "/count":
				found++
				if len(v.Rows) != 5 || v.Rows[0].Count != 3 {
					t.Errorf("count view rows %+v", v.Rows)
				}
			case p + "/dist":
				found++
				if len(v.Rows) != 5 || v.Rows[0].Count != 3 || len(v.Rows[0].Buckets) != 4 {
					t.Errorf("dist view rows %+v", v.Rows)
				}
			}
		}
		if found != 2 {
			t.Errorf("found %d of the 2 views", found)
		}
		if pl.Temporality != wire.Cumulative || !pl.Last || pl.Part != 0 {
			t.Errorf("header: %+v", pl)
		}
	}

	for _, c := range []struct {
		accept, encoding, wantType string
		gz                         bool
	}{
		{"application/msgpack", "", wire.ContentType, false},
		{"application/x-msgpack;q=0.9, application/json;q=0.1", "gzip", wire.ContentType, true},
		{"application/json", "", ContentTypeJSON, false},
		{"", "", ContentTypeJSON, false},
		{"*/*", "gzip", ContentTypeJSON, true},
		{"text/plain", "", prometheus.ContentTypeText, false},
		{"application/openmetrics-text; version=1.0.0", "gzip", prometheus.ContentTypeOpenMetrics, true},
	} {
		t.Run(c.accept+"/"+c.encoding, func(t *testing.T) {
			r := get(t, srv.URL, http.MethodGet, c.accept, c.encoding)
			if r.status != 200 || r.contentType != c.wantType {
				t.Fatalf("status %d, Content-Type %q; want 200, %q", r.status, r.contentType, c.wantType)
			}
			if r.length != strconv.Itoa(len(r.body)) {
				t.Errorf("Content-Length %s; body %d bytes", r.length, len(r.body))
			}
			body := r.body
			if (r.encoding == "gzip") != c.gz {
				t.Errorf("Content-Encoding %q; want gzip %v", r.encoding, c.gz)
			}
			if r.encoding == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			switch c.wantType {
			case wire.ContentType:
				pl, err := wire.Decode(body)
				if err != nil {
					t.Fatal(err)
				}
				checkPayload(t, pl)
				if pl.Resource[0].Value != "snaptest" {
					t.Errorf("resource %v", pl.Resource)
				}
			case ContentTypeJSON:
				var js struct {
					Resource map[string]string
					Views    []struct {
						Name string
						Rows []struct {
							Tags  map[string]string
							Count uint64
						}
					}
				}
				if err := json.Unmarshal(body, &js); err != nil {
					t.Fatal(err)
				}
				found := 0
				for _, v := range js.Views {
					if v.Name == p+"/count" && len(v.Rows) == 5 && v.Rows[0].Count == 3 && v.Rows[0].Tags["route"] != "" {
						found++
					}
				}
				if found != 1 || js.Resource["service.name"] != "snaptest" {
					t.Errorf("JSON lacks the count view or the resource:\n%.500s", body)
				}
			default:
				want := "ns_" + p + "_count_total{route=\"/r0\"} 3\n"
				if c.wantType == prometheus.ContentTypeOpenMetrics { // a counter's value is a float there, as client_golang writes it
					want = "ns_" + p + "_count_total{route=\"/r0\"} 3.0\n"
				}
				if !bytes.Contains(body, []byte(want)) {
					t.Errorf("Prometheus text lacks the count view:\n%.500s", body)
				}
				if om := c.wantType == prometheus.ContentTypeOpenMetrics; bytes.HasSuffix(body, []byte("# EOF\n")) != om {
					t.Errorf("# EOF present: %v; want %v", !om, om)
				}
			}
		})
	}

	if r := get(t, srv.URL, http.MethodGet, "image/png, text/html", ""); r.status != http.StatusNotAcceptable || !strings.Contains(string(r.body), "application/msgpack") {
		t.Errorf("unacceptable Accept: %d %q", r.status, r.body)
	}
	if r := get(t, srv.URL, http.MethodPost, "", ""); r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", r.status)
	}
	if r := get(t, srv.URL, http.MethodHead, "application/msgpack", ""); r.status != 200 || len(r.body) != 0 || r.length == "" || r.length == "0" {
		t.Errorf("HEAD: %d, %d body bytes, Content-Length %q", r.status, len(r.body), r.length)
	}
}

// discardWriter is a ResponseWriter that drops the body and keeps its
// header map.
type discardWriter struct {
	h http.Header
	n int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }

// The msgpack and Prometheus forms reuse their buffers: what allocates
// per request is only the response headers (the Content-Length string,
// the header values) and the closure of the encoder's emit.
func TestSnapshotHandlerAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	snapFixture(t, 2000)
	h := NewSnapshotHandler(SnapshotOptions{DisableCompression: true})
	for _, acc := range []string{"application/msgpack", "text/plain"} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Accept", acc)
		w := &discardWriter{h: http.Header{}}
		allocs := testing.AllocsPerRun(20, func() {
			clear(w.h)
			w.n = 0
			h.ServeHTTP(w, req)
		})
		if allocs > 6 {
			t.Errorf("%s: %v allocs per request; want at most 6 (headers only)", acc, allocs)
		}
		if w.n < 2000*10 {
			t.Errorf("%s: %d bytes written", acc, w.n)
		}
		t.Logf("%s: %v allocs, %d bytes", acc, allocs, w.n)
	}
}

func TestSnapshotHandlerConcurrentSafe(t *testing.T) {
	p := snapFixture(t, 50)
	srv := httptest.NewServer(NewSnapshotHandler(SnapshotOptions{}))
	defer srv.Close()
	m := stats.Float64(p+"/latency", "", "")
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range 20 {
				acc := []string{"application/msgpack", "application/json", "text/plain", "application/openmetrics-text"}[(g+i)%4]
				if r := get(t, srv.URL, http.MethodGet, acc, "gzip"); r.status != 200 {
					t.Errorf("%s: %d", acc, r.status)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, "/hot"))
		for range 20000 {
			stats.Record(ctx, m.M(1))
		}
	}()
	close(start)
	wg.Wait()
}

// TestSnapshotHandlerOneViewSorted: view=NAME restricts the snapshot to
// one registered view (404 for an unknown name), and SortRows orders its
// rows by their tag values.
func TestSnapshotHandlerOneViewSorted(t *testing.T) {
	f := newFixture(t, 30)
	h := NewSnapshotHandler(SnapshotOptions{DisableCompression: true, SortRows: true})
	get := func(query string) (*httptest.ResponseRecorder, *wire.Payload) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/?"+query, nil)
		req.Header.Set("Accept", wire.ContentType)
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return rec, nil
		}
		p, err := wire.Decode(rec.Body.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return rec, p
	}
	_, p := get("view=" + url.QueryEscape(f.names[0]))
	if p == nil || len(p.Views) != 1 || p.Views[0].Name != f.names[0] || len(p.Views[0].Rows) != 30 {
		t.Fatalf("view=%s: %+v; want that view alone with its 30 rows", f.names[0], p)
	}
	rows := p.Views[0].Rows
	for i := 1; i < len(rows); i++ {
		if slices.Compare(rows[i-1].Values, rows[i].Values) > 0 {
			t.Fatalf("rows not sorted by tag values: %v before %v", rows[i-1].Values, rows[i].Values)
		}
	}
	if rec, _ := get("view=no/such/view"); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "no/such/view") {
		t.Errorf("unknown view: %d %q; want 404 naming it", rec.Code, rec.Body.String())
	}
}

// TestSnapshotHandlerInvalidResource: NewSnapshotHandler has no error to
// return, so a Resource that Normalize refuses is answered, to every
// request and in every form, with 500 and the error naming the key, and
// a valid one's attributes appear once each.
func TestSnapshotHandlerInvalidResource(t *testing.T) {
	newFixture(t, 1)
	bad := NewSnapshotHandler(SnapshotOptions{Resource: Resource{Attributes: []wire.Attribute{{Key: "team", Value: "a"}, {Key: "team", Value: "b"}}}})
	for _, accept := range []string{wire.ContentType, ContentTypeJSON, "text/plain"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Accept", accept)
		bad.ServeHTTP(rec, req)
		if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), `lists "team" twice`) {
			t.Errorf("Accept %s: %d %q; want 500 naming the repeated key", accept, rec.Code, rec.Body.String())
		}
	}
	good := NewSnapshotHandler(SnapshotOptions{DisableCompression: true, Resource: Resource{ServiceName: "svc", Attributes: []wire.Attribute{{Key: "service.name", Value: "svc"}, {Key: "team", Value: "a"}}}})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept", wire.ContentType)
	good.ServeHTTP(rec, req)
	p, err := wire.Decode(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("%d: %v", rec.Code, err)
	}
	seen := map[string]int{}
	for _, a := range p.Resource {
		seen[a.Key+"="+a.Value]++
		seen[a.Key]++
	}
	if seen["service.name"] != 1 || seen["team"] != 1 || seen["service.name=svc"] != 1 {
		t.Fatalf("resource %v; want service.name=svc and team once each", p.Resource)
	}
}
