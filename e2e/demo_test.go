package e2e

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDemoPageInChromium runs the README's main job, `zerostat demo`, as a
// separate process and loads its /debug/stats in Chromium: every demo view
// is there, the latency histograms are drawn, the numbers change after the
// page refreshes itself, and the demo then ends with matching totals. The
// README's screenshot is taken here.
func TestDemoPageInChromium(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("ZEROSTAT_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("chromium is required (ZEROSTAT_REQUIRE_CHROMIUM=1) but %s is missing: run scripts/install-chromium.sh", chromiumPath)
		}
		t.Skip("SKIPPED: chromium not installed; run scripts/install-chromium.sh")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	bin := filepath.Join(t.TempDir(), "zerostat")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/zerostat")
	build.Dir = ".." // the root module
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the demo: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var stdout, stderr syncBuffer
	demo := exec.CommandContext(ctx, bin, "demo", "-duration", "15s", "-period", "1s", "-listen", addr, "-format", "json")
	demo.Stdout, demo.Stderr = &stdout, &stderr
	if err := demo.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- demo.Wait() }()
	defer func() {
		_ = demo.Process.Kill()
		<-exited
	}()
	page := "http://" + addr + "/debug/stats"
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(page); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo did not serve %s: %s", page, stderr.String())
		}
	}

	out := &syncBuffer{}
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromiumPath),
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
	if err := chromedp.Do(bctx,
		chromedp.EmulateViewport(1200, 900),
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS("#summary")),
	); err != nil {
		t.Fatalf("loading %s: %v\nchromium: %s", page, err, out.String())
	}

	got := evaluate[[]string](t, bctx, `Array.from(document.querySelectorAll("section.view")).map(s => s.dataset.view)`)
	for _, want := range []string{"demo/in_flight", "demo/latency", "demo/requests", "demo/response_bytes"} {
		if !strings.Contains(strings.Join(got, " "), want) {
			t.Errorf("view sections %q lack %s", got, want)
		}
	}
	if charts := evaluate[int](t, bctx, `document.querySelectorAll('section.view[data-view="demo/latency"] svg.hist').length`); charts < 3 {
		t.Errorf("%d latency charts; want one per route (at least 3)", charts)
	}
	total := func() string {
		return evaluate[string](t, bctx, `document.querySelector('#summary tr[data-view="demo/requests"] td.total').textContent`)
	}
	before := total()
	// The demo's page refreshes itself every 5 s; the load goes on.
	if err := waitLoad(bctx, 15*time.Second)(); err != nil {
		t.Fatalf("the page did not reload itself: %v", err)
	}
	if err := chromedp.Do(bctx, chromedp.WaitVisible(chromedp.CSS("#summary"))); err != nil {
		t.Fatal(err)
	}
	after := total()
	if after == before {
		t.Errorf("requests still %s after a refresh", after)
	}
	height := evaluate[int64](t, bctx, `document.documentElement.scrollHeight`)
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1200, height)); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	checkScreenshot(t, shot, true)

	select {
	case err := <-exited:
		exited <- err // for the deferred Wait
		if err != nil {
			t.Fatalf("the demo failed: %v\n%s", err, stderr.String())
		}
	case <-ctx.Done():
		t.Fatal("the demo did not end")
	}
	// With -format json, standard output carries only the snapshots; the
	// progress lines and the summary go to standard error.
	if !strings.Contains(stderr.String(), "summary:") {
		t.Errorf("the demo printed no summary:\n%.2000s", stderr.String())
	}
}
