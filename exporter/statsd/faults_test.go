package statsd

import (
	"context"
	"errors"
	"fmt"
	"github.com/zerostat/zerostat/internal/testbackend"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/push"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// countFixture is a Count view over many routes, so that an export makes
// several datagrams of max bytes.
type countFixture struct {
	name string
	m    *stats.Int64Measure
	ctxs []context.Context
}

func newCountFixture(t testing.TB, routes int) *countFixture {
	p := fmt.Sprintf("ft%d", seq.Add(1))
	f := &countFixture{name: p + "_n", m: stats.Int64(p+"/m", "", "")}
	register(t, &view.View{Name: p + "/n", Measure: f.m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}})
	for i := range routes {
		f.ctxs = append(f.ctxs, ctxWith(t, tag.Upsert(keyRoute, fmt.Sprintf("/r%03d", i))))
	}
	return f
}

// record records n times on every route.
func (f *countFixture) record(n int) {
	for range n {
		for _, c := range f.ctxs {
			stats.Record(c, f.m.M(1))
		}
	}
}

// total is the sum of the fixture's counters in lines.
func (f *countFixture) total(t testing.TB, ls []line) float64 {
	sum := 0.0
	for k, v := range modelOf(t, ls).counters {
		if strings.HasPrefix(k, f.name+"|") {
			sum += v
		}
	}
	return sum
}

func exportWithin(e *Exporter, d time.Duration) (error, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	began := time.Now()
	err := e.Export(ctx)
	return err, time.Since(began)
}

// freeAddr returns a loopback address on network whose port was free a
// moment ago (testbackend.FreeAddr).
func freeAddr(t testing.TB, network string) string {
	t.Helper()
	return testbackend.FreeAddr(t, network)
}

// TestUDPAgentDown: nothing listens; exports never wait, failures are
// counted; once the agent is up, the next export is delivered.
func TestUDPAgentDown(t *testing.T) {
	f := newCountFixture(t, 40)
	addr := freeAddr(t, "udp")
	e := newExporter(t, Options{Addr: addr, MaxDatagramBytes: 120})
	var failed int
	for range 3 {
		f.record(1)
		err, took := exportWithin(e, 5*time.Second)
		if took > time.Second {
			t.Errorf("export took %v with the agent down; want no waiting", took)
		}
		if err != nil {
			failed++
			if !errors.Is(err, syscallRefused) {
				t.Errorf("export error %v; want connection refused", err)
			}
		}
	}
	st := e.Stats()
	if failed == 0 || st.Dropped == 0 || st.Retries != 0 || st.Queued != 0 {
		t.Errorf("Stats %+v after 3 exports to a closed port: want drops counted, no retry, no queue", st)
	}
	if st.Dropped+st.Sent != st.Requests {
		t.Errorf("Stats %+v: every datagram is sent or dropped", st)
	}
	// The agent comes up on the same port.
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	pc.Close()
	ag := newAgentAt(t, "udp", addr)
	f.record(2)
	export(t, e)
	ls := ag.wait(40)
	if got := f.total(t, ls); got != 80 {
		t.Errorf("after recovery: %v counted; want 80", got)
	}
}

// TestUnixgramAgentDown: the socket does not exist; the export retries
// with backoff until its deadline and drops what it could not send; when
// the agent comes up, and again after it re-creates its socket, exports
// are delivered.
func TestUnixgramAgentDown(t *testing.T) {
	f := newCountFixture(t, 5)
	path := sockPath(t)
	e := newExporter(t, Options{Addr: "unix://" + path, Retry: Retry{InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}})
	f.record(1)
	err, took := exportWithin(e, 300*time.Millisecond)
	if err == nil || took > 2*time.Second {
		t.Fatalf("export to a missing socket: %v after %v; want an error within the deadline", err, took)
	}
	st := e.Stats()
	if st.Retries == 0 || st.Dropped != 1 || st.Queued != 0 {
		t.Errorf("Stats %+v: want retries, the datagram dropped, nothing queued", st)
	}
	ag := newAgentAt(t, "unixgram", path)
	f.record(1)
	export(t, e)
	if got := f.total(t, ag.wait(5)); got != 5 {
		t.Errorf("after the agent came up: %v; want 5 (the first interval's are lost: no queue)", got)
	}
	// The agent re-creates its socket: the exporter's is refused, and
	// dials again within the export.
	ag.close()
	os.Remove(path)
	ag = newAgentAt(t, "unixgram", path)
	f.record(3)
	export(t, e)
	if got := f.total(t, ag.wait(5)); got != 15 {
		t.Errorf("after the agent re-created its socket: %v; want 15", got)
	}
}

// TestStreamAgentDown: a stream transport queues what it could not send
// and sends it first once the agent is back: the totals are exact.
func TestStreamAgentDown(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			f := newCountFixture(t, 30)
			var addr, opt string
			if network == "tcp" {
				addr = freeAddr(t, "tcp")
				opt = "tcp://" + addr
			} else {
				addr = sockPath(t)
				opt = "unixstream://" + addr
			}
			e := newExporter(t, Options{Addr: opt, MaxDatagramBytes: 200, Retry: Retry{InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}})
			f.record(1)
			if err, _ := exportWithin(e, 200*time.Millisecond); err == nil {
				t.Fatal("export with the agent down: no error")
			}
			f.record(2)
			if err, _ := exportWithin(e, 200*time.Millisecond); err == nil {
				t.Fatal("second export with the agent down: no error")
			}
			st := e.Stats()
			if st.Queued == 0 || st.Dropped != 0 {
				t.Fatalf("Stats %+v: want the writes queued, none dropped", st)
			}
			ag := newAgentAt(t, network, addr)
			f.record(4)
			export(t, e)
			ls := ag.wait(3 * 30)
			if got := f.total(t, ls); got != 7*30 {
				t.Errorf("after recovery: %v counted; want %d", got, 7*30)
			}
			if st := e.Stats(); st.Queued != 0 {
				t.Errorf("Stats %+v: queue not flushed", st)
			}
			// The agent restarts: later exports reconnect and deliver.
			ag.close()
			if network == "unix" {
				os.Remove(addr)
			}
			ag = newAgentAt(t, network, addr)
			deadline := time.Now().Add(5 * time.Second)
			for {
				f.record(1)
				exportWithin(e, time.Second)
				time.Sleep(20 * time.Millisecond)
				ag.mu.Lock()
				n := len(ag.lines)
				ag.mu.Unlock()
				if n > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("no line after the agent restarted")
				}
			}
		})
	}
}

// TestStopFlushes: Stop sends what was recorded since the last export,
// within its deadline, whether the agent is up or not.
func TestStopFlushes(t *testing.T) {
	f := newCountFixture(t, 3)
	ag := newAgent(t, "udp", false, 0)
	e, err := New(Options{Addr: ag.addr, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	e.Start()
	f.record(5)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.total(t, ag.wait(3)); got != 15 {
		t.Errorf("Stop sent %v; want 15", got)
	}
	// Again, and an Export after Stop: nothing new to count, no error.
	if err := e.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	// A missing Unix socket: Stop returns by its deadline.
	e2, err := New(Options{Addr: "unixgram://" + sockPath(t), Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	e2.Start()
	f.record(1)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	began := time.Now()
	if err := e2.Stop(ctx2); err == nil {
		t.Error("Stop with the agent down: no error")
	}
	if took := time.Since(began); took > time.Second {
		t.Errorf("Stop took %v; want within its 300 ms deadline", took)
	}
	// Stop before Start.
	e3, _ := New(Options{Addr: ag.addr})
	if err := e3.Stop(context.Background()); err != nil {
		t.Errorf("Stop before Start: %v", err)
	}
}

// partialConn accepts n bytes of the first write, then fails.
type partialConn struct {
	net.Conn
	n      int
	writes [][]byte
}

func (c *partialConn) Write(b []byte) (int, error) {
	c.writes = append(c.writes, append([]byte(nil), b...))
	if c.n >= 0 && len(b) > c.n {
		n := c.n
		c.n = -1
		return n, errors.New("broken pipe")
	}
	return len(b), nil
}
func (c *partialConn) SetWriteDeadline(time.Time) error { return nil }
func (c *partialConn) Close() error                     { return nil }

// TestStreamResume: a write that failed part-way is resumed after its
// last whole line: no line is sent twice, none is lost.
func TestStreamResume(t *testing.T) {
	tc := &conn{ep: endpoint{"tcp", "x"}, kind: "tcp"}
	pc := &partialConn{n: 7}
	tc.c = pc
	r := &push.Request{Body: []byte("a:1|c\nb:2|c\nc:3|c\n"), Sequence: 4, Part: 1}
	if err := tc.send(context.Background(), r); err == nil {
		t.Fatal("no error")
	}
	tc.c, tc.kind = pc, "tcp" // redialled
	if err := tc.send(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if got := string(pc.writes[1]); got != "b:2|c\nc:3|c\n" {
		t.Errorf("resumed with %q; want the lines after the last whole one", got)
	}
}

func TestParseAddr(t *testing.T) {
	for _, c := range []struct{ in, network, addr string }{
		{"", "udp", "127.0.0.1:8125"},
		{"localhost:9125", "udp", "localhost:9125"},
		{"udp://10.0.0.1:1", "udp", "10.0.0.1:1"},
		{"agent", "udp", "agent:8125"},
		{"tcp://127.0.0.1:8125", "tcp", "127.0.0.1:8125"},
		{"unix:///var/run/datadog/dsd.socket", "unix?", "/var/run/datadog/dsd.socket"},
		{"unixgram:///a", "unixgram", "/a"},
		{"unixstream:///a", "unix", "/a"},
	} {
		ep, err := parseAddr(c.in)
		if err != nil || ep.network != c.network || ep.addr != c.addr {
			t.Errorf("parseAddr(%q) = %+v, %v; want %s %s", c.in, ep, err, c.network, c.addr)
		}
	}
	for _, in := range []string{"http://x:1", "unix://", "tcp://nohost"} {
		if _, err := parseAddr(in); err == nil {
			t.Errorf("parseAddr(%q): no error", in)
		}
	}
}

func TestWithEnv(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		in   Options
		addr string
		tags []string
	}{
		{map[string]string{EnvAgentHost: "agent"}, Options{}, "agent:8125", nil},
		{map[string]string{EnvAgentHost: "agent", EnvDogStatsDPort: "9125"}, Options{}, "agent:9125", nil},
		{map[string]string{EnvAgentHost: "agent:7", EnvDogStatsDPort: "9125"}, Options{}, "agent:7", nil},
		{map[string]string{EnvAgentHost: "unix:///s"}, Options{}, "unix:///s", nil},
		{map[string]string{EnvAgentHost: "agent", EnvDogStatsDURL: "udp://dsd"}, Options{}, "dsd:8125", nil},
		{map[string]string{EnvDogStatsDURL: "udp://dsd:1"}, Options{}, "dsd:1", nil},
		{map[string]string{EnvDogStatsDURL: "unix:///var/run/dsd.sock"}, Options{}, "unix:///var/run/dsd.sock", nil},
		{map[string]string{EnvDogStatsDURL: "http://x", EnvAgentHost: "h"}, Options{}, "h:8125", nil},
		{map[string]string{EnvAgentHost: "agent"}, Options{Addr: "tcp://x:1"}, "tcp://x:1", nil},
		{map[string]string{EnvEnv: "prod", EnvService: "api", EnvVersion: "1.2", EnvEntityID: "pod"}, Options{Tags: []string{"team:a"}}, "",
			[]string{"team:a", "dd.internal.entity_id:pod", "env:prod", "service:api", "version:1.2"}},
		{map[string]string{EnvEnv: "prod"}, Options{Tags: []string{"env:dev"}}, "", []string{"env:dev"}},
	} {
		for _, k := range []string{EnvAgentHost, EnvDogStatsDPort, EnvDogStatsDURL, EnvEnv, EnvService, EnvVersion, EnvEntityID} {
			t.Setenv(k, c.env[k])
		}
		o := c.in.WithEnv()
		if o.Addr != c.addr || fmt.Sprint(o.Tags) != fmt.Sprint(c.tags) {
			t.Errorf("env %v: Addr %q Tags %q; want %q %q", c.env, o.Addr, o.Tags, c.addr, c.tags)
		}
	}
}

// TestEncodeAllocs: an export's encoding allocates nothing in steady
// state, for every kind of view and both dialects and modes.
func TestEncodeAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	f := newFixture(t)
	for _, o := range []Options{{}, {Dialect: Plain}, {OpenCensusDatadog: true, Percentiles: []float64{0.5, 0.99}}} {
		o := o
		o.DistributionType = map[Dialect]string{DogStatsD: "d", Plain: "ms"}[o.Dialect]
		o.Tags = []string{"env:prod"}
		e := newEncoder(&o, true, 1432)
		e.views = core.Views
		e.send = func([]byte, int) error { return nil }
		latA, latB := []float64{0.5, 3, 7, 20, 100}, []float64{2} // made once: record keeps them
		round := func() {
			f.record(latA, latB, 10, 20)
			e.encode()
		}
		round()
		round()
		if got := testing.AllocsPerRun(20, round); got != 0 {
			t.Errorf("%+v: %v allocs per export; want 0", o, got)
		}
		e.tracker.Close()
	}
}
