package debugstats

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// registerSnapshotViews registers a view of each aggregation, one of them
// over its cardinality limit, and records into them.
func registerSnapshotViews(t *testing.T) {
	t.Helper()
	route := tag.MustNewKey("route")
	m := stats.Float64("dssnap/m", "latency", stats.UnitMilliseconds)
	vs := []*view.View{
		{Name: "dssnap/count", Description: "requests", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{route}, CardinalityLimit: 2},
		{Name: "dssnap/dist", Measure: m, Aggregation: view.Distribution(1, 10), TagKeys: []tag.Key{route}},
		{Name: "dssnap/sum", Measure: m, Aggregation: view.Sum()},
		{Name: "dssnap/last", Measure: m, Aggregation: view.LastValue(), TagKeys: []tag.Key{route}},
	}
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
	for i, r := range []string{"/c", "/a", "/b", "/a", "/d"} {
		ctx, _ := tag.New(context.Background(), tag.Upsert(route, r))
		stats.Record(ctx, m.M(float64(i)*3.5))
	}
}

// fullSnapshot is exporter.NewSnapshotHandler's msgpack snapshot, decoded.
func fullSnapshot(t *testing.T) *wire.Payload {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept", wire.ContentType)
	exporter.NewSnapshotHandler(exporter.SnapshotOptions{DisableCompression: true}).ServeHTTP(rec, req)
	p, err := wire.Decode(rec.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func serve(t *testing.T, h http.Handler, target string) (*http.Response, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	resp := rec.Result()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func TestSnapshotOneView(t *testing.T) {
	registerSnapshotViews(t)
	full := fullSnapshot(t)
	want := full.Views[slices.IndexFunc(full.Views, func(v wire.View) bool { return v.Name == "dssnap/count" })]
	slices.SortFunc(want.Rows, func(a, b wire.Row) int { return slices.Compare(a.Values, b.Values) })

	for _, h := range []http.Handler{NewSnapshotHandler(Options{}), NewHandler(Options{})} {
		// msgpack: a payload with the one view, rows sorted.
		resp, body := serve(t, h, "/debug/stats?view=dssnap%2Fcount&format=msgpack")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != wire.ContentType {
			t.Fatalf("msgpack: %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename="dssnap_count.msgpack"` {
			t.Errorf("Content-Disposition %q", cd)
		}
		p, err := wire.Decode(body)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Views) != 1 || !reflect.DeepEqual(p.Views[0], want) {
			t.Errorf("msgpack view:\n got %+v\nwant %+v", p.Views, want)
		}
		// The overflow row: 2 recordings (/b, /d) past the limit of 2 rows.
		if o := p.Views[0].Overflow; o == nil || o.Count != 2 || len(p.Views[0].Rows) != 2 {
			t.Errorf("overflow row %+v, %d rows; want count 2, 2 rows", o, len(p.Views[0].Rows))
		}

		// JSON: the same view, through wire's MarshalJSON.
		resp, body = serve(t, h, "/debug/stats?view=dssnap%2Fcount&format=json")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("json: %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		var js struct {
			Views []struct {
				Name, Description, Aggregation string
				Rows                           []struct {
					Tags  map[string]string
					Count uint64
				}
				Overflow *struct {
					Tags  map[string]string
					Count uint64
				}
			}
		}
		if err := json.Unmarshal(body, &js); err != nil {
			t.Fatalf("json: %v\n%s", err, body)
		}
		if len(js.Views) != 1 {
			t.Fatalf("%d views; want 1", len(js.Views))
		}
		v := js.Views[0]
		if v.Name != "dssnap/count" || v.Description != "requests" || v.Aggregation != "count" ||
			len(v.Rows) != 2 || v.Rows[0].Tags["route"] != "/a" || v.Rows[0].Count != 2 || v.Rows[1].Tags["route"] != "/c" ||
			v.Overflow == nil || v.Overflow.Count != 2 || v.Overflow.Tags["otel.metric.overflow"] != "true" {
			t.Errorf("json view %+v", v)
		}
	}
}

func TestSnapshotAllViewsAndErrors(t *testing.T) {
	registerSnapshotViews(t)
	h := NewSnapshotHandler(Options{Resource: exporter.Resource{ServiceName: "svc"}})
	resp, body := serve(t, h, "/")
	if resp.StatusCode != 200 {
		t.Fatalf("%d: %s", resp.StatusCode, body)
	}
	var js struct {
		Resource map[string]string
		Views    []struct{ Name string }
	}
	if err := json.Unmarshal(body, &js); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range js.Views {
		names = append(names, v.Name)
	}
	for _, n := range []string{"dssnap/count", "dssnap/dist", "dssnap/last", "dssnap/sum"} {
		if !slices.Contains(names, n) {
			t.Errorf("views %v lack %s", names, n)
		}
	}
	if js.Resource["service.name"] != "svc" {
		t.Errorf("resource %v; want service.name svc", js.Resource)
	}
	resp, body = serve(t, h, "/?format=msgpack")
	if p, err := wire.Decode(body); resp.StatusCode != 200 || err != nil || len(p.Views) != len(names) {
		t.Errorf("all views as msgpack: %d, %v", resp.StatusCode, err)
	}

	for _, c := range []struct {
		target string
		status int
	}{
		{"/?view=nope&format=json", http.StatusNotFound},
		{"/?view=&format=json", http.StatusNotFound},
		{"/?view=dssnap%2Fsum&format=xml", http.StatusBadRequest},
	} {
		if resp, body := serve(t, h, c.target); resp.StatusCode != c.status {
			t.Errorf("%s: %d; want %d: %s", c.target, resp.StatusCode, c.status, body)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodDelete, "/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: %d; want 405", rec.Code)
	}
}
