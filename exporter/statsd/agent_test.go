package statsd

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// This file is an in-process fake agent: listeners for every transport
// that keep what they receive, and a strict parser of the lines with a
// model of what an agent makes of them. Every unit test reads the
// exporter's output through it, so a line that a real server would
// misread fails here first.

// line is one parsed line.
type line struct {
	name   string
	values []string // one, or several (a multi-value line)
	typ    string
	rate   float64 // 0: none
	tags   []string
	raw    string
}

var (
	reName      = regexp.MustCompile(`^[A-Za-z0-9_.]+$`)
	rePlainName = regexp.MustCompile(`^[A-Za-z0-9_.\-]+$`)
	reKey       = regexp.MustCompile(`^[A-Za-z0-9_./\-]+$`)
	reRate      = regexp.MustCompile(`^[0-9]*\.?[0-9]+$`) // Etsy's ^@([\d\.]+), no exponent
	reValue     = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?(e[-+][0-9]+)?$`)
)

// parseLine parses one line strictly: a name of the documented alphabet,
// values that are plain numbers (no sign but '-', no NaN or Inf), one
// known type, a positional rate in (0, 1], tags key:value with a key of
// the documented alphabet and no ',' '|' or control character in the
// value. plain: no tags, no multi-value, the folded name's alphabet.
func parseLine(s string, plain bool) (line, error) {
	l := line{raw: s}
	if s == "" {
		return l, errors.New("empty line")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return l, fmt.Errorf("control character %q in %q", s[i], s)
		}
	}
	colon := strings.IndexByte(s, ':')
	if colon <= 0 {
		return l, fmt.Errorf("no name in %q", s)
	}
	l.name = s[:colon]
	re := reName
	if plain {
		re = rePlainName
	}
	if !re.MatchString(l.name) {
		return l, fmt.Errorf("name %q has a character outside the documented set", l.name)
	}
	fields := strings.Split(s[colon+1:], "|")
	if len(fields) < 2 {
		return l, fmt.Errorf("no type in %q", s)
	}
	l.values = strings.Split(fields[0], ":")
	for _, v := range l.values {
		if !reValue.MatchString(v) {
			return l, fmt.Errorf("value %q in %q", v, s)
		}
	}
	l.typ = fields[1]
	switch l.typ {
	case "c", "g":
		if len(l.values) > 1 {
			return l, fmt.Errorf("multi-value %s line %q", l.typ, s)
		}
	case "ms", "h", "d":
		if plain && len(l.values) > 1 {
			return l, fmt.Errorf("multi-value plain line %q", s)
		}
	default:
		return l, fmt.Errorf("type %q in %q", l.typ, s)
	}
	for _, f := range fields[2:] {
		switch {
		case strings.HasPrefix(f, "@") && l.rate == 0 && l.tags == nil:
			if !reRate.MatchString(f[1:]) {
				return l, fmt.Errorf("rate %q in %q", f, s)
			}
			r, err := strconv.ParseFloat(f[1:], 64)
			if err != nil || !(r > 0 && r < 1) {
				return l, fmt.Errorf("rate %q in %q", f, s)
			}
			l.rate = r
		case strings.HasPrefix(f, "#") && l.tags == nil && !plain:
			for _, t := range strings.Split(f[1:], ",") {
				k, v, ok := strings.Cut(t, ":") // a tag may be a key alone
				if !reKey.MatchString(k) || ok && v == "" {
					return l, fmt.Errorf("tag %q in %q", t, s)
				}
				l.tags = append(l.tags, t)
			}
		default:
			return l, fmt.Errorf("field %q in %q", f, s)
		}
	}
	return l, nil
}

// weight is how many observations a value of l stands for: 1/rate, which
// must be an integer exactly (what every server then counts).
func (l line) weight() (int64, error) {
	if l.rate == 0 {
		return 1, nil
	}
	w := 1 / l.rate
	n := int64(w) // statsd_exporter truncates
	if float64(n) != w {
		// floorRate's counts: within 1e-15, truncating to n.
		if (w-float64(n))/w > 1e-14 {
			return 0, fmt.Errorf("rate %v of %q is not 1/n", l.rate, l.raw)
		}
	}
	return n, nil
}

// key is a series: name and sorted tags.
func (l line) key() string {
	t := slices.Clone(l.tags)
	slices.Sort(t)
	return l.name + "|" + strings.Join(t, ",")
}

// model is what an agent holds after reading lines: counters summed,
// gauges set (a signed value changes it, as Etsy statsd and
// statsd_exporter read it), distributions as value → count.
type model struct {
	counters map[string]float64
	gauges   map[string]float64
	dists    map[string]map[float64]int64
	types    map[string]string
}

func newModel() *model {
	return &model{counters: map[string]float64{}, gauges: map[string]float64{},
		dists: map[string]map[float64]int64{}, types: map[string]string{}}
}

func (m *model) add(l line) error {
	k := l.key()
	if t, ok := m.types[k]; ok && t != l.typ {
		return fmt.Errorf("%s sent as %s and %s", k, t, l.typ)
	}
	m.types[k] = l.typ
	w, err := l.weight()
	if err != nil {
		return err
	}
	for _, s := range l.values {
		v, _ := strconv.ParseFloat(s, 64)
		switch l.typ {
		case "c":
			m.counters[k] += v * float64(w)
		case "g":
			if s[0] == '-' || s[0] == '+' {
				m.gauges[k] += v
			} else {
				m.gauges[k] = v
			}
		default:
			if m.dists[k] == nil {
				m.dists[k] = map[float64]int64{}
			}
			m.dists[k][v] += w
		}
	}
	return nil
}

// agent is a fake agent on one transport.
type agent struct {
	t        testing.TB
	network  string
	addr     string // what Options.Addr takes
	plain    bool
	max      int // largest datagram allowed (0: stream)
	mu       sync.Mutex
	packets  []string // datagrams, or stream lines
	lines    []line
	errs     []error
	closer   func()
	received chan struct{}
}

// newAgent listens on network ("udp", "unixgram", "tcp", "unix") on
// loopback or in a temporary directory.
func newAgent(t testing.TB, network string, plain bool, max int) *agent {
	return listenAgent(t, network, "", plain, max)
}

// newAgentAt listens at addr (host:port or a socket path).
func newAgentAt(t testing.TB, network, addr string) *agent {
	return listenAgent(t, network, addr, false, 0)
}

func listenAgent(t testing.TB, network, at string, plain bool, max int) *agent {
	t.Helper()
	a := &agent{t: t, network: network, plain: plain, max: max, received: make(chan struct{}, 1<<16)}
	switch network {
	case "udp", "unixgram":
		var pc net.PacketConn
		var err error
		if network == "udp" {
			if at == "" {
				at = "127.0.0.1:0"
			}
			pc, err = net.ListenPacket("udp", at)
			if err == nil {
				a.addr = pc.LocalAddr().String()
			}
		} else {
			if at == "" {
				at = sockPath(t)
			}
			pc, err = net.ListenPacket("unixgram", at)
			a.addr = "unixgram://" + at
		}
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := pc.(*net.UDPConn); ok {
			u.SetReadBuffer(8 << 20)
		}
		if u, ok := pc.(*net.UnixConn); ok {
			u.SetReadBuffer(8 << 20)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, 1<<16)
			for {
				n, _, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				a.datagram(string(buf[:n]))
			}
		}()
		a.closer = func() { pc.Close(); <-done }
	case "tcp", "unix":
		var ln net.Listener
		var err error
		if network == "tcp" {
			if at == "" {
				at = "127.0.0.1:0"
			}
			ln, err = net.Listen("tcp", at)
			if err == nil {
				a.addr = "tcp://" + ln.Addr().String()
			}
		} else {
			if at == "" {
				at = sockPath(t)
			}
			ln, err = net.Listen("unix", at)
			a.addr = "unixstream://" + at
		}
		if err != nil {
			t.Fatal(err)
		}
		a.serve(ln)
	default:
		t.Fatalf("network %q", network)
	}
	t.Cleanup(a.close)
	return a
}

// serve reads newline-framed lines from each connection of ln.
func (a *agent) serve(ln net.Listener) {
	var wg sync.WaitGroup
	var cmu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			cmu.Lock()
			conns = append(conns, c)
			cmu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				sc := bufio.NewScanner(c)
				sc.Buffer(make([]byte, 1<<16), 1<<20)
				for sc.Scan() {
					a.streamLine(sc.Text())
				}
			}()
		}
	}()
	a.closer = func() {
		ln.Close()
		cmu.Lock()
		for _, c := range conns {
			c.Close()
		}
		cmu.Unlock()
		wg.Wait()
	}
}

func (a *agent) close() {
	if a.closer != nil {
		a.closer()
		a.closer = nil
	}
}

var syscallRefused = syscall.ECONNREFUSED

func sockPath(t testing.TB) string {
	// A short directory: a socket path has at most 107 bytes.
	dir, err := os.MkdirTemp("", "zs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "dsd.sock")
}

func (a *agent) datagram(p string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.packets = append(a.packets, p)
	if a.max > 0 && len(p) > a.max {
		a.errs = append(a.errs, fmt.Errorf("datagram of %d bytes > %d", len(p), a.max))
	}
	if strings.HasSuffix(p, "\n") {
		a.errs = append(a.errs, fmt.Errorf("datagram ends with a newline: %q", p))
	}
	for _, s := range strings.Split(p, "\n") {
		a.parse(s)
	}
	a.received <- struct{}{}
}

func (a *agent) streamLine(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.packets = append(a.packets, s)
	a.parse(s)
	a.received <- struct{}{}
}

func (a *agent) parse(s string) {
	l, err := parseLine(s, a.plain)
	if err != nil {
		a.errs = append(a.errs, err)
		return
	}
	a.lines = append(a.lines, l)
}

// wait waits until the agent has n lines (or fails after 10 s), and
// checks that every line parsed.
func (a *agent) wait(n int) []line {
	a.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		a.mu.Lock()
		got, errs := len(a.lines), slices.Clone(a.errs)
		a.mu.Unlock()
		if len(errs) > 0 {
			a.t.Fatalf("agent on %s: %v", a.network, errors.Join(errs...))
		}
		if got >= n {
			a.mu.Lock()
			defer a.mu.Unlock()
			return slices.Clone(a.lines)
		}
		select {
		case <-a.received:
		case <-deadline:
			a.t.Fatalf("agent on %s: %d lines after 10 s; want %d", a.network, got, n)
		}
	}
}

// take returns the lines received so far and forgets them.
func (a *agent) take() []line {
	a.t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.errs) > 0 {
		a.t.Fatalf("agent on %s: %v", a.network, errors.Join(a.errs...))
	}
	ls := a.lines
	a.lines, a.packets = nil, nil
	return ls
}

func (a *agent) datagrams() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.packets)
}

// modelOf reads lines into a model, failing the test on a line no agent
// would take.
func modelOf(t testing.TB, ls []line) *model {
	t.Helper()
	m := newModel()
	for _, l := range ls {
		if err := m.add(l); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func TestParseLineStrict(t *testing.T) {
	for _, s := range []string{
		"a:1|c", "a.b_c:1.5|g", "a:-2|g", "a:1:2:3|d|@0.5|#k:v,k2:v:w@#", "a:1e-07|ms", "a:3|h|@0.01",
	} {
		if _, err := parseLine(s, false); err != nil {
			t.Errorf("parseLine(%q): %v", s, err)
		}
	}
	for _, s := range []string{
		"", "a", "a:1", "a:1|x", "a b:1|c", "a:1:2|c", "a:1|c|@1e-1", "a:1|c|@2", "a:NaN|g", "a:+Inf|g",
		"a:1|c|#k:", "a:1|c|#:v", "a:1|c|#k:v|@0.5", "a:1|c|x", "a:1\r|c", "a|b:1|c",
	} {
		if _, err := parseLine(s, false); err == nil {
			t.Errorf("parseLine(%q): no error", s)
		}
	}
	if _, err := parseLine("a:1|c|#k:v", true); err == nil {
		t.Error("plain line with tags: no error")
	}
	if _, err := parseLine("a:1:2|ms", true); err == nil {
		t.Error("plain multi-value line: no error")
	}
}
