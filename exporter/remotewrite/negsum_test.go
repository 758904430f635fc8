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
	// check wants the family's one metadata entry, of type typ, named name.
	check := func(ts int64, sum string, typ uint64, name string) {
		t.Helper()
		_, md, err := decodeWriteRequestMeta(w.AppendWriteRequest(nil, ts))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, x := range md {
			if strings.HasPrefix(x.name, "negsum_meta_balance") {
				n++
				if x.typ != typ || x.name != name {
					t.Errorf("remote write metadata %+v for a sum of %s; want type %d named %s, as the scrape says", x, sum, typ, name)
				}
			}
		}
		if n != 1 {
			t.Errorf("%d metadata entries for the family at %s; want 1", n, sum)
		}
	}
	check(1, "-4", metaUnknown, "negsum_meta_balance_total") // untyped, named after its sample
	stats.Record(context.Background(), m.M(10))
	check(2, "6", metaCounter, "negsum_meta_balance") // a counter's value again
}
