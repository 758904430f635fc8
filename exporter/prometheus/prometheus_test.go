package prometheus

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var (
	keyRoute  = tag.MustNewKey("route")
	keyStatus = tag.MustNewKey("http.status")
	keyLe     = tag.MustNewKey("le")
)

var fixtureSeq int

// register registers vs and unregisters them when t ends.
func register(t testing.TB, vs ...*view.View) {
	t.Helper()
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
}

func ctxWith(t testing.TB, muts ...tag.Mutator) context.Context {
	t.Helper()
	ctx, err := tag.New(context.Background(), muts...)
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

// linesWith returns the lines of out that mention prefix.
func linesWith(out []byte, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(string(out), "\n") {
		if strings.Contains(l, prefix) {
			b.WriteString(l)
		}
	}
	return b.String()
}

// fixture registers one view per aggregation under a fresh prefix and
// records a known workload.
func fixture(t testing.TB) string {
	fixtureSeq++
	p := fmt.Sprintf("fx%d", fixtureSeq)
	lat := stats.Float64(p+"/latency", "Latency of \"requests\"\nin ms \\ total", stats.UnitMilliseconds)
	size := stats.Int64(p+"/size", "Response size", stats.UnitBytes)
	temp := stats.Float64(p+"/temp", "", "Cel")
	register(t,
		&view.View{Name: p + "/requests", Measure: lat, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, keyStatus}},
		&view.View{Name: p + "/latency", Measure: lat, Aggregation: view.Distribution(0.5, 10, 250), TagKeys: []tag.Key{keyRoute, keyLe}},
		&view.View{Name: p + "/size", Measure: size, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/temp", Measure: temp, Aggregation: view.LastValue()},
	)
	a := ctxWith(t, tag.Upsert(keyRoute, "/a"), tag.Upsert(keyStatus, "200"), tag.Upsert(keyLe, "x"))
	b := ctxWith(t, tag.Upsert(keyRoute, `/b"\`), tag.Upsert(keyStatus, "500"))
	none := context.Background()
	for _, v := range []float64{0.25, 3, 3, 600} {
		stats.Record(a, lat.M(v), size.M(int64(v*4)))
	}
	stats.Record(b, lat.M(0.5), size.M(7))
	stats.Record(none, lat.M(math.Inf(1)), temp.M(21.5))
	return p
}

func TestExpositionText(t *testing.T) {
	p := fixture(t)
	h := NewHandler(Options{ConstLabels: map[string]string{"env": "prod", "z.z": `q"`}})
	got := linesWith(h.AppendFormat(nil, FormatText), p+"_")
	want := strings.ReplaceAll(`# HELP fx_latency_milliseconds Latency of "requests"\nin ms \\ total
# TYPE fx_latency_milliseconds histogram
fx_latency_milliseconds_bucket{env="prod",z_z="q\"",le="0.5"} 0
fx_latency_milliseconds_bucket{env="prod",z_z="q\"",le="10.0"} 0
fx_latency_milliseconds_bucket{env="prod",z_z="q\"",le="250.0"} 0
fx_latency_milliseconds_bucket{env="prod",z_z="q\"",le="+Inf"} 1
fx_latency_milliseconds_sum{env="prod",z_z="q\""} +Inf
fx_latency_milliseconds_count{env="prod",z_z="q\""} 1
fx_latency_milliseconds_bucket{env="prod",route="/b\"\\",z_z="q\"",le="0.5"} 0
fx_latency_milliseconds_bucket{env="prod",route="/b\"\\",z_z="q\"",le="10.0"} 1
fx_latency_milliseconds_bucket{env="prod",route="/b\"\\",z_z="q\"",le="250.0"} 1
fx_latency_milliseconds_bucket{env="prod",route="/b\"\\",z_z="q\"",le="+Inf"} 1
fx_latency_milliseconds_sum{env="prod",route="/b\"\\",z_z="q\""} 0.5
fx_latency_milliseconds_count{env="prod",route="/b\"\\",z_z="q\""} 1
fx_latency_milliseconds_bucket{env="prod",key_le="x",route="/a",z_z="q\"",le="0.5"} 1
fx_latency_milliseconds_bucket{env="prod",key_le="x",route="/a",z_z="q\"",le="10.0"} 3
fx_latency_milliseconds_bucket{env="prod",key_le="x",route="/a",z_z="q\"",le="250.0"} 3
fx_latency_milliseconds_bucket{env="prod",key_le="x",route="/a",z_z="q\"",le="+Inf"} 4
fx_latency_milliseconds_sum{env="prod",key_le="x",route="/a",z_z="q\""} 606.25
fx_latency_milliseconds_count{env="prod",key_le="x",route="/a",z_z="q\""} 4
# HELP fx_requests_total Count of fx/latency recordings: Latency of "requests"\nin ms \\ total
# TYPE fx_requests_total counter
fx_requests_total{env="prod",z_z="q\""} 1
fx_requests_total{env="prod",http_status="200",route="/a",z_z="q\""} 4
fx_requests_total{env="prod",http_status="500",route="/b\"\\",z_z="q\""} 1
# HELP fx_size_bytes_total Response size
# TYPE fx_size_bytes_total counter
fx_size_bytes_total{env="prod",route="/a",z_z="q\""} 2425
fx_size_bytes_total{env="prod",route="/b\"\\",z_z="q\""} 7
# TYPE fx_temp_celsius gauge
fx_temp_celsius{env="prod",z_z="q\""} 21.5
`, "fx_", p+"_")
	want = strings.ReplaceAll(want, "fx/", p+"/")
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestExpositionOpenMetrics(t *testing.T) {
	p := fixture(t)
	h := NewHandler(Options{Namespace: "ns"})
	out := h.AppendFormat(nil, FormatOpenMetrics)
	if !bytes.HasSuffix(out, []byte("\n# EOF\n")) {
		t.Errorf("does not end with # EOF: %q", out[max(0, len(out)-40):])
	}
	got := linesWith(out, "ns_"+p+"_")
	// Every counter and histogram series has a _created sample: its
	// start, in seconds, in the last minute; the view's, as OTLP and the
	// msgpack payload give it (delta.CumulativeStart), so one per family.
	var kept []string
	created := 0
	starts := map[string]string{}
	for _, l := range strings.SplitAfter(got, "\n") {
		name, val, _ := strings.Cut(strings.TrimSpace(l), " ")
		if !strings.Contains(name, "_created") {
			kept = append(kept, l)
			continue
		}
		created++
		if sec, err := strconv.ParseFloat(val, 64); err != nil || math.Abs(sec-float64(time.Now().Unix())) > 60 {
			t.Errorf("%s: %v, %v; want a start time in seconds", name, sec, err)
		}
		fam, _, _ := strings.Cut(name, "{")
		if prev, ok := starts[fam]; ok && prev != val {
			t.Errorf("%s: _created %s and %s in one family; want the view's start for each", fam, prev, val)
		}
		starts[fam] = val
	}
	if created != 3+3+2 {
		t.Errorf("%d _created samples; want 8 (3 histogram, 3 count, 2 sum series)", created)
	}
	got = strings.Join(kept, "")
	want := strings.ReplaceAll(`# HELP ns_fx_latency_milliseconds Latency of \"requests\"\nin ms \\ total
# TYPE ns_fx_latency_milliseconds histogram
# UNIT ns_fx_latency_milliseconds milliseconds
ns_fx_latency_milliseconds_bucket{le="0.5"} 0
ns_fx_latency_milliseconds_bucket{le="10.0"} 0
ns_fx_latency_milliseconds_bucket{le="250.0"} 0
ns_fx_latency_milliseconds_bucket{le="+Inf"} 1
ns_fx_latency_milliseconds_sum +Inf
ns_fx_latency_milliseconds_count 1
ns_fx_latency_milliseconds_bucket{route="/b\"\\",le="0.5"} 0
ns_fx_latency_milliseconds_bucket{route="/b\"\\",le="10.0"} 1
ns_fx_latency_milliseconds_bucket{route="/b\"\\",le="250.0"} 1
ns_fx_latency_milliseconds_bucket{route="/b\"\\",le="+Inf"} 1
ns_fx_latency_milliseconds_sum{route="/b\"\\"} 0.5
ns_fx_latency_milliseconds_count{route="/b\"\\"} 1
ns_fx_latency_milliseconds_bucket{key_le="x",route="/a",le="0.5"} 1
ns_fx_latency_milliseconds_bucket{key_le="x",route="/a",le="10.0"} 3
ns_fx_latency_milliseconds_bucket{key_le="x",route="/a",le="250.0"} 3
ns_fx_latency_milliseconds_bucket{key_le="x",route="/a",le="+Inf"} 4
ns_fx_latency_milliseconds_sum{key_le="x",route="/a"} 606.25
ns_fx_latency_milliseconds_count{key_le="x",route="/a"} 4
# HELP ns_fx_requests Count of fx/latency recordings: Latency of \"requests\"\nin ms \\ total
# TYPE ns_fx_requests counter
ns_fx_requests_total 1.0
ns_fx_requests_total{http_status="200",route="/a"} 4.0
ns_fx_requests_total{http_status="500",route="/b\"\\"} 1.0
# HELP ns_fx_size_bytes Response size
# TYPE ns_fx_size_bytes counter
# UNIT ns_fx_size_bytes bytes
ns_fx_size_bytes_total{route="/a"} 2425.0
ns_fx_size_bytes_total{route="/b\"\\"} 7.0
# TYPE ns_fx_temp_celsius gauge
# UNIT ns_fx_temp_celsius celsius
ns_fx_temp_celsius 21.5
`, "fx_", p+"_")
	want = strings.ReplaceAll(want, "fx/", p+"/")
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// Views come sorted by name and series by tag values, also when series
// are added after a first scrape; an unregistered view disappears.
func TestOrderAndNewSeries(t *testing.T) {
	fixtureSeq++
	p := fmt.Sprintf("ord%d", fixtureSeq)
	m := stats.Int64(p+"/m", "", "1")
	vb := &view.View{Name: p + "/b", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}}
	va := &view.View{Name: p + "/a", Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}}
	register(t, vb, va)
	h := NewHandler(Options{})
	for _, r := range []string{"/m", "/c", "/x"} {
		stats.Record(ctxWith(t, tag.Upsert(keyRoute, r)), m.M(1))
	}
	_ = h.AppendFormat(nil, FormatText)
	for _, r := range []string{"/a", "/z", "/n"} {
		stats.Record(ctxWith(t, tag.Upsert(keyRoute, r)), m.M(2))
	}
	got := linesWith(h.AppendFormat(nil, FormatText), p+"_")
	var want strings.Builder
	for _, v := range []struct{ name, val string }{{"a_total", "2"}, {"b_total", "1"}} {
		fmt.Fprintf(&want, "# TYPE %s_%s counter\n", p, v.name)
		for _, r := range []string{"/a", "/c", "/m", "/n", "/x", "/z"} {
			val := "1" // a count
			if v.name == "a_total" && (r == "/a" || r == "/z" || r == "/n") {
				val = "2"
			}
			fmt.Fprintf(&want, "%s_%s{route=%q} %s\n", p, v.name, r, val)
		}
	}
	if got != want.String() {
		t.Errorf("got:\n%s\nwant:\n%s", got, want.String())
	}
	view.Unregister(va)
	if got := linesWith(h.AppendFormat(nil, FormatText), p+"_a"); got != "" {
		t.Errorf("unregistered view still served:\n%s", got)
	}
	if len(h.fams) == 0 {
		t.Fatal("no families cached")
	}
	for v := range h.fams {
		if v.Name == p+"/a" {
			t.Error("unregistered view still cached")
		}
	}
}

func TestServeHTTPNegotiation(t *testing.T) {
	p := fixture(t)
	srv := httptest.NewServer(NewHandler(Options{}))
	defer srv.Close()
	forced := httptest.NewServer(NewHandler(Options{Format: FormatOpenMetrics}))
	defer forced.Close()
	cases := []struct {
		url, accept, encoding string
		wantType              string
		gz                    bool
	}{
		{srv.URL, "", "", ContentTypeText, false},
		{srv.URL, "*/*", "identity", ContentTypeText, false},
		{srv.URL, "application/json", "", ContentTypeText, false},
		{srv.URL, "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", "gzip", ContentTypeOpenMetrics, true},
		{srv.URL, "application/openmetrics-text; version=0.0.1", "gzip;q=0, deflate", ContentTypeOpenMetrics, false},
		{forced.URL, "text/plain", "", ContentTypeOpenMetrics, false},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodGet, c.url, nil)
		if c.accept != "" {
			req.Header.Set("Accept", c.accept)
		}
		// An explicit Accept-Encoding stops net/http from gunzipping.
		req.Header.Set("Accept-Encoding", c.encoding)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get("Content-Type"); got != c.wantType {
			t.Errorf("Accept %q: Content-Type %q; want %q", c.accept, got, c.wantType)
		}
		if got := resp.Header.Get("Content-Length"); got != fmt.Sprint(len(body)) {
			t.Errorf("Accept %q: Content-Length %s; body %d bytes", c.accept, got, len(body))
		}
		if gz := resp.Header.Get("Content-Encoding") == "gzip"; gz != c.gz {
			t.Errorf("Accept-Encoding %q: gzip %v; want %v", c.encoding, gz, c.gz)
		}
		if c.gz {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		om := c.wantType == ContentTypeOpenMetrics
		if hasEOF := bytes.HasSuffix(body, []byte("# EOF\n")); hasEOF != om {
			t.Errorf("Accept %q: # EOF %v; want %v", c.accept, hasEOF, om)
		}
		if !bytes.Contains(body, []byte(p+"_requests_total{")) {
			t.Errorf("Accept %q: fixture missing from the body", c.accept)
		}
	}
}

// registry10k registers 20 views (5 of each aggregation, 3 tag keys) of
// 500 series each: 10,000 series.
func registry10k(t testing.TB) {
	fixtureSeq++
	p := fmt.Sprintf("big%d", fixtureSeq)
	keys := []tag.Key{tag.MustNewKey("method"), tag.MustNewKey("route"), tag.MustNewKey("host")}
	m := stats.Float64(p+"/m", "A measure", stats.UnitMilliseconds)
	var vs []*view.View
	aggs := []*view.Aggregation{view.Count(), view.Sum(), view.LastValue(), view.Distribution(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)}
	for i := range 20 {
		vs = append(vs, &view.View{Name: fmt.Sprintf("%s/v%02d", p, i), Measure: m, Aggregation: aggs[i%4], TagKeys: keys})
	}
	register(t, vs...)
	for r := range 500 {
		ctx := ctxWith(t, tag.Upsert(keys[0], []string{"GET", "POST", "PUT", "DELETE"}[r%4]),
			tag.Upsert(keys[1], fmt.Sprintf("/api/v1/items/%d", r)), tag.Upsert(keys[2], fmt.Sprintf("host-%d", r%7)))
		stats.Record(ctx, m.M(float64(r%300)+0.5))
	}
}

func TestWriteFormatAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	registry10k(t)
	h := NewHandler(Options{ConstLabels: map[string]string{"env": "test"}})
	for _, f := range []Format{FormatText, FormatOpenMetrics} {
		var n int
		allocs := testing.AllocsPerRun(20, func() {
			n, _ = h.WriteFormat(io.Discard, f)
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocs per scrape; want 0", f, allocs)
		}
		if n < 10000*20 {
			t.Errorf("%v: wrote only %d bytes", f, n)
		}
	}
}

func TestHandlerConcurrentSafe(t *testing.T) {
	p := fixture(t)
	h := NewHandler(Options{})
	m := stats.Int64(p+"/conc", "", "")
	register(t, &view.View{Name: p + "/conc", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}})
	start := make(chan struct{})
	var wg sync.WaitGroup
	const recorders, records = 4, 2000
	for g := range recorders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range records {
				stats.Record(ctxWith(t, tag.Upsert(keyRoute, fmt.Sprintf("/r%d", (g*records+i)%50))), m.M(1))
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range 20 {
				for _, f := range []Format{FormatText, FormatOpenMetrics} {
					_, _ = h.WriteFormat(io.Discard, f)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	var total int
	for _, l := range strings.Split(linesWith(h.AppendFormat(nil, FormatText), p+"_conc_total{"), "\n") {
		if l == "" {
			continue
		}
		var n int
		fmt.Sscan(l[strings.LastIndexByte(l, ' ')+1:], &n)
		total += n
	}
	if total != recorders*records {
		t.Errorf("got total %d; want %d", total, recorders*records)
	}
}

// A view past its cardinality limit exposes its overflow series, labelled
// otel_metric_overflow="true" (and the constant labels) instead of tags.
func TestOverflowSeries(t *testing.T) {
	fixtureSeq++
	p := fmt.Sprintf("ovf%d", fixtureSeq)
	m := stats.Int64(p+"/m", "", "By")
	register(t,
		&view.View{Name: p + "/count", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 2},
		&view.View{Name: p + "/dist", Measure: m, Aggregation: view.Distribution(10), TagKeys: []tag.Key{keyRoute}, CardinalityLimit: 1},
	)
	for i, r := range []string{"/a", "/b", "/c", "/d", "/a"} {
		stats.Record(ctxWith(t, tag.Upsert(keyRoute, r)), m.M(int64(i*5)))
	}
	got := linesWith(NewHandler(Options{ConstLabels: map[string]string{"zone": "z"}}).AppendFormat(nil, FormatText), p+"_")
	want := strings.ReplaceAll(`# TYPE P_count_total counter
P_count_total{route="/a",zone="z"} 2
P_count_total{route="/b",zone="z"} 1
P_count_total{otel_metric_overflow="true",zone="z"} 2
# TYPE P_dist_bytes histogram
P_dist_bytes_bucket{route="/a",zone="z",le="10.0"} 1
P_dist_bytes_bucket{route="/a",zone="z",le="+Inf"} 2
P_dist_bytes_sum{route="/a",zone="z"} 20
P_dist_bytes_count{route="/a",zone="z"} 2
P_dist_bytes_bucket{otel_metric_overflow="true",zone="z",le="10.0"} 1
P_dist_bytes_bucket{otel_metric_overflow="true",zone="z",le="+Inf"} 3
P_dist_bytes_sum{otel_metric_overflow="true",zone="z"} 30
P_dist_bytes_count{otel_metric_overflow="true",zone="z"} 3
`, "P_", p+"_")
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestScrapeAfterEviction: a series freed after being idle (delta
// exporters' EvictIdleAfter) leaves the exposition, and one created in its
// place appears, although the number of series did not change.
func TestScrapeAfterEviction(t *testing.T) {
	fixtureSeq++
	p := fmt.Sprintf("evict%d", fixtureSeq)
	m := stats.Int64(p+"/m", "", "1")
	v := &view.View{Name: p + "/c", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}}
	register(t, v)
	var agg *core.Aggregator
	for _, cv := range core.Views() {
		if cv.Name == v.Name {
			agg = cv.Agg
		}
	}
	h := NewHandler(Options{})
	stats.Record(ctxWith(t, tag.Upsert(keyRoute, "/old")), m.M(1))
	if got := linesWith(h.AppendFormat(nil, FormatText), p+"_c_total{"); got != p+"_c_total{route=\"/old\"} 1\n" {
		t.Fatalf("before eviction:\n%s", got)
	}
	tr := delta.NewTracker(1) // a delta reader evicting after one idle read
	var dv delta.Values
	for range 3 { // reads /old, seals it, reads it sealed and frees it
		tr.Begin()
		st := tr.View(agg)
		for _, s := range agg.AppendSeries(nil) {
			delta.Read(agg.Kind(), s, st, nil, &dv)
		}
		st.Done()
		tr.End()
	}
	stats.Record(ctxWith(t, tag.Upsert(keyRoute, "/new")), m.M(1))
	if got := linesWith(h.AppendFormat(nil, FormatText), p+"_c_total{"); got != p+"_c_total{route=\"/new\"} 1\n" {
		t.Errorf("after /old was freed and /new created:\n%s", got)
	}
}
