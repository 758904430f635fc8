package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// The demo's instrumentation, as a service would declare it.
var (
	keyRoute  = tag.MustNewKey("http.route")
	keyMethod = tag.MustNewKey("http.method")
	keyStatus = tag.MustNewKey("http.status")

	mLatency  = stats.Float64("demo/latency", "Request latency", stats.UnitMilliseconds)
	mBytes    = stats.Int64("demo/response_bytes", "Response body size", stats.UnitBytes)
	mInFlight = stats.Int64("demo/in_flight", "Requests being served", stats.UnitDimensionless)

	demoViews = []*view.View{
		{Name: "demo/requests", Description: "Requests served", Measure: mLatency,
			Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, keyMethod, keyStatus}},
		{Name: "demo/latency", Measure: mLatency,
			Aggregation: view.Distribution(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000), TagKeys: []tag.Key{keyRoute}},
		{Name: "demo/response_bytes", Measure: mBytes, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		{Name: "demo/in_flight", Measure: mInFlight, Aggregation: view.LastValue()},
	}
)

type endpoint struct {
	route, method string
	weight        int
	meanMs        float64
	bytes         int64
}

var endpoints = []endpoint{
	{"/users", "GET", 50, 8, 2048},
	{"/users", "POST", 10, 25, 256},
	{"/orders", "GET", 30, 15, 4096},
	{"/health", "GET", 10, 0.5, 2},
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 5*time.Second, "how long to record")
	period := fs.Duration("period", time.Second, "reporting period")
	workers := fs.Int("workers", 2, "recording goroutines")
	seed := fs.Uint64("seed", 1, "random seed of the simulated traffic")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *duration <= 0 || *period <= 0 || *workers <= 0 {
		fmt.Fprintln(stderr, "zerostat demo: -duration, -period and -workers must be positive")
		return 2
	}
	if err := view.Register(demoViews...); err != nil {
		fmt.Fprintln(stderr, "zerostat demo:", err)
		return 1
	}
	defer view.Unregister(demoViews...)

	table := newTableExporter(stdout)
	view.SetReportingPeriod(*period)
	view.RegisterExporter(table)

	fmt.Fprintf(stdout, "zerostat demo: %d workers recording for %v, reporting every %v\n", *workers, *duration, *period)
	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	var sent atomic.Int64
	var wg sync.WaitGroup
	for w := range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent.Add(generate(ctx, rand.New(rand.NewPCG(*seed, uint64(w)))))
		}()
	}
	wg.Wait()
	view.UnregisterExporter(table)
	view.SetReportingPeriod(0)
	table.flush()

	var final []*view.Data
	for _, v := range demoViews {
		rows, err := view.RetrieveData(v.Name)
		if err != nil {
			fmt.Fprintln(stderr, "zerostat demo:", err)
			return 1
		}
		final = append(final, &view.Data{View: v, Rows: rows})
	}
	fmt.Fprintln(stdout, "\n== final ==")
	writeTable(stdout, final)
	got, err := totalRequests()
	if err != nil {
		fmt.Fprintln(stderr, "zerostat demo:", err)
		return 1
	}
	ns, allocs := measureRecord()
	fmt.Fprintf(stdout, "\nsummary: %d requests sent, %d counted by demo/requests; record cost %.1f ns/op, %d allocs/op\n",
		sent.Load(), got, ns, allocs)
	if got != sent.Load() {
		fmt.Fprintln(stderr, "zerostat demo: the views lost or invented requests")
		return 1
	}
	return 0
}

// generate simulates requests until ctx ends and returns how many it made.
func generate(ctx context.Context, r *rand.Rand) int64 {
	// One context per tag combination, built once: the fast path.
	type combo struct {
		ctx   context.Context
		ep    endpoint
		error bool
	}
	var combos []combo
	total := 0
	for _, ep := range endpoints {
		for _, status := range []string{"200", "500"} {
			c, err := tag.New(context.Background(),
				tag.Upsert(keyRoute, ep.route), tag.Upsert(keyMethod, ep.method), tag.Upsert(keyStatus, status))
			if err != nil {
				panic(err) // the keys and values above are valid
			}
			combos = append(combos, combo{c, ep, status != "200"})
		}
		total += ep.weight
	}
	var n, inFlight int64
	for ctx.Err() == nil {
		// A burst of requests, then a pause, so the demo does not spin.
		for range 50 {
			pick := r.IntN(total)
			i := 0
			for ; pick >= endpoints[i].weight; i++ {
				pick -= endpoints[i].weight
			}
			c := combos[2*i]
			if r.IntN(100) == 0 {
				c = combos[2*i+1]
			}
			inFlight = int64(r.IntN(8))
			lat := c.ep.meanMs * math.Exp(r.NormFloat64()*0.5)
			stats.Record(c.ctx, mLatency.M(lat), mBytes.M(c.ep.bytes), mInFlight.M(inFlight))
			n++
		}
		time.Sleep(time.Millisecond)
	}
	return n
}

func totalRequests() (int64, error) {
	rows, err := view.RetrieveData("demo/requests")
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range rows {
		d, ok := r.Data.(*view.CountData)
		if !ok {
			return 0, errors.New("demo/requests: not count data")
		}
		n += d.Value
	}
	return n, nil
}

// measureRecord times the demo's record call in-process.
func measureRecord() (float64, int64) {
	ctx, _ := tag.New(context.Background(),
		tag.Upsert(keyRoute, "/bench"), tag.Upsert(keyMethod, "GET"), tag.Upsert(keyStatus, "200"))
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			stats.Record(ctx, mLatency.M(3))
		}
	})
	return float64(res.T.Nanoseconds()) / float64(res.N), res.AllocsPerOp()
}
