package main

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

func TestDemoTotalsMatch(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"demo", "-duration", "1500ms", "-period", "500ms"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s\nstdout:\n%s", code, errOut.String(), out.String())
	}
	s := out.String()
	for _, want := range []string{"== period 1", "== final", "demo/latency", "demo/requests", "http.route=/users", "p99=", "summary:"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if view.Find("demo/requests") != nil {
		t.Error("the demo left its views registered")
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"nope"}, {"demo", "-duration", "-1s"}, {"demo", "-bogus"}} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 2 {
			t.Errorf("%q: exit %d; want 2", args, code)
		}
		if errOut.Len() == 0 {
			t.Errorf("%q: no message on stderr", args)
		}
	}
}

func TestQuantile(t *testing.T) {
	m := stats.Float64("test/quantile", "", "")
	v := &view.View{Measure: m, Aggregation: view.Distribution(10, 20, 30)}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	// 10 values in [10,20): 10..19, 10 in [20,30): 20..29.
	for i := 10; i < 30; i++ {
		stats.Record(context.Background(), m.M(float64(i)))
	}
	rows, err := view.RetrieveData(v.Name)
	if err != nil {
		t.Fatal(err)
	}
	d := rows[0].Data.(*view.DistributionData)
	for _, tc := range []struct{ q, want float64 }{
		{0.25, 15},   // halfway through [10,20)
		{0.5, 20},    // the boundary
		{0.75, 24.5}, // halfway through [20, max=29]
		{1, 29},
	} {
		if got := quantile(d, tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("quantile(%v) = %v; want %v", tc.q, got, tc.want)
		}
	}
	if got := formatData(&view.SumData{Value: 216141824}); got != "216141824" {
		t.Errorf("formatData(sum) = %q", got)
	}
}
