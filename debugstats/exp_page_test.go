package debugstats_test

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/debugstats"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// An exponential view is shown as a distribution: count, mean, min, max,
// p50, p90 and p99 estimated within the bucket holding each (geometric
// interpolation, edges clamped to min and max), and a chart of its
// buckets, negative, zero and positive, titled by the data model's
// upper-inclusive rule; its snapshot links serve it.
func TestPageExponentialView(t *testing.T) {
	m := stats.Float64("dstest_exp/latency_m", "Latency", stats.UnitMilliseconds)
	v := &view.View{Name: "dstest_exp/latency", Measure: m, Aggregation: view.ExponentialDistribution(160, 0),
		TagKeys: []tag.Key{keyRoute}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	ctx := tagged(t, "/users", "GET", "200")
	// Scale 0 (base 2): -3 in [-4,-2), 0, 1.5 in (1,2], 3 and 3 in (2,4], 5 in (4,8].
	for _, x := range []float64{-3, 0, 1.5, 3, 3, 5} {
		stats.Record(ctx, m.M(x))
	}
	h := debugstats.NewHandler(debugstats.Options{})
	resp, page := get(t, h, "/debug/stats")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	sec := section(t, page, "dstest_exp/latency")
	// Ranks of 6: p50 = 3 reaches (1,2] whole (cumulative 3): its top,
	// 2; p90 = 5.4 is 0.4 through (4,8] clamped to [4,5]: 4·(5/4)^0.4;
	// p99 = 5.94 is 0.94 through it.
	p90 := formatLike(4 * math.Pow(1.25, 0.4))
	p99 := formatLike(4 * math.Pow(1.25, 0.94))
	for _, want := range []string{
		`<span class="badge agg">ExponentialDistribution</span>`,
		`<td class="num count">6</td>`,
		`<td class="num">1.583</td>`, // the mean, 9.5/6
		`<td class="num">-3</td>`, `<td class="num">5</td>`,
		`<td class="num p50">2</td>`,
		`<td class="num p90">` + p90 + `</td>`,
		`<td class="num p99">` + p99 + `</td>`,
		`<title>[-4, -2): 1 (16.7%)</title>`,
		`<title>0: 1 (16.7%)</title>`,
		`<title>(1, 2]: 1 (16.7%)</title>`,
		`<title>(2, 4]: 2 (33.3%)</title>`,
		`<title>(4, 8]: 1 (16.7%)</title>`,
		`aria-label="exponential histogram of 4 buckets at scale 0, 6 values"`,
		`<line class="mark p50"`, `<line class="mark p99"`,
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("section lacks %s", want)
		}
	}
	if n := strings.Count(sec, `<rect class="bar`); n != 5 {
		t.Errorf("%d bars; want 5 (one negative, zero, three positive)", n)
	}
	if !strings.Contains(page, `<td class="num total">6 recorded</td>`) {
		t.Error("summary lacks the total count")
	}

	// The JSON snapshot link answers with the view.
	resp, body := get(t, h, "/debug/stats?view=dstest_exp%2Flatency&format=json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("snapshot: status %d: %s", resp.StatusCode, body)
	}
	var js any
	if err := json.Unmarshal([]byte(body), &js); err != nil || !strings.Contains(body, "dstest_exp/latency") {
		t.Errorf("snapshot %v: %.400s", err, body)
	}
}

// formatLike formats x as the page does (4 significant digits).
func formatLike(x float64) string {
	s := strings.TrimRight(strings.TrimRight(strconvF(x), "0"), ".")
	return s
}

func strconvF(x float64) string {
	digits := max(0, 3-int(math.Floor(math.Log10(math.Abs(x)))))
	return strconv.FormatFloat(x, 'f', digits, 64)
}
