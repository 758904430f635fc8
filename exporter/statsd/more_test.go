package statsd

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/selfstats"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// TestPlainOpenCensusDatadog: in plain StatsD the OpenCensus-compatible
// bucket_idx tag is folded like any other.
func TestPlainOpenCensusDatadog(t *testing.T) {
	m := stats.Float64("poc/m", "", "")
	register(t, &view.View{Name: "poc/d", Measure: m, Aggregation: view.Distribution(1)})
	stats.Record(context.Background(), m.M(0.5))
	ag := newAgent(t, "udp", true, 0)
	e := newExporter(t, Options{Addr: ag.addr, Dialect: Plain, OpenCensusDatadog: true, Tags: []string{"team:core"}})
	export(t, e)
	ls := ag.wait(7)
	got := map[string]bool{}
	for _, l := range ls {
		got[l.raw] = true
	}
	for _, w := range []string{"poc_d.count.team.core:1|g", "poc_d.count_per_bucket.team.core.bucket_idx.0:1|g",
		"poc_d.count_per_bucket.team.core.bucket_idx.1:0|g"} {
		if !got[w] {
			t.Errorf("missing %q in %v", w, got)
		}
	}
}

// TestSelfstats: the exporter reports to zerostat's self-metrics under
// sink "statsd", successes and failures.
func TestSelfstats(t *testing.T) {
	if err := selfstats.Register(); err != nil {
		t.Fatal(err)
	}
	defer selfstats.Unregister()
	f := newCountFixture(t, 1)
	f.record(1)
	ag := newAgent(t, "udp", false, 0)
	ok := newExporter(t, Options{Addr: ag.addr})
	export(t, ok)
	bad := newExporter(t, Options{Addr: "unixgram://" + sockPath(t), Retry: Retry{Disabled: true}})
	exportWithin(bad, time.Second)
	rows, err := view.RetrieveData("zerostat/exports")
	if err != nil {
		t.Fatal(err)
	}
	var okN, failN int64
	for _, r := range rows {
		s := fmt.Sprint(r.Tags)
		if !strings.Contains(s, "{sink statsd}") {
			continue
		}
		if strings.Contains(s, "{result ok}") {
			okN += r.Data.(*view.CountData).Value
		} else {
			failN += r.Data.(*view.CountData).Value
		}
	}
	if okN != 1 || failN != 1 {
		t.Errorf("zerostat/exports for sink statsd: %d ok, %d failed; want 1 and 1 (rows %v)", okN, failN, rows)
	}
}

// TestExportConcurrentSafe: recorders and two exporting goroutines,
// released together; every count reaches the agent exactly once.
func TestExportConcurrentSafe(t *testing.T) {
	f := newCountFixture(t, 4)
	ag := newAgent(t, "unix", false, 0) // a stream: nothing dropped by the kernel
	e := newExporter(t, Options{Addr: ag.addr})
	gate := make(chan struct{})
	var wg sync.WaitGroup
	const rounds = 50
	for range 2 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-gate
			for range rounds {
				f.record(1)
			}
		}()
		go func() {
			defer wg.Done()
			<-gate
			for range rounds / 5 {
				e.Export(context.Background())
				_ = e.Stats()
			}
		}()
	}
	close(gate)
	wg.Wait()
	export(t, e) // what the last concurrent export missed
	want := float64(2 * rounds * 4)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ag.mu.Lock()
		got := f.total(t, ag.lines)
		ag.mu.Unlock()
		if got == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent counted %v; want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
