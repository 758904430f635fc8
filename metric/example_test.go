package metric_test

import (
	"fmt"

	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func ExampleNewGauge() {
	pool := tag.MustNewKey("pool")
	g, err := metric.NewGauge("example/connections", "Open connections", stats.UnitDimensionless,
		[]tag.Key{pool}, func(o *metric.Observer) {
			o.Observe(3, "primary")
			o.Observe(1, "replica")
		})
	if err != nil {
		panic(err)
	}
	defer g.Unregister()

	metric.Collect() // every export and scrape does this first
	rows, _ := view.RetrieveData("example/connections")
	for _, r := range rows {
		fmt.Println(r.Tags, r.Data.(*view.LastValueData).Value)
	}
	// Output:
	// [{pool primary}] 3
	// [{pool replica}] 1
}
