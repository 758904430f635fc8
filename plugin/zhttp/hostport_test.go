package zhttp

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// otelSplitHostPort is otelhttp v0.72.0's semconv.SplitHostPort
// (internal/semconv/util.go), copied: the oracle of splitHostPort, whose
// port parse avoids strconv's error allocation.
func otelSplitHostPort(hostport string) (host string, port int) {
	port = -1
	if strings.HasPrefix(hostport, "[") {
		addrEnd := strings.LastIndexByte(hostport, ']')
		if addrEnd < 0 {
			return host, port
		}
		if i := strings.LastIndexByte(hostport[addrEnd:], ':'); i < 0 {
			host = hostport[1:addrEnd]
			return host, port
		}
	} else if !strings.Contains(hostport, ":") {
		host = hostport
		return host, port
	}
	host, pStr, err := net.SplitHostPort(hostport)
	if err != nil {
		return host, port
	}
	p, err := strconv.ParseUint(pStr, 10, 16)
	if err != nil {
		return host, port
	}
	return host, int(p)
}

func FuzzSplitHostPort(f *testing.F) {
	for _, s := range []string{"", "example.com", "example.com:80", "example.com:", ":8080", "[::1]", "[::1]:443",
		"[fe80::1%en0]:8080", "[::1", "a:b:c", "example.com:65535", "example.com:65536", "example.com:000000080",
		"example.com:+80", "example.com:8_0", "example.com:99999999999999999999", "[::1]x:80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, hostport string) {
		host, ps, port := splitHostPort(hostport)
		wantHost, wantPort := otelSplitHostPort(hostport)
		if host != wantHost || port != wantPort {
			t.Fatalf("splitHostPort(%q) = %q, %d; otelhttp %q, %d", hostport, host, port, wantHost, wantPort)
		}
		if port >= 0 {
			if got := portText(ps, port); got != strconv.Itoa(port) {
				t.Fatalf("portText(%q, %d) = %q; want %q", ps, port, got, strconv.Itoa(port))
			}
		}
	})
}

// TestNetProtocol: the name and version of Request.Proto as otelhttp's
// semconv.netProtocol gives them.
func TestNetProtocol(t *testing.T) {
	for _, c := range []struct{ proto, name, version string }{
		{"HTTP/1.1", "http", "1.1"}, {"HTTP/2.0", "http", "2.0"}, {"HTTP/1.0", "http", "1.0"},
		{"QUIC/1", "quic", "1"}, {"SPDY/3", "spdy", "3"}, {"Foo/9", "foo", "9"}, {"", "", ""}, {"HTTP", "http", ""},
	} {
		if name, version := netProtocol(c.proto); name != c.name || version != c.version {
			t.Errorf("netProtocol(%q) = %q, %q; want %q, %q", c.proto, name, version, c.name, c.version)
		}
	}
}
