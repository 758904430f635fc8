package debugstats_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/debugstats"
	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/tag"
)

// A callback summary is shown with its aggregation, the total count of
// its rows, and per row its count, sum and each quantile's value, as its
// callback reported them at the page's snapshot; its snapshot links serve
// it.
func TestPageSummaryView(t *testing.T) {
	s, err := metric.NewSummary("dstest_sum/pause", "Pauses", "s", []float64{0, 0.5, 1}, []tag.Key{keyRoute}, func(o *metric.SummaryObserver) {
		o.Observe(4, 0.013, []float64{0.001, 0.0025, 0.006}, "/a")
		o.Observe(2, 1, []float64{0.5, 0.5, 0.5}, "/b")
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Unregister)
	h := debugstats.NewHandler(debugstats.Options{})
	resp, page := get(t, h, "/debug/stats")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	sec := section(t, page, "dstest_sum/pause")
	for _, want := range []string{
		`<span class="badge agg">Summary</span>`,
		`<td class="num value">count 4, sum 0.013; q0: 0.001, q0.5: 0.0025, q1: 0.006</td>`,
		`<td class="num value">count 2, sum 1; q0: 0.5, q0.5: 0.5, q1: 0.5</td>`,
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("section lacks %s:\n%s", want, sec)
		}
	}
	if !strings.Contains(page, `<td class="num total">6 summarised</td>`) {
		t.Error("the views' table lacks the summary's total count")
	}
	resp, body := get(t, h, "/debug/stats?view=dstest_sum%2Fpause&format=json")
	compact := strings.Join(strings.Fields(body), "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(compact, `"aggregation":"summary"`) ||
		!strings.Contains(compact, `"quantiles":[{"quantile":0,"value":0.001},{"quantile":0.5,"value":0.0025},{"quantile":1,"value":0.006}]`) {
		t.Errorf("snapshot: status %d: %s", resp.StatusCode, body)
	}
}
