// Package promcheck checks zerostat's Prometheus exposition and remote
// write against reference implementations (client_golang's expfmt, the
// official protobuf runtime, github.com/golang/snappy) and benchmarks the
// exposition against client_golang and VictoriaMetrics/metrics.
package promcheck

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// The fixture: 20 metrics × 500 series = 10,000 series, the same in
// zerostat, client_golang and VictoriaMetrics/metrics. Metrics 0..9 are
// counters (zerostat Count views: series s is incremented s%7+1 times),
// 10..19 histograms with 16 bounds (2 values per series, none on a bound,
// where the libraries' bucket rules differ). Every metric has 3 labels;
// series s has labels vals(s), 500 distinct combinations.
const (
	nMetrics   = 20
	perMetric  = 500
	nSeries    = nMetrics * perMetric
	nCounters  = nMetrics / 2
	namePrefix = "expo_"
)

var (
	labelNames = []string{"method", "status", "region"}
	methods    = []string{"GET", "POST", "PUT", "DELETE", "PATCH"}
	statuses   = []string{"200", "201", "204", "301", "304", "400", "401", "404", "500", "503"}
	regions    = []string{"us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "ap-northeast-1", "sa-east-1", "ca-central-1", "af-south-1", "me-south-1"}
	bounds16   = []float64{0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000}
	histValues [1024]float64
)

func init() {
	for i := range histValues {
		v := 0.3 * math.Pow(1.0125, float64(i)) // 0.3 .. ~92,000, log-spread
		if slices.Contains(bounds16, v) {
			v = math.Nextafter(v, math.Inf(1))
		}
		histValues[i] = v
	}
}

func vals(s int) []string {
	return []string{methods[s%5], statuses[(s/5)%10], regions[s/50]}
}

// records calls rec with each value recorded into series s of metric j.
func records(j, s int, rec func(v float64)) {
	if j < nCounters {
		for range s%7 + 1 {
			rec(1)
		}
		return
	}
	rec(histValues[(s*7+j)&1023])
	rec(histValues[(s*13+j+1)&1023])
}

// viewName is zerostat's view name; promName the family name the
// exposition gives it (and the peers are given).
func viewName(j int) string {
	if j < nCounters {
		return fmt.Sprintf("expo/c%d", j)
	}
	return fmt.Sprintf("expo/h%d", j)
}

func promName(j int) string {
	if j < nCounters {
		return fmt.Sprintf("expo_c%d_total", j)
	}
	return fmt.Sprintf("expo_h%d_milliseconds", j)
}

func help(j int) string { return fmt.Sprintf("Metric %d of the exposition fixture.", j) }

var (
	zsOnce sync.Once
	// zsRegistered brackets the registration of the fixture's views:
	// each view's start lies within.
	zsRegistered [2]time.Time
)

// zerostatFixture registers the fixture's views once per process and
// leaves them registered.
func zerostatFixture(tb testing.TB) {
	zsOnce.Do(func() {
		zsRegistered[0] = time.Now()
		keys := make([]tag.Key, len(labelNames))
		for i, n := range labelNames {
			keys[i] = tag.MustNewKey(n)
		}
		ms := make([]*stats.Float64Measure, nMetrics)
		for j := range nMetrics {
			unit, agg := stats.UnitDimensionless, view.Count()
			if j >= nCounters {
				unit, agg = stats.UnitMilliseconds, view.Distribution(bounds16...)
			}
			// The measure's description is not the view's: a Count view
			// with its measure's description gets a help of its own
			// ("Count of ... recordings: ...").
			ms[j] = stats.Float64("expo/m"+fmt.Sprint(j), "measure "+fmt.Sprint(j), unit)
			// A clone: Register sorts TagKeys in place.
			v := &view.View{Name: viewName(j), Description: help(j), Measure: ms[j], Aggregation: agg, TagKeys: slices.Clone(keys)}
			if err := view.Register(v); err != nil {
				panic(err)
			}
		}
		zsRegistered[1] = time.Now()
		for s := range perMetric {
			v := vals(s)
			ctx, err := tag.New(context.Background(), tag.Upsert(keys[0], v[0]), tag.Upsert(keys[1], v[1]), tag.Upsert(keys[2], v[2]))
			if err != nil {
				panic(err)
			}
			for j := range nMetrics {
				records(j, s, func(x float64) { stats.Record(ctx, ms[j].M(x)) })
			}
		}
	})
}

// promRegistry builds the fixture in a fresh client_golang registry, the
// histograms with the unit zerostat declares (OpenMetrics "# UNIT"; the
// text format has none).
func promRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	for j := range nMetrics {
		if j < nCounters {
			c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: promName(j), Help: help(j)}, labelNames)
			reg.MustRegister(c)
			for s := range perMetric {
				h := c.WithLabelValues(vals(s)...)
				records(j, s, h.Add)
			}
			continue
		}
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: promName(j), Help: help(j), Unit: "milliseconds", Buckets: bounds16}, labelNames)
		reg.MustRegister(h)
		for s := range perMetric {
			o := h.WithLabelValues(vals(s)...)
			records(j, s, o.Observe)
		}
	}
	return reg
}

// vmSet builds the fixture in a fresh VictoriaMetrics/metrics set.
func vmSet() *vm.Set {
	set := vm.NewSet()
	for j := range nMetrics {
		for s := range perMetric {
			v := vals(s)
			name := fmt.Sprintf("%s{method=%q,status=%q,region=%q}", promName(j), v[0], v[1], v[2])
			if j < nCounters {
				c := set.GetOrCreateCounter(name)
				records(j, s, func(float64) { c.Inc() })
				continue
			}
			h := set.GetOrCreatePrometheusHistogramExt(name, bounds16)
			records(j, s, h.Update)
		}
	}
	return set
}
