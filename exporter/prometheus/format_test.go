package prometheus

import (
	"strconv"
	"testing"

	"github.com/zerostat/zerostat/internal/promname"
)

// appendCount's integer fast path spells every count as the float
// formatting client_golang uses (promname.AppendFloat, AppendOpenMetricsFloat)
// would: checked for every count up to past the switch to an exponent.
func TestAppendCountIsClientGolangsFloat(t *testing.T) {
	var got, want []byte
	for _, om := range []bool{false, true} {
		appendFloat := promname.AppendFloat
		if om {
			appendFloat = promname.AppendOpenMetricsFloat
		}
		for n := int64(0); n <= minExpCount+1000; n++ {
			got, want = appendCount(got[:0], n, om), appendFloat(want[:0], float64(n))
			if string(got) != string(want) {
				t.Fatalf("om=%v: appendCount(%d) = %s; want %s", om, n, got, want)
			}
		}
	}
	for _, c := range []struct {
		n        int64
		text, om string
	}{
		{0, "0", "0.0"}, {2, "2", "2.0"}, {999_999, "999999", "999999.0"},
		{1_000_000, "1e+06", "1e+06"}, {1_234_567, "1.234567e+06", "1.234567e+06"},
	} {
		if got := string(appendCount(nil, c.n, false)); got != c.text {
			t.Errorf("text: %d is %s; want %s", c.n, got, c.text)
		}
		if got := string(appendCount(nil, c.n, true)); got != c.om {
			t.Errorf("OpenMetrics: %d is %s; want %s", c.n, got, c.om)
		}
		if got, want := string(appendBucketCount(nil, c.n, false)), c.text; got != want {
			t.Errorf("text bucket: %d is %s; want %s", c.n, got, want)
		}
		if got, want := string(appendBucketCount(nil, c.n, true)), strconv.FormatInt(c.n, 10); got != want {
			t.Errorf("OpenMetrics bucket: %d is %s; want %s (an integer, as client_golang writes it)", c.n, got, want)
		}
	}
}
