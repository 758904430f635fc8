package opencensus_test

import (
	"context"
	"fmt"

	ocview "go.opencensus.io/stats/view"

	"github.com/zerostat/zerostat/bridge/opencensus"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// rowPrinter is an exporter written against OpenCensus's view package,
// as Datadog's is.
type rowPrinter struct{}

func (rowPrinter) ExportView(vd *ocview.Data) {
	for _, r := range vd.Rows {
		fmt.Printf("%s %v %T %v\n", vd.View.Name, r.Tags, r.Data, r.Data.(*ocview.CountData).Value)
	}
}

// An OpenCensus view.Exporter receives zerostat's views as OpenCensus's
// view.Data. With the default meter: opencensus.RegisterExporter(e), and
// it is called each reporting period; here a meter's exporter, called
// when the view is unregistered, for a deterministic output.
func ExampleNewExporter() {
	m := view.NewMeter()
	route := tag.MustNewKey("route")
	requests := stats.Int64("example/requests", "requests", stats.UnitDimensionless)
	v := &view.View{Name: "example_requests", Measure: requests, Aggregation: view.Count(), TagKeys: []tag.Key{route}}
	if err := m.Register(v); err != nil {
		panic(err)
	}
	ctx, _ := tag.New(context.Background(), tag.Upsert(route, "/a"))
	for range 3 {
		_ = stats.RecordWithOptions(ctx, stats.WithRecorder(m), stats.WithMeasurements(requests.M(1)))
	}

	m.RegisterExporter(opencensus.NewExporter(rowPrinter{}))
	m.Unregister(v) // a view's last report

	// Output:
	// example_requests [{{route} /a}] *view.CountData 3
}
