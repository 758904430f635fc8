package runmetrics_test

import (
	"fmt"
	"runtime"

	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/plugin/runmetrics"
	"github.com/zerostat/zerostat/view"
)

func ExampleEnable() {
	if err := runmetrics.Enable(runmetrics.Options{}); err != nil {
		panic(err)
	}
	defer runmetrics.Disable()

	metric.Collect() // every export and scrape does this first
	rows, _ := view.RetrieveData("go_sched_gomaxprocs_threads")
	fmt.Println(rows[0].Data.(*view.LastValueData).Value == float64(runtime.GOMAXPROCS(0)))
	// Output: true
}
