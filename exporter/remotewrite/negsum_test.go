package remotewrite

import (
	"context"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// docs/metric-mapping.md: a Sum with a negative value is exposed untyped
// (Prometheus, OpenMetrics, remote write), for that export. The scrape
// handler did so; remote write's metadata still called it a counter.
func TestNegativeSumMetadataAgreesWithScrape(t *testing.T) {
	m := stats.Float64("negsum_meta/balance", "balance", stats.UnitDimensionless)
	register(t, &view.View{Name: "negsum_meta/balance", Description: "Balance", Measure: m, Aggregation: view.Sum()})
	stats.Record(context.Background(), m.M(-4))

	scrape := string(prometheus.NewHandler(prometheus.Options{}).AppendFormat(nil, prometheus.FormatText))
	if !strings.Contains(scrape, "# TYPE negsum_meta_balance_total untyped\n") {
		t.Fatalf("scrape: want untyped:\n%s", scrape)
	}
	w := newWriter(t, Options{URL: "http://127.0.0.1:1/"})
	_, md, err := decodeWriteRequestMeta(w.AppendWriteRequest(nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range md {
		if strings.HasPrefix(x.name, "negsum_meta_balance") {
			n++
			if x.typ != metaUnknown || x.name != "negsum_meta_balance_total" {
				t.Errorf("remote write metadata %+v for a sum of -4; want unknown (untyped), named after its sample, as the scrape says", x)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d metadata entries for the family; want 1", n)
	}
	// Back to a counter's value: a counter again.
	stats.Record(context.Background(), m.M(10))
	_, md, err = decodeWriteRequestMeta(w.AppendWriteRequest(nil, 2))
	if err != nil {
		t.Fatal(err)
	}
	n = 0
	for _, x := range md {
		if strings.HasPrefix(x.name, "negsum_meta_balance") {
			n++
			if x.typ != metaCounter || x.name != "negsum_meta_balance" {
				t.Errorf("remote write metadata %+v for a sum of 6; want a counter named negsum_meta_balance", x)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d metadata entries for the family at 6; want 1", n)
	}
}
