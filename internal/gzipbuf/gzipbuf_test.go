package gzipbuf

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/internal/race"
)

func TestRoundTripAndReuse(t *testing.T) {
	c, err := New(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"", "one payload", strings.Repeat("zerostat ", 10000)} {
		zr, err := gzip.NewReader(bytes.NewReader(c.Compress([]byte(in))))
		if err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(zr)
		if err != nil || string(out) != in {
			t.Fatalf("round trip of %d bytes gave %d bytes, %v", len(in), len(out), err)
		}
	}
	if race.Enabled {
		return
	}
	data := []byte(strings.Repeat("zerostat ", 1000))
	if n := testing.AllocsPerRun(20, func() { c.Compress(data) }); n != 0 {
		t.Errorf("Compress allocates %v times in steady state; want 0", n)
	}
}

func TestBadLevel(t *testing.T) {
	if _, err := New(42); err == nil || !strings.Contains(err.Error(), "42") {
		t.Errorf("New(42): %v; want an error naming the level", err)
	}
}
