// Package e2e holds zerostat's end-to-end tests in a real browser. It is
// a module of its own (like benchmarks/), so that the browser driver,
// github.com/chromedp/chromedp, never enters the SDK's go.mod.
//
// The tests start Debian's Chromium (/usr/bin/chromium, installed by
// scripts/install-chromium.sh) headless and drive it over the DevTools
// protocol. Without Chromium they skip, saying so, unless
// ZEROSTAT_REQUIRE_CHROMIUM=1, when they fail. Only 127.0.0.1 is used.
//
//	cd e2e && go test ./...
//	cd e2e && ZEROSTAT_UPDATE_SCREENSHOT=1 go test ./...  # also rewrites docs/debug-stats.png
package e2e
