package debugstats_test

import (
	"strings"
	"testing"

	"github.com/zerostat/zerostat/debugstats"
	"github.com/zerostat/zerostat/stats"
)

// The page shows each bucket's latest exemplar with its trace and span
// IDs and its other attachments, escaped.
func TestPageExemplars(t *testing.T) {
	f := newFixture(t, "dstest_exemplar")
	f.record(t)
	sc := stats.SpanContext{TraceID: [16]byte{0xab, 15: 0xcd}, SpanID: [8]byte{0x12, 7: 0x34}}
	ctx := tagged(t, "/users", "GET", "200")
	if err := stats.RecordWithOptions(ctx, stats.WithMeasurements(f.latency.M(17)),
		stats.WithAttachments(map[string]interface{}{stats.AttachmentKeySpanContext: sc, "user": "<b>u</b>"})); err != nil {
		t.Fatal(err)
	}
	_, page := get(t, debugstats.NewHandler(debugstats.Options{}), "/")
	i := strings.Index(page, `<ul class="exemplars">`)
	if i < 0 {
		t.Fatalf("no exemplars on the page")
	}
	list := page[i : i+strings.Index(page[i:], "</ul>")]
	for _, want := range []string{
		`<span class="bucket">[10, 20)</span> <span class="value">17</span>`,
		`trace <code class="trace">ab0000000000000000000000000000cd</code>`,
		`span <code class="span">1200000000000034</code>`,
		`user=&lt;b&gt;u&lt;/b&gt;`,
	} {
		if !strings.Contains(list, want) {
			t.Errorf("exemplars %s\nlack %s", list, want)
		}
	}
	if n := strings.Count(list, `<li class="exemplar"`); n != 1 {
		t.Errorf("%d exemplars; want 1 (one bucket has one)", n)
	}
	if strings.Count(page, `<ul class="exemplars">`) != 1 {
		t.Errorf("exemplars shown for rows recorded without attachments")
	}
}
