// Package statsd compares zerostat's StatsD exporter (exporter/statsd)
// with datadog-go v5.9.1's client on one workload: 2 counters and 1
// histogram (15 bounds) with 2 tags (30 tag sets), 100k recordings a
// second, one 10 s interval, over UDP to a sink in another process:
//
//   - BenchmarkStatsdRecord: the cost of one recording (ns, allocations);
//   - BenchmarkStatsdInterval: one interval in real time (10 s, paced at
//     100k recordings a second), then a flush: bytes and datagrams sent
//     (the senders' own counts, and what the sink received), and the CPU
//     the sending process spent (getrusage: recording, aggregating,
//     encoding, sending; the sink is a child process, not counted);
//   - TestStatsdBytes (make test): the same workload over 1 s with
//     datadog-go's aggregation interval scaled alike (200 ms): zerostat
//     sends at least 10× fewer bytes than datadog-go without client-side
//     aggregation and no more than with it (basic and extended).
//
// datadog-go runs as configured by WithoutClientSideAggregation (one line
// per call), by default (counts and gauges aggregated every 2 s) and with
// WithExtendedClientSideAggregation (histograms too: multi-value lines),
// its telemetry sent to another address (its own metrics would add bytes) and
// WithoutOriginDetection. zerostat sends DogStatsD |h (the type
// datadog-go's Histogram sends), native distributions, every 10 s.
package statsd

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	ddstatsd "github.com/DataDog/datadog-go/v5/statsd"

	zsstatsd "github.com/zerostat/zerostat/exporter/statsd"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

const (
	envSink  = "ZEROSTAT_STATSD_SINK" // set in the sink child process
	rate     = 100_000                // recordings a second
	routes   = 10
	statuses = 3
)

var bounds = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000}

// TestMain runs the sink when the test binary is started as one.
func TestMain(m *testing.M) {
	if os.Getenv(envSink) != "" {
		runSink()
		return
	}
	os.Exit(m.Run())
}

// runSink counts the datagrams and bytes it receives on 127.0.0.1 (its
// address on the first line of stdout); when stdin closes it prints
// "<datagrams> <bytes>" and exits.
func runSink() {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	pc.(*net.UDPConn).SetReadBuffer(16 << 20)
	fmt.Println(pc.LocalAddr().String())
	var n, bytes int64
	done := make(chan struct{})
	go func() {
		buf := make([]byte, 1<<16)
		for {
			k, _, err := pc.ReadFrom(buf)
			if err != nil {
				close(done)
				return
			}
			n++
			bytes += int64(k)
		}
	}()
	bufio.NewReader(os.Stdin).ReadString('\n') // until closed
	time.Sleep(200 * time.Millisecond)         // the last datagrams
	pc.Close()
	<-done
	fmt.Println(n, bytes)
}

type sink struct {
	addr  string
	cmd   *exec.Cmd
	stdin interface{ Close() error }
	out   *bufio.Reader
}

func startSink(tb testing.TB) *sink {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envSink+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	s := &sink{cmd: cmd, stdin: in, out: bufio.NewReader(outp)}
	line, err := s.out.ReadString('\n')
	if err != nil {
		tb.Fatal(err)
	}
	s.addr = strings.TrimSpace(line)
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return s
}

// stop ends the sink and returns what it received.
func (s *sink) stop(tb testing.TB) (datagrams, bytes int64) {
	s.stdin.Close()
	line, _ := s.out.ReadString('\n')
	fmt.Sscan(line, &datagrams, &bytes)
	s.cmd.Wait()
	return datagrams, bytes
}

// values are the histogram's recorded values: a fixed log-uniform
// sequence over the bounds' range, the same for every implementation.
var values = func() []float64 {
	v := make([]float64, 4096)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range v {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v[i] = math.Exp(float64(x>>11)/(1<<53)*math.Log(60000)) - 0.5
	}
	return v
}()

// impl is one implementation of the workload.
type impl struct {
	name string
	// setup returns the record function (step i: counter 1, counter 2,
	// histogram, in turn, over the tag sets), a flush, and the sender's
	// counts. done releases it.
	setup func(tb testing.TB, addr string, aggInterval time.Duration) (record func(i int), flush func(), sent func() (datagrams, bytes uint64), done func())
}

var impls = []impl{
	{"zerostat", setupZerostat},
	{"datadog", setupDatadog(ddstatsd.WithoutClientSideAggregation())},
	{"datadog_agg", setupDatadog(ddstatsd.WithClientSideAggregation())},
	{"datadog_extagg", setupDatadog(ddstatsd.WithExtendedClientSideAggregation())},
}

var (
	keyRoute  = tag.MustNewKey("route")
	keyStatus = tag.MustNewKey("status")
	viewSeq   int
)

func setupZerostat(tb testing.TB, addr string, _ time.Duration) (func(int), func(), func() (uint64, uint64), func()) {
	viewSeq++
	p := fmt.Sprintf("sb%d", viewSeq)
	req := stats.Int64(p+"/requests", "", stats.UnitDimensionless)
	errs := stats.Int64(p+"/errors", "", stats.UnitDimensionless)
	lat := stats.Float64(p+"/latency", "", stats.UnitMilliseconds)
	keys := []tag.Key{keyRoute, keyStatus}
	views := []*view.View{
		{Name: "bench.requests", Measure: req, Aggregation: view.Sum(), TagKeys: keys},
		{Name: "bench.errors", Measure: errs, Aggregation: view.Sum(), TagKeys: keys},
		{Name: "bench.latency", Measure: lat, Aggregation: view.Distribution(bounds...), TagKeys: keys},
	}
	if err := view.Register(views...); err != nil {
		tb.Fatal(err)
	}
	var ctxs []context.Context
	for r := range routes {
		for s := range statuses {
			ctx, err := tag.New(context.Background(), tag.Upsert(keyRoute, fmt.Sprintf("/api/r%d", r)), tag.Upsert(keyStatus, strconv.Itoa(200+100*s)))
			if err != nil {
				tb.Fatal(err)
			}
			ctxs = append(ctxs, ctx)
		}
	}
	e, err := zsstatsd.New(zsstatsd.Options{Addr: addr, DistributionType: zsstatsd.TypeHistogram, Interval: 10 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	e.Start()
	record := func(i int) {
		ctx := ctxs[(i/3)%len(ctxs)]
		switch i % 3 {
		case 0:
			stats.Record(ctx, req.M(1))
		case 1:
			stats.Record(ctx, errs.M(1))
		default:
			stats.Record(ctx, lat.M(values[(i/3)%len(values)]))
		}
	}
	flush := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.Export(ctx); err != nil {
			tb.Error(err)
		}
	}
	sent := func() (uint64, uint64) { s := e.Stats(); return s.Sent, s.Bytes }
	done := func() {
		e.Stop(context.Background())
		view.Unregister(views...)
	}
	return record, flush, sent, done
}

func setupDatadog(mode ddstatsd.Option) func(testing.TB, string, time.Duration) (func(int), func(), func() (uint64, uint64), func()) {
	return func(tb testing.TB, addr string, aggInterval time.Duration) (func(int), func(), func() (uint64, uint64), func()) {
		// Its telemetry goes elsewhere (a port nothing reads): its own
		// metrics would add bytes, but its counts are what GetTelemetry
		// reads.
		c, err := ddstatsd.New(addr, mode, ddstatsd.WithTelemetryAddr(discardAddr(tb)), ddstatsd.WithoutOriginDetection(),
			ddstatsd.WithAggregationInterval(aggInterval))
		if err != nil {
			tb.Fatal(err)
		}
		var tags [][]string
		for r := range routes {
			for s := range statuses {
				tags = append(tags, []string{fmt.Sprintf("route:/api/r%d", r), "status:" + strconv.Itoa(200+100*s)})
			}
		}
		record := func(i int) {
			t := tags[(i/3)%len(tags)]
			switch i % 3 {
			case 0:
				c.Incr("bench.requests", t, 1)
			case 1:
				c.Incr("bench.errors", t, 1)
			default:
				c.Histogram("bench.latency", values[(i/3)%len(values)], t, 1)
			}
		}
		flush := func() { c.Flush() }
		sent := func() (uint64, uint64) {
			t := c.GetTelemetry()
			return t.TotalPayloadsSent + t.TotalPayloadsDropped, t.TotalBytesSent + t.TotalBytesDropped
		}
		return record, flush, sent, func() { c.Close() }
	}
}

// discardAddr is a loopback UDP address that a socket holds, reading
// nothing.
func discardAddr(tb testing.TB) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { pc.Close() })
	return pc.LocalAddr().String()
}

// interval runs one interval of d at rate recordings a second, paced in
// 1 ms batches, then flushes; it returns what was sent and received, and
// the CPU the process spent.
type result struct {
	datagrams, bytes     uint64
	rxDatagrams, rxBytes int64
	cpu                  time.Duration
	recordings           int
}

func interval(tb testing.TB, im impl, d, aggInterval time.Duration) result {
	s := startSink(tb)
	record, flush, sent, done := im.setup(tb, s.addr, aggInterval)
	defer done()
	n := int(d.Seconds() * rate)
	cpu0 := cpuTime()
	start := time.Now()
	const batch = rate / 1000 // per millisecond
	for i := 0; i < n; {
		for k := 0; k < batch && i < n; k++ {
			record(i)
			i++
		}
		if ahead := time.Duration(i)*time.Second/rate - time.Since(start); ahead > 0 {
			time.Sleep(ahead)
		}
	}
	flush()
	cpu := cpuTime() - cpu0
	rd, rb := s.stop(tb) // waits 200 ms: datadog-go's sender has sent its flush, and counted it
	dg, b := sent()
	return result{datagrams: dg, bytes: b, rxDatagrams: rd, rxBytes: rb, cpu: cpu, recordings: n}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// baseline records nothing: the CPU of the pacing loop alone, which
// BenchmarkStatsdInterval's cpu-ms/interval includes for every
// implementation.
var baseline = impl{"baseline", func(testing.TB, string, time.Duration) (func(int), func(), func() (uint64, uint64), func()) {
	return func(int) {}, func() {}, func() (uint64, uint64) { return 0, 0 }, func() {}
}}

// BenchmarkStatsdInterval: one 10 s interval per iteration (run with
// -benchtime=1x); the metrics are per interval.
func BenchmarkStatsdInterval(b *testing.B) {
	for _, im := range append([]impl{baseline}, impls...) {
		b.Run("impl="+im.name, func(b *testing.B) {
			var r result
			for range b.N {
				r = interval(b, im, 10*time.Second, 2*time.Second)
			}
			b.ReportMetric(float64(r.bytes), "bytes/interval")
			b.ReportMetric(float64(r.datagrams), "datagrams/interval")
			b.ReportMetric(float64(r.rxBytes), "rx-bytes/interval")
			b.ReportMetric(float64(r.cpu.Microseconds())/1000, "cpu-ms/interval")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkStatsdRecord: one recording (the workload's call mix) while
// the sender runs.
func BenchmarkStatsdRecord(b *testing.B) {
	for _, im := range impls {
		b.Run("impl="+im.name, func(b *testing.B) {
			s := startSink(b)
			record, _, _, done := im.setup(b, s.addr, 2*time.Second)
			defer done()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				record(i)
			}
		})
	}
}

// TestStatsdBytes checks the byte targets on a 1 s interval (100k
// recordings; datadog-go aggregating every 200 ms, the same 5 flushes an
// interval as its default 2 s over 10 s).
func TestStatsdBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("1 s per implementation")
	}
	got := map[string]result{}
	for _, im := range impls {
		got[im.name] = interval(t, im, time.Second, 200*time.Millisecond)
		r := got[im.name]
		t.Logf("%-15s %9d bytes in %6d datagrams (received %9d in %6d), CPU %v for %d recordings",
			im.name, r.bytes, r.datagrams, r.rxBytes, r.rxDatagrams, r.cpu, r.recordings)
	}
	zs := got["zerostat"].bytes
	if zs == 0 {
		t.Fatal("zerostat sent nothing")
	}
	if dd := got["datadog"].bytes; zs*10 > dd {
		t.Errorf("zerostat %d bytes, datadog-go without aggregation %d: want at least 10x fewer", zs, dd)
	}
	for _, n := range []string{"datadog_agg", "datadog_extagg"} {
		if dd := got[n].bytes; zs > dd {
			t.Errorf("zerostat %d bytes, %s %d: want no more", zs, n, dd)
		}
	}
	if r := got["zerostat"]; r.rxBytes != int64(r.bytes) {
		t.Errorf("zerostat: the sink received %d bytes of %d sent", r.rxBytes, r.bytes)
	}
}
