package agenttest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/statsd"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// EnvRequireEtsy, set to 1 (make statsd-agents sets it once
// scripts/install-etsy-statsd.sh has installed statsd), makes a missing
// Etsy statsd fail TestEtsyStatsd instead of skipping it.
const EnvRequireEtsy = "ZEROSTAT_REQUIRE_ETSY"

// jsonBackend is an Etsy statsd backend that appends what each flush
// carries to config.zsOut, one JSON object a line.
const jsonBackend = `
var fs = require('fs');
exports.init = function (startup, config, events) {
  events.on('flush', function (ts, m) {
    fs.appendFileSync(config.zsOut, JSON.stringify({counters: m.counters, gauges: m.gauges,
      timers: m.timers, timer_counters: m.timer_counters}) + "\n");
  });
  return true;
};
`

type etsy struct {
	udp, mgmt string
	out       string
}

type etsyFlush struct {
	Counters      map[string]float64   `json:"counters"`
	Gauges        map[string]float64   `json:"gauges"`
	Timers        map[string][]float64 `json:"timers"`
	TimerCounters map[string]float64   `json:"timer_counters"`
}

func startEtsy(t *testing.T, flush time.Duration) *etsy {
	t.Helper()
	out, err := exec.Command("bash", "../../../scripts/install-etsy-statsd.sh", "--path").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		msg := "Etsy statsd 0.9.0 is not installed (scripts/install-etsy-statsd.sh: the npm registry could not be reached, or npm is missing)"
		if os.Getenv(EnvRequireEtsy) == "1" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPED: " + msg)
	}
	tmp := t.TempDir()
	e := &etsy{udp: freePort(t, "udp"), mgmt: freePort(t, "tcp"), out: filepath.Join(tmp, "flushes.jsonl")}
	backend := filepath.Join(tmp, "jsonbackend.js")
	if err := os.WriteFile(backend, []byte(jsonBackend), 0o644); err != nil {
		t.Fatal(err)
	}
	_, uport, _ := net.SplitHostPort(e.udp)
	_, mport, _ := net.SplitHostPort(e.mgmt)
	cfg := fmt.Sprintf(`{ address: "127.0.0.1", port: %s, mgmt_address: "127.0.0.1", mgmt_port: %s,
  flushInterval: %d, backends: [%q], zsOut: %q, deleteIdleStats: false }`,
		uport, mport, flush.Milliseconds(), backend, e.out)
	cfgPath := filepath.Join(tmp, "config.js")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(dir, "stats.js"), cfgPath)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(15 * time.Second)
	for {
		if s, err := e.admin("health"); err == nil && strings.Contains(s, "up") {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatal("Etsy statsd not ready after 15 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// admin sends one command to the management interface and returns its
// answer, up to "END" (or the one line health answers).
func (e *etsy) admin(cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", e.mgmt, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "%s\n", cmd)
	var b strings.Builder
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if sc.Text() == "END" || cmd == "health" {
			b.WriteString(sc.Text())
			break
		}
		b.WriteString(sc.Text() + "\n")
	}
	return b.String(), sc.Err()
}

var (
	reInspectNum = regexp.MustCompile(`'?([A-Za-z0-9_.\-]+)'?: (-?[0-9.e+\-]+)`)
	reInspectArr = regexp.MustCompile(`'?([A-Za-z0-9_.\-]+)'?: \[([^\]]*)\]`)
)

// numbers reads util.inspect's rendering of {name: number}.
func numbers(s string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range reInspectNum.FindAllStringSubmatch(s, -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err == nil {
			out[m[1]] = v
		}
	}
	return out
}

// arrays reads util.inspect's rendering of {name: [numbers]}.
func arrays(s string) map[string][]float64 {
	out := map[string][]float64{}
	for _, m := range reInspectArr.FindAllStringSubmatch(strings.ReplaceAll(s, "\n", " "), -1) {
		for _, f := range strings.Split(m[2], ",") {
			if v, err := strconv.ParseFloat(strings.TrimSpace(f), 64); err == nil {
				out[m[1]] = append(out[m[1]], v)
			}
		}
	}
	return out
}

func (e *etsy) flushes(t *testing.T) []etsyFlush {
	b, err := os.ReadFile(e.out)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []etsyFlush
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var f etsyFlush
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// waitFlush waits until more than n flushes were written, and returns them.
func (e *etsy) waitFlush(t *testing.T, n int, within time.Duration) []etsyFlush {
	deadline := time.Now().Add(within)
	for {
		if fs := e.flushes(t); len(fs) > n {
			return fs
		}
		if time.Now().After(deadline) {
			t.Fatalf("no flush %d after %v", n+1, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEtsyStatsd sends plain StatsD over UDP to Etsy statsd 0.9.0 and
// reads it back: counters and gauges through the admin interface
// (counters, gauges, timers), exactly; the timers' counts (the sum of
// 1/rate over their values, which the admin interface does not show)
// and every flushed value through a backend that writes each flush.
func TestEtsyStatsd(t *testing.T) {
	const flush = 3 * time.Second
	et := startEtsy(t, flush)
	bounds := []float64{1, 5, 10, 50}
	p := fmt.Sprintf("et%d", seq.Add(1))
	lat := stats.Float64(p+"/lat", "", stats.UnitMilliseconds)
	size := stats.Int64(p+"/size", "", stats.UnitBytes)
	level := stats.Int64(p+"/level", "", stats.UnitDimensionless)
	register(t,
		&view.View{Name: p + "/requests", Measure: lat, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute, keyMethod}},
		&view.View{Name: p + "/bytes", Measure: size, Aggregation: view.Sum(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/inflight", Measure: level, Aggregation: view.UpDownSum(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/last", Measure: level, Aggregation: view.LastValue(), TagKeys: []tag.Key{keyRoute}},
		&view.View{Name: p + "/latency", Measure: lat, Aggregation: view.Distribution(bounds...), TagKeys: []tag.Key{keyRoute}},
	)
	ctx := ctxWith(t, tag.Upsert(keyRoute, "/a"), tag.Upsert(keyMethod, "GET"))
	// 93 values in [1,5): a count with no exact rate, sent as 92 + 1 (or
	// another split) with exact rates.
	var vals []float64
	vals = append(vals, 0.5, 7, 7, 20, 100, 100, 100)
	for i := range 93 {
		vals = append(vals, 1+float64(i)/25)
	}
	for _, v := range vals {
		stats.Record(ctx, lat.M(v))
	}
	stats.Record(ctx, size.M(40), size.M(2))
	stats.Record(ctx, level.M(5), level.M(-12)) // inflight -7, last -12

	e, err := statsd.New(statsd.Options{Addr: et.udp, Dialect: statsd.Plain, Namespace: "ns", Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop(context.Background())
	// Export right after a flush: the admin interface then shows this
	// interval's counters for the next 3 s.
	n0 := len(et.waitFlush(t, 0, 2*flush))
	ectx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Export(ectx); err != nil {
		t.Fatal(err)
	}
	name := func(v string, tags ...string) string {
		s := "ns." + p + "_" + v
		for _, t := range tags {
			k, v, _ := strings.Cut(t, ":")
			s += "." + seg(k) + "." + seg(v)
		}
		return s
	}
	reqs := name("requests", "method:GET", "route:/a")
	bytes := name("bytes", "route:/a")
	infl, last := name("inflight", "route:/a"), name("last", "route:/a")
	latn := name("latency", "route:/a")
	time.Sleep(200 * time.Millisecond) // the datagrams read
	counters, _ := et.admin("counters")
	gauges, _ := et.admin("gauges")
	timers, _ := et.admin("timers")
	if fs := et.flushes(t); len(fs) != n0 {
		t.Log("a flush came between the export and the admin reads: checking the flush only")
	} else {
		c, g := numbers(counters), numbers(gauges)
		if c[reqs] != float64(len(vals)) || c[bytes] != 42 {
			t.Errorf("admin counters: %s = %v, %s = %v; want %d and 42\n%s", reqs, c[reqs], bytes, c[bytes], len(vals), counters)
		}
		if g[infl] != -7 || g[last] != -12 {
			t.Errorf("admin gauges: %s = %v, %s = %v; want -7 and -12\n%s", infl, g[infl], last, g[last], gauges)
		}
		checkTimerValues(t, "admin timers", arrays(timers)[latn], vals, bounds)
	}
	fs := et.waitFlush(t, n0, 2*flush)
	f := fs[n0]
	if f.Counters[reqs] != float64(len(vals)) || f.Counters[bytes] != 42 {
		t.Errorf("flushed counters: %s = %v, %s = %v; want %d and 42", reqs, f.Counters[reqs], bytes, f.Counters[bytes], len(vals))
	}
	if f.Gauges[infl] != -7 || f.Gauges[last] != -12 {
		t.Errorf("flushed gauges: %v; want %s -7, %s -12", f.Gauges, infl, last)
	}
	if got := f.TimerCounters[latn]; got != float64(len(vals)) {
		t.Errorf("flushed timer count %s = %v; want %d exactly", latn, got, len(vals))
	}
	checkTimerValues(t, "flushed timers", f.Timers[latn], vals, bounds)
	if bad := f.Counters["statsd.bad_lines_seen"]; bad != 0 {
		t.Errorf("statsd.bad_lines_seen = %v; want 0", bad)
	}
}

// checkTimerValues: each value Etsy holds lies in a bucket that had
// recordings, and every such bucket has a value.
func checkTimerValues(t *testing.T, what string, got, vals, bounds []float64) {
	t.Helper()
	want := map[int]bool{}
	for _, v := range vals {
		want[bucketOf(bounds, false, v)] = true
	}
	have := map[int]bool{}
	for _, v := range got {
		b := bucketOf(bounds, false, v)
		if !want[b] || math.IsNaN(v) {
			t.Errorf("%s: value %v in bucket %d, which had no recording", what, v, b)
		}
		have[b] = true
	}
	if len(have) != len(want) {
		t.Errorf("%s: values %v cover buckets %v; want %v", what, got, have, want)
	}
}
