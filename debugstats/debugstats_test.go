package debugstats_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/debugstats"
	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var (
	keyRoute  = tag.MustNewKey("route")
	keyMethod = tag.MustNewKey("method")
	keyStatus = tag.MustNewKey("status")
)

// fixture registers a view of each aggregation under prefix and records a
// small workload; it unregisters them when the test ends.
type fixture struct {
	latency  *stats.Float64Measure
	bytes    *stats.Int64Measure
	inflight *stats.Int64Measure
	views    []*view.View
}

func newFixture(t *testing.T, prefix string) *fixture {
	t.Helper()
	f := &fixture{
		latency:  stats.Float64(prefix+"/latency_m", "Request latency", stats.UnitMilliseconds),
		bytes:    stats.Int64(prefix+"/bytes_m", "Response bytes", stats.UnitBytes),
		inflight: stats.Int64(prefix+"/inflight_m", "Requests in flight", stats.UnitDimensionless),
	}
	f.views = []*view.View{
		{Name: prefix + "/requests", Description: "Requests served", Measure: f.latency, Aggregation: view.Count(),
			TagKeys: []tag.Key{keyRoute, keyMethod, keyStatus}},
		{Name: prefix + "/latency", Measure: f.latency, Aggregation: view.Distribution(10, 20, 30),
			TagKeys: []tag.Key{keyRoute}},
		{Name: prefix + "/bytes", Measure: f.bytes, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		{Name: prefix + "/inflight", Measure: f.inflight, Aggregation: view.LastValue()},
	}
	if err := view.Register(f.views...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(f.views...) })
	return f
}

func tagged(t testing.TB, route, method, status string) context.Context {
	t.Helper()
	ctx, err := tag.New(context.Background(), tag.Upsert(keyRoute, route), tag.Upsert(keyMethod, method), tag.Upsert(keyStatus, status))
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

// record records, on route /users: latencies 5, 15×8 and 25 (p50 15, p90
// 20, p99 24.5 by the bucket estimate), 300 bytes, in flight 3.
func (f *fixture) record(t *testing.T) {
	ctx := tagged(t, "/users", "GET", "200")
	stats.Record(ctx, f.latency.M(5), f.latency.M(25))
	for range 8 {
		stats.Record(ctx, f.latency.M(15))
	}
	stats.Record(ctx, f.bytes.M(100), f.bytes.M(200))
	stats.Record(context.Background(), f.inflight.M(3))
}

func get(t *testing.T, h http.Handler, target string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	resp := rec.Result()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func TestPageStructure(t *testing.T) {
	f := newFixture(t, "dstest_struct")
	f.record(t)
	resp, page := get(t, debugstats.NewHandler(debugstats.Options{}), "/debug/stats")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d; want 200: %s", resp.StatusCode, page)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q; want text/html; charset=utf-8", ct)
	}
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
		t.Errorf("page is not a whole HTML document:\n%.300s", page)
	}
	if !strings.Contains(page, `<meta http-equiv="refresh" content="5">`) {
		t.Error("no 5 s refresh")
	}
	// Every view has a section, in name order.
	last := -1
	for _, name := range []string{"dstest_struct/bytes", "dstest_struct/inflight", "dstest_struct/latency", "dstest_struct/requests"} {
		i := strings.Index(page, `<section id="view-`)
		j := strings.Index(page, `data-view="`+name+`"`)
		if i < 0 || j < 0 {
			t.Fatalf("no section for %s", name)
		}
		k := strings.Index(page, `class="card view" data-view="`+name+`"`)
		if k <= last {
			t.Errorf("section %s at %d, not after the previous one (%d)", name, k, last)
		}
		last = k
	}
	for _, want := range []string{
		"Requests served", // description
		`<span class="badge agg">Distribution</span>`,
		`<span class="unit">unit ms</span>`,
		`<span class="unit">unit 1 (counts values in ms)</span>`,     // a count's values have no unit
		`<span class="unit">unit bytes</span>`,                       // UCUM "By"
		`<code>method</code> <code>route</code> <code>status</code>`, // tag keys, sorted
		`<span class="k">route</span>=<span class="v">/users</span>`,
		`<td class="num value">300</td>`, // the sum
		`<td class="num value">3</td>`,   // the last value
		`<td class="num count">10</td>`,  // the distribution's count
		`<td class="num p50">15</td>`, `<td class="num p90">20</td>`, `<td class="num p99">24.5</td>`,
		`<td class="num total">10</td>`,                    // requests in the summary
		`?view=dstest_struct%2Flatency&amp;format=json`,    // snapshot links
		`?view=dstest_struct%2Flatency&amp;format=msgpack`, //
		`1 / 10000`,                                        // cardinality against the default limit
		`<title>[10, 20): 8 (80.0%)</title>`,               // a bar's tooltip
		`<line class="mark p50"`, `<line class="mark p99"`, // percentile marks
		`<text x="22" y="70" dy="-3">10</text>`,                          // the first bound
		`<svg class="hist" width="180" height="70" viewBox="0 0 180 70"`, //
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// One chart of 4 bars (3 bounds) for the one row of the distribution.
	sec := section(t, page, "dstest_struct/latency")
	if n := strings.Count(sec, `<svg class="hist"`); n != 1 {
		t.Errorf("%d charts in the distribution's section; want 1", n)
	}
	if n := strings.Count(sec, `<rect class="bar`); n != 4 {
		t.Errorf("%d bars; want 4", n)
	}
	if n := strings.Count(section(t, page, "dstest_struct/requests"), `<svg class="hist"`); n != 0 {
		t.Errorf("%d charts in a count view; want 0", n)
	}
}

// section returns the HTML of the named view's section.
func section(t *testing.T, page, name string) string {
	t.Helper()
	i := strings.Index(page, `class="card view" data-view="`+name+`"`)
	if i < 0 {
		t.Fatalf("no section for %s", name)
	}
	j := strings.Index(page[i:], "</section>")
	return page[i : i+j]
}

func TestPageEscapesTagValues(t *testing.T) {
	f := newFixture(t, "dstest_escape")
	evil := `<script>alert("x")</script>`
	ctx := tagged(t, evil, `" onmouseover="alert(1)`, "200")
	stats.Record(ctx, f.latency.M(12), f.bytes.M(1))
	failing, err := exporter.New(exporter.FuncSink(func(context.Context, exporter.Payload) error {
		return errors.New(`<img src=x onerror="alert(2)">`)
	}), exporter.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	_ = failing.Export(context.Background())

	_, page := get(t, debugstats.NewHandler(debugstats.Options{Exporters: []*exporter.Exporter{failing}}), "/")
	for _, bad := range []string{"<script>alert", "<img src=x", `" onmouseover="alert(1)`} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %s unescaped", bad)
		}
	}
	for _, want := range []string{
		`&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`,
		`&#34; onmouseover=&#34;alert(1)`,
		`&lt;img src=x onerror=&#34;alert(2)&#34;&gt;`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks the escaped %s", want)
		}
	}
	if n := strings.Count(page, "<script"); n != 0 {
		t.Errorf("%d <script elements; want none", n)
	}
}

func TestPageOverflowRowAndLimit(t *testing.T) {
	m := stats.Int64("dstest_overflow/m", "", stats.UnitDimensionless)
	v := &view.View{Name: "dstest_overflow/requests", Measure: m, Aggregation: view.Count(),
		TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 2}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	for _, route := range []string{"/a", "/b", "/c", "/d", "/e", "/c"} {
		ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, route))
		stats.Record(ctx, m.M(1))
	}
	_, page := get(t, debugstats.NewHandler(debugstats.Options{}), "/")
	sec := section(t, page, v.Name)
	for _, want := range []string{
		`<span class="cardinality full"><span class="n">2 / 2</span>`,
		`<span class="badge warn">4 recordings overflowed</span>`,
		`<tr class="row overflow"><td class="tags"><span class="tag"><span class="k">otel.metric.overflow</span>=<span class="v">true</span></span> <span class="badge warn">over the limit</span></td><td class="num value">4</td>`,
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("section lacks %s\n%s", want, sec)
		}
	}
	// The summary: total 6 (the overflow row included), 4 overflowed.
	if !regexp.MustCompile(`data-view="dstest_overflow/requests">.*<td class="num total">6</td>.*<td class="num warn">4</td>`).MatchString(page) {
		t.Error("summary row lacks total 6 and 4 overflowed")
	}
}

func TestPageMaxRowsKeepsOverflowRow(t *testing.T) {
	m := stats.Int64("dstest_maxrows/m", "", stats.UnitDimensionless)
	v := &view.View{Name: "dstest_maxrows/requests", Measure: m, Aggregation: view.Count(),
		TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 5}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	for _, route := range []string{"/a", "/b", "/c", "/d", "/e", "/f", "/g"} {
		ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, route))
		stats.Record(ctx, m.M(1))
	}
	_, page := get(t, debugstats.NewHandler(debugstats.Options{MaxRows: 2}), "/")
	sec := section(t, page, v.Name)
	if n := strings.Count(sec, `<tr class="row`); n != 3 {
		t.Errorf("%d rows drawn; want 2 and the overflow row", n)
	}
	for _, want := range []string{`=<span class="v">/a</span>`, `=<span class="v">/b</span>`, `<tr class="row overflow">`, `3 more rows are not shown`} {
		if !strings.Contains(sec, want) {
			t.Errorf("section lacks %s", want)
		}
	}
	if strings.Contains(sec, `=<span class="v">/c</span>`) {
		t.Error("row /c drawn past MaxRows")
	}
}

func TestPageExporterHealth(t *testing.T) {
	newExp := func(fail bool) *exporter.Exporter {
		e, err := exporter.New(exporter.FuncSink(func(context.Context, exporter.Payload) error {
			if fail {
				return errors.New("backend down")
			}
			return nil
		}), exporter.Options{Logger: slog.New(slog.DiscardHandler), Retry: exporter.Retry{InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Export(ctx)
		return e
	}
	good, bad := newExp(false), newExp(true)
	opts := debugstats.Options{
		Exporters:     []*exporter.Exporter{good, nil, bad},
		ExporterStats: []debugstats.NamedStats{{Name: "remote <b>", Stats: func() exporter.Stats { return exporter.Stats{} }}},
	}
	_, page := get(t, debugstats.NewHandler(opts), "/")
	rows := regexp.MustCompile(`<tr class="exporter" data-status="(\w+)"><td class="name">([^<]*)</td>`).FindAllStringSubmatch(page, -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[2]+":"+r[1])
	}
	want := []string{"exporter 1:ok", "exporter 3:failing", "remote &lt;b&gt;:idle"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("exporters %v; want %v", got, want)
	}
	if !strings.Contains(page, "backend down") {
		t.Error("page lacks the last error")
	}
	if !strings.Contains(page, " ago</td>") {
		t.Error("page lacks the last success")
	}
}

func TestPageRefreshOption(t *testing.T) {
	for _, c := range []struct {
		refresh time.Duration
		want    string // "" for no refresh
	}{
		{0, `content="5"`},
		{1500 * time.Millisecond, `content="2"`},
		{time.Minute, `content="60"`},
		{-1, ""},
	} {
		_, page := get(t, debugstats.NewHandler(debugstats.Options{Refresh: c.refresh}), "/")
		has := strings.Contains(page, `http-equiv="refresh"`)
		if c.want == "" && has {
			t.Errorf("Refresh %v: page refreshes; want not", c.refresh)
		}
		if c.want != "" && !strings.Contains(page, `<meta http-equiv="refresh" `+c.want+`>`) {
			t.Errorf("Refresh %v: no meta refresh %s", c.refresh, c.want)
		}
	}
}

func TestPageSnapshotURLOption(t *testing.T) {
	f := newFixture(t, "dstest_url")
	f.record(t)
	for _, c := range []struct{ url, want string }{
		{"/debug/stats/snapshot", `href="/debug/stats/snapshot?view=dstest_url%2Fbytes&amp;format=msgpack"`},
		{"/snap?token=a", `href="/snap?token=a&amp;view=dstest_url%2Fbytes&amp;format=json"`},
		{"javascript:alert(1)", `href="#ZgotmplZ"`},
	} {
		_, page := get(t, debugstats.NewHandler(debugstats.Options{SnapshotURL: c.url}), "/")
		if !strings.Contains(page, c.want) {
			t.Errorf("SnapshotURL %q: page lacks %s", c.url, c.want)
		}
	}
}

func TestPageMethodsAndHead(t *testing.T) {
	h := debugstats.NewHandler(debugstats.Options{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q; want 405, GET, HEAD", rec.Code, rec.Header().Get("Allow"))
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/", nil))
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") == "" {
		t.Errorf("HEAD: %d, %d body bytes, Content-Length %q; want 200, none, set", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Length"))
	}
}

func TestPageGzip(t *testing.T) {
	srv := httptest.NewServer(debugstats.NewHandler(debugstats.Options{}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL) // the transport asks for gzip and decompresses
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !resp.Uncompressed || !strings.Contains(string(body), "</html>") {
		t.Errorf("uncompressed %v, page %.100q; want a gzip-compressed page", resp.Uncompressed, body)
	}
}

// TestHandlerConcurrentSafe renders pages and snapshots while recorders
// add rows (run with -race).
func TestHandlerConcurrentSafe(t *testing.T) {
	f := newFixture(t, "dstest_conc")
	h := debugstats.NewHandler(debugstats.Options{MaxRows: 5})
	const recorders, readers, n = 2, 2, 100
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for r := range recorders {
		wg.Go(func() {
			<-gate
			for i := range n {
				ctx := tagged(t, "/r"+string(rune('a'+r))+string(rune('a'+i%20)), "GET", "200")
				stats.Record(ctx, f.latency.M(float64(i)), f.bytes.M(1), f.inflight.M(int64(i)))
			}
		})
	}
	errs := make(chan string, readers*n)
	for range readers {
		wg.Go(func() {
			<-gate
			for i := range n / 10 {
				target := "/"
				if i%2 == 1 {
					target = "/?view=dstest_conc%2Flatency&format=json"
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
				if rec.Code != http.StatusOK {
					errs <- rec.Body.String()
				}
			}
		})
	}
	close(gate)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	// After the recorders: the exact total.
	_, page := get(t, h, "/")
	if !regexp.MustCompile(`data-view="dstest_conc/requests">.*<td class="num total">200</td>`).MatchString(page) {
		t.Error("summary lacks the total of 200 requests")
	}
}
