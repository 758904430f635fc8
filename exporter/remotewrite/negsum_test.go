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

// A sum's metadata type and its samples come from one read of its values:
// a recorder moves the sum across zero (+3, -3) while pushes are encoded,
// and no push may call the family a counter beside a negative sample.
// Before, the metadata read the values once and the rows again.
func TestSumMetadataAndSamplesFromOneRead(t *testing.T) {
	m := stats.Float64("negsum_race/balance", "balance", stats.UnitDimensionless)
	register(t, &view.View{Name: "negsum_race/balance", Measure: m, Aggregation: view.Sum()})
	stats.Record(context.Background(), m.M(-1)) // the total is -1 or +2
	w := newWriter(t, Options{URL: "http://127.0.0.1:1/"})
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		ctx := context.Background()
		for {
			select {
			case <-stop:
				return
			default:
			}
			stats.Record(ctx, m.M(3))
			stats.Record(ctx, m.M(-3))
		}
	}()
	defer func() { close(stop); <-done }()
	var buf []byte
	seen := map[bool]int{} // pushes by sign of the sample
	for ts := int64(1); ts <= 3000 || len(seen) < 2 && ts <= 300_000; ts++ {
		buf = w.AppendWriteRequest(buf[:0], ts)
		ss, md, err := decodeWriteRequestMeta(buf)
		if err != nil {
			t.Fatal(err)
		}
		counter := false
		for _, x := range md {
			if strings.HasPrefix(x.name, "negsum_race_balance") && x.typ == metaCounter {
				counter = true
			}
		}
		for _, s := range ss {
			if !strings.HasPrefix(s.key(), "negsum_race_balance") {
				continue
			}
			seen[s.value < 0]++
			if counter && s.value < 0 {
				t.Fatalf("push %d: COUNTER metadata with the sample %v", ts, s.value)
			}
		}
	}
	if len(seen) < 2 {
		t.Fatalf("the pushes saw samples of one sign only (%v): the recorder did not cross zero", seen)
	}
}
