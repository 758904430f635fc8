package zerostatreceiver

import (
	"testing"
	"time"
)

// TestBodyTimeoutBeforeWriteTimeout: the handler stops reading a body
// before the server's write deadline, so its 408 is written (e2e:
// TestStalledBodyGets408 with a real Collector).
func TestBodyTimeoutBeforeWriteTimeout(t *testing.T) {
	for _, tc := range []struct{ write, want time.Duration }{
		{30 * time.Second, 25 * time.Second}, // the Collector's default
		{8 * time.Second, 6 * time.Second},
		{0, 30 * time.Second}, // no write deadline: the handler's default
		{time.Minute, 30 * time.Second},
	} {
		if got := bodyTimeout(tc.write); got != tc.want {
			t.Errorf("write_timeout %v: body timeout %v; want %v", tc.write, got, tc.want)
		}
	}
	if h := createDefaultConfig().(*Config).handler(); h.ReadTimeout != 25*time.Second {
		t.Errorf("default configuration: body timeout %v; want 25 s", h.ReadTimeout)
	}
}
