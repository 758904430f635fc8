package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/zerostat/zerostat/debugstats"
	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

const (
	chromiumPath = "/usr/bin/chromium"
	// screenshotPath is the README's screenshot, relative to this module.
	screenshotPath = "../docs/debug-stats.png"
	// maxScreenshotBytes keeps the committed PNG small.
	maxScreenshotBytes = 300 << 10
	// refresh is the page's reload interval; the test waits for one reload.
	refresh = 3 * time.Second
)

// The instrumentation of the sample service, as a service declares it.
var (
	keyRoute  = tag.MustNewKey("http.route")
	keyMethod = tag.MustNewKey("http.method")
	keyStatus = tag.MustNewKey("http.status")
	keyClient = tag.MustNewKey("client")

	mLatency  = stats.Float64("e2e/latency", "Request latency", stats.UnitMilliseconds)
	mBytes    = stats.Int64("e2e/response_bytes", "Response body size", stats.UnitBytes)
	mInFlight = stats.Int64("e2e/in_flight", "Requests being served", stats.UnitDimensionless)

	views = []*view.View{
		{Name: "e2e/requests", Description: "Requests served, by route, method and status", Measure: mLatency,
			Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, keyMethod, keyStatus}},
		{Name: "e2e/latency", Description: "Request latency, by route and method", Measure: mLatency,
			Aggregation: view.Distribution(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000), TagKeys: []tag.Key{keyRoute, keyMethod}},
		{Name: "e2e/response_bytes", Description: "Bytes of response bodies, by route", Measure: mBytes,
			Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		{Name: "e2e/requests_by_client", Description: "Requests by client id, capped at 4 clients", Measure: mLatency,
			Aggregation: view.Count(), TagKeys: []tag.Key{keyClient}, CardinalityLimit: 4},
		{Name: "e2e/in_flight", Description: "Requests being served when the last one started", Measure: mInFlight,
			Aggregation: view.LastValue()},
	}
)

// service is a small instrumented HTTP service: each request records its
// simulated latency, its size and the requests in flight, tagged by route,
// method and status. Latencies are drawn from a seeded generator (log-normal
// around a per-route median) instead of being slept, so the test is fast.
type service struct {
	mu       sync.Mutex
	rng      *rand.Rand
	inFlight atomic.Int64
	served   atomic.Int64
}

var routes = map[string]struct {
	median float64 // ms
	size   int
}{
	"/users":  {median: 8, size: 512},
	"/orders": {median: 40, size: 2048},
	"/health": {median: 0.8, size: 2},
}

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	route, ok := routes[r.URL.Path]
	status := http.StatusOK
	s.mu.Lock()
	x := s.rng.NormFloat64()
	fail := s.rng.IntN(40) == 0
	s.mu.Unlock()
	switch {
	case !ok:
		status = http.StatusNotFound
		route.median, route.size = 0.3, 9
	case fail:
		status = http.StatusInternalServerError
	}
	latency := route.median * math.Exp(0.6*x)
	ctx, err := tag.New(r.Context(), tag.Upsert(keyRoute, routeName(r.URL.Path, ok)),
		tag.Upsert(keyMethod, r.Method), tag.Upsert(keyStatus, strconv.Itoa(status)),
		tag.Upsert(keyClient, r.Header.Get("X-Client")))
	if err == nil {
		stats.Record(ctx, mLatency.M(latency), mBytes.M(int64(route.size)), mInFlight.M(n))
	}
	s.served.Add(1)
	w.WriteHeader(status)
	_, _ = w.Write(make([]byte, route.size))
}

func routeName(path string, known bool) string {
	if known {
		return path
	}
	return "other"
}

// load sends n requests from 4 goroutines, bounded by ctx, as 6 clients
// (header X-Client), 2 more than e2e/requests_by_client keeps rows for.
func load(ctx context.Context, t *testing.T, c *http.Client, base string, n int) {
	t.Helper()
	paths := []struct{ method, path string }{
		{"GET", "/users"}, {"GET", "/users"}, {"GET", "/users"}, {"POST", "/users"},
		{"GET", "/orders"}, {"GET", "/orders"}, {"GET", "/health"}, {"GET", "/missing"},
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				p := paths[i%int64(len(paths))]
				req, _ := http.NewRequestWithContext(ctx, p.method, base+p.path, nil)
				req.Header.Set("X-Client", "client-"+strconv.Itoa(int(i%6)+1))
				resp, err := c.Do(req)
				if err != nil {
					errs <- err
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestDebugStatsInChromium serves debugstats beside an instrumented
// service, loads the page in a real headless Chromium, checks that every
// view and a histogram chart are rendered, that the page reloads itself
// with new values, and takes a screenshot.
func TestDebugStatsInChromium(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("ZEROSTAT_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("chromium is required (ZEROSTAT_REQUIRE_CHROMIUM=1) but %s is missing: run scripts/install-chromium.sh", chromiumPath)
		}
		t.Skip("SKIPPED: chromium not installed; run scripts/install-chromium.sh")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()

	if err := view.Register(views...); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(views...)

	// An exporter to an in-process receiver, as the demo has: the page
	// shows its health.
	var received atomic.Int64
	exp, err := exporter.New(exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
		if _, err := wire.Decode(p.Data); err != nil {
			return err
		}
		received.Add(1)
		return nil
	}), exporter.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}

	svc := &service{rng: rand.New(rand.NewPCG(1, 2))}
	mux := http.NewServeMux()
	mux.Handle("/", svc)
	mux.Handle("/debug/stats", debugstats.NewHandler(debugstats.Options{
		Title:         "zerostat e2e service",
		Refresh:       refresh,
		ExporterStats: []debugstats.NamedStats{{Name: "msgpack → in-process receiver", Stats: exp.Stats}},
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()

	sent := 400
	load(ctx, t, srv.Client(), srv.URL, sent)
	if err := exp.Export(ctx); err != nil {
		t.Fatal(err)
	}

	out := &syncBuffer{}
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromiumPath),
		// Exactly the flags of issue 7. chromedp adds the DevTools pipe
		// and the about:blank start page it needs; Debian's
		// /usr/bin/chromium wrapper adds the flags of /etc/chromium.d.
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.CombinedOutput(out),
	)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	defer func() {
		if t.Failed() {
			t.Logf("chromium output:\n%s", out.String())
		}
	}()

	pageURL := srv.URL + "/debug/stats"
	if err := chromedp.Do(bctx,
		chromedp.EmulateViewport(1200, 900),
		chromedp.Navigate(pageURL),
		chromedp.WaitVisible(chromedp.CSS("#summary")),
	); err != nil {
		t.Fatalf("loading %s: %v", pageURL, err)
	}

	// Every view has its section, in name order.
	got := evaluate[[]string](t, bctx, `Array.from(document.querySelectorAll("section.view")).map(s => s.dataset.view)`)
	var want []string
	for _, v := range views {
		want = append(want, v.Name)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("view sections %q; want %q", got, want)
	}

	// The distribution's rows are drawn as SVG bar charts, laid out with a
	// size: one chart per row (route × method), one bar per bucket.
	charts := evaluate[int](t, bctx, `document.querySelectorAll('section.view[data-agg="Distribution"] svg.hist').length`)
	bars := evaluate[int](t, bctx, `document.querySelectorAll('section.view[data-agg="Distribution"] svg.hist rect').length`)
	tallest := evaluate[float64](t, bctx, `Math.max(...Array.from(document.querySelectorAll('section.view[data-agg="Distribution"] svg.hist rect')).map(r => r.getBoundingClientRect().height))`)
	if charts < 4 || bars != charts*11 || tallest < 40 {
		t.Errorf("%d charts, %d bars, tallest %.1f px; want at least 4 charts of 11 bars, one at least 40 px high", charts, bars, tallest)
	}

	// The view over its cardinality limit: 4 rows and the overflow row.
	if rows := evaluate[[]string](t, bctx, `Array.from(document.querySelectorAll('section.view[data-view="e2e/requests_by_client"] tr.row')).map(r => r.className + " " + r.querySelector("td.tags").textContent)`); len(rows) != 5 || rows[4] != "row overflow otel.metric.overflow=true over the limit" {
		t.Errorf("rows of e2e/requests_by_client %q; want 4 and the overflow row", rows)
	}

	// The total of requests is what the load generator sent. requests
	// returns the page's stamp and that total, read at once (the page
	// reloads itself).
	requests := func() (stamp, total string) {
		v := evaluate[[]string](t, bctx, `[document.body.dataset.generated, document.querySelector('#summary tr[data-view="e2e/requests"] td.total').textContent]`)
		return v[0], v[1]
	}
	stamp := func() string { s, _ := requests(); return s }
	stamp0, before := requests()
	if before != strconv.Itoa(sent) {
		t.Errorf("requests total %s; want the %d sent", before, sent)
	}
	exports0 := evaluate[string](t, bctx, `document.querySelector('#exporters tr.exporter td:nth-child(4)').textContent`)

	// More load and an export, then wait for the page to reload itself.
	loaded := waitLoad(bctx, 4*refresh)
	load(ctx, t, srv.Client(), srv.URL, 120)
	sent += 120
	if err := exp.Export(ctx); err != nil {
		t.Fatal(err)
	}
	if err := loaded(); err != nil {
		t.Fatalf("the page did not reload itself within %v: %v", 4*refresh, err)
	}
	if err := chromedp.Do(bctx, chromedp.WaitVisible(chromedp.CSS("#summary"))); err != nil {
		t.Fatal(err)
	}
	// The reload may have come before the second load finished: wait for
	// the next one until the total is the final one (bounded).
	deadline := time.Now().Add(4 * refresh)
	for _, total := requests(); total != strconv.Itoa(sent) && time.Now().Before(deadline); _, total = requests() {
		if err := waitLoad(bctx, 2*refresh)(); err != nil {
			break
		}
	}
	stamp1, after := requests()
	if after == before || stamp1 == stamp0 || after != strconv.Itoa(sent) {
		t.Errorf("after a reload: requests %s (page %s); before %s (page %s); want the %d sent, on a new page", after, stamp1, before, stamp0, sent)
	}
	if n := svc.served.Load(); n != int64(sent) {
		t.Errorf("the service served %d requests; want the %d sent (the page must not request anything of it)", n, sent)
	}
	if n := received.Load(); n < 2 {
		t.Errorf("the receiver got %d payloads; want at least 2", n)
	}
	if exports1 := evaluate[string](t, bctx, `document.querySelector('#exporters tr.exporter td:nth-child(4)').textContent`); exports1 == exports0 {
		t.Errorf("exports still %s after an export", exports1)
	}

	// A full-page screenshot, taken between two reloads, with the
	// viewport as high as the page (so that it has no scroll bar).
	height := evaluate[int64](t, bctx, `document.documentElement.scrollHeight`)
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1200, height)); err != nil {
		t.Fatal(err)
	}
	var shot []byte
	for range 3 {
		s0 := stamp()
		shot, err = chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if stamp() == s0 {
			break
		}
	}
	checkScreenshot(t, shot, false) // the README's picture is the demo's (demo_test.go)
}

// checkScreenshot checks that shot is a PNG of the page, writes it to the
// test's directory, and, for the README's picture when
// ZEROSTAT_UPDATE_SCREENSHOT=1, to docs/debug-stats.png, reduced to 256
// colours.
func checkScreenshot(t *testing.T, shot []byte, readme bool) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() < 900 {
		t.Errorf("screenshot %dx%d; want 1200 wide, at least 900 high", b.Dx(), b.Dy())
	}
	dir := os.Getenv("ZEROSTAT_SCREENSHOT_DIR") // to look at it; default: the test's directory
	if dir == "" {
		dir = t.TempDir()
	}
	tmp := filepath.Join(dir, "debug-stats.png")
	if err := os.WriteFile(tmp, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s, %d bytes, %v", tmp, len(shot), img.Bounds().Size())
	if !readme || os.Getenv("ZEROSTAT_UPDATE_SCREENSHOT") != "1" {
		return
	}
	var small bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&small, palettize(img)); err != nil {
		t.Fatal(err)
	}
	if small.Len() > maxScreenshotBytes {
		t.Fatalf("screenshot is %d bytes; the committed one must stay under %d", small.Len(), maxScreenshotBytes)
	}
	if err := os.WriteFile(screenshotPath, small.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", screenshotPath, small.Len())
}

// palettize maps img to a palette of its 256 most frequent colours, each
// pixel to the nearest one, without dithering. A page is mostly flat
// colours with anti-aliased text, so this looks the same and makes the
// committed PNG about a third of the size (as pngquant would).
func palettize(img image.Image) *image.Paletted {
	b := img.Bounds()
	rgb := func(x, y int) color.RGBA {
		r, g, bl, _ := img.At(x, y).RGBA()
		return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 255}
	}
	counts := map[color.RGBA]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[rgb(x, y)]++
		}
	}
	cs := make([]color.RGBA, 0, len(counts))
	for c := range counts {
		cs = append(cs, c)
	}
	key := func(c color.RGBA) int { return int(c.R)<<16 | int(c.G)<<8 | int(c.B) }
	slices.SortFunc(cs, func(a, b color.RGBA) int { // most frequent first; ties by value
		if d := counts[b] - counts[a]; d != 0 {
			return d
		}
		return key(a) - key(b)
	})
	pal := make(color.Palette, min(256, len(cs)))
	for i := range pal {
		pal[i] = cs[i]
	}
	out := image.NewPaletted(b, pal)
	index := map[color.RGBA]uint8{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := rgb(x, y)
			i, ok := index[c]
			if !ok {
				i = uint8(pal.Index(c))
				index[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	return out
}

// evaluate runs a JavaScript expression in the page. The page reloads
// itself: an evaluation that meets a reload (its context destroyed, the
// element not there yet) is tried again, for at most 5 s.
func evaluate[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		actx, cancel := context.WithTimeout(ctx, time.Second)
		v, err := chromedp.Run(actx, chromedp.Evaluate[T](expr))
		cancel()
		if err == nil {
			return v
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("evaluating %s: %v", expr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitLoad subscribes to the page's next load event now and returns a
// function that waits for it, at most d.
func waitLoad(ctx context.Context, d time.Duration) func() error {
	ctx, cancel := context.WithTimeout(ctx, d)
	events := chromedp.Events(ctx, page.LoadEventFired)
	return func() error {
		defer cancel()
		for _, err := range events {
			return err
		}
		return fmt.Errorf("no load event: %w", ctx.Err())
	}
}

// syncBuffer keeps the browser's output, written from chromedp's
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
