package accept

import (
	"testing"

	"github.com/zerostat/zerostat/internal/race"
)

var promOffers = []Offer{
	{Type: "text/plain", Version: "0.0.4"},
	{Type: "application/openmetrics-text", Version: "1.0.0"},
	{Type: "application/openmetrics-text", Version: "0.0.1"},
}

func TestNegotiate(t *testing.T) {
	cases := []struct {
		header string
		want   int
	}{
		{"", 0},
		{"*/*", 0},
		{"text/plain", 0},
		{"text/*", 0},
		{"text/plain;version=0.0.4", 0},
		{"text/plain;version=9.9.9", -1},
		{"application/json", -1},
		// Prometheus 2.42's scrape header.
		{"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", 1},
		{"application/openmetrics-text;version=0.0.1,text/plain;q=0.5", 2},
		{"application/openmetrics-text", 1},
		{"application/openmetrics-text; version=\"1.0.0\"; charset=utf-8", 1},
		{"APPLICATION/OpenMetrics-Text;Version=1.0.0", 1},
		{"text/plain;q=0, */*", 1},
		{"text/plain;q=0.2, application/openmetrics-text;q=0.3", 1},
		{"*/*;q=0", -1},
		{"text/plain;q=abc", 0},
		{",,;", -1},
	}
	for _, c := range cases {
		if got := Negotiate(c.header, promOffers); got != c.want {
			t.Errorf("Negotiate(%q) = %d; want %d", c.header, got, c.want)
		}
	}
	if got := Negotiate("", nil); got != -1 {
		t.Errorf("no offers: got %d; want -1", got)
	}
}

func TestNegotiateAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	h := "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
	if n := testing.AllocsPerRun(100, func() { Negotiate(h, promOffers) }); n != 0 {
		t.Errorf("got %v allocs; want 0", n)
	}
}

func FuzzNegotiate(f *testing.F) {
	f.Add("application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1")
	f.Fuzz(func(t *testing.T, h string) {
		if i := Negotiate(h, promOffers); i < -1 || i >= len(promOffers) {
			t.Fatalf("index %d out of range", i)
		}
	})
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"": false, "gzip": true, "deflate, gzip;q=1.0, *;q=0.5": true, "gzip;q=0": false,
		"GZIP": true, "*": true, "br": false, "gzip; q=0.001": true, "gzip;q=0, *": false, "*;q=0": false,
	} {
		if got := AcceptsGzip(h); got != want {
			t.Errorf("AcceptsGzip(%q) = %v; want %v", h, got, want)
		}
	}
}
