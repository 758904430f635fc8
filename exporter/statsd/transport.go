package statsd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/zerostat/zerostat/exporter/push"
)

// Address prefixes (datadog-go v5's, statsdex.go: UnixAddressPrefix and
// its kin), and tcp:// and udp:// for the IP transports.
const (
	prefixUnix       = "unix://"       // a Unix socket: datagram, or stream if the agent's socket is one
	prefixUnixgram   = "unixgram://"   // a Unix datagram socket
	prefixUnixstream = "unixstream://" // a Unix stream socket
	prefixUDP        = "udp://"
	prefixTCP        = "tcp://"
)

// endpoint is a parsed Options.Addr.
type endpoint struct {
	network string // "udp", "tcp", "unixgram", "unix" (stream), or "unix?" (datagram, else stream)
	addr    string // host:port or a socket path
}

// datagram reports whether the transport sends datagrams (one request per
// datagram, never over MaxDatagramBytes).
func (ep endpoint) datagram() bool {
	return ep.network == "udp" || ep.network == "unixgram" || ep.network == "unix?"
}

// String is the address as Options.Addr writes it.
func (ep endpoint) String() string {
	switch ep.network {
	case "udp":
		return ep.addr
	case "tcp":
		return prefixTCP + ep.addr
	case "unixgram":
		return prefixUnixgram + ep.addr
	case "unix":
		return prefixUnixstream + ep.addr
	}
	return prefixUnix + ep.addr
}

// parseAddr reads Options.Addr (see its documentation).
func parseAddr(s string) (endpoint, error) {
	if s == "" {
		return endpoint{"udp", DefaultAddr}, nil
	}
	for _, p := range []struct{ prefix, network string }{
		{prefixUnixgram, "unixgram"}, {prefixUnixstream, "unix"}, {prefixUnix, "unix?"},
	} {
		if strings.HasPrefix(s, p.prefix) {
			path := s[len(p.prefix):]
			if path == "" {
				return endpoint{}, fmt.Errorf("statsd: Addr %q has no socket path", s)
			}
			return endpoint{p.network, path}, nil
		}
	}
	network := "udp"
	switch {
	case strings.HasPrefix(s, prefixUDP):
		s = s[len(prefixUDP):]
	case strings.HasPrefix(s, prefixTCP):
		network, s = "tcp", s[len(prefixTCP):]
	case strings.Contains(s, "://"):
		return endpoint{}, fmt.Errorf("statsd: Addr %q: unknown scheme (want host:port, udp://, tcp://, unix://, unixgram:// or unixstream://)", s)
	}
	if _, _, err := net.SplitHostPort(s); err != nil {
		if network == "udp" && !strings.Contains(s, ":") && s != "" {
			s = net.JoinHostPort(s, DefaultPort) // as datadog-go: a host alone gets port 8125
		} else {
			return endpoint{}, fmt.Errorf("statsd: Addr %q is not host:port: %w", s, err)
		}
	}
	return endpoint{network, s}, nil
}

// Transport errors.
var (
	// ErrOversized refuses a datagram over MaxDatagramBytes: a single
	// line (a value with its name and tags) larger than the limit. It is
	// dropped and counted (Stats.Dropped), never sent.
	ErrOversized = errors.New("statsd: a line is larger than MaxDatagramBytes: dropped")
)

// conn is the transport: one connection, dialled when needed and after a
// failure. Its methods are called from one goroutine at a time (the
// pipeline's Transport contract).
//
// Failures, by kind of socket:
//   - UDP: a send that fails is dropped and counted, never retried: nothing
//     waits for an agent that is not there. (With the agent's port closed,
//     Linux reports the ICMP refusal of a datagram on a later send, which
//     fails unsent: Stats.Dropped then counts about every other datagram,
//     a lower bound of what was lost.)
//   - Unix datagram: a failed dial or send closes the socket and is
//     retried with the pipeline's backoff (a new socket each time: the
//     agent may have re-created its socket file) within the export; the
//     export's remaining datagrams are then dropped and counted.
//   - Stream (TCP, Unix stream): as Unix datagram, and what could not be
//     sent is queued (Options.MaxQueuedBytes) and sent first by the next
//     export. A write that failed part-way resumes after the last whole
//     line written, so a retry does not send a line twice that the
//     socket took (lines the kernel took but the agent never read are
//     lost: TCP says nothing about them).
type conn struct {
	ep   endpoint
	max  int
	c    net.Conn
	kind string // the network dialled: for "unix?", "unixgram" or "unix"
	// A stream write that failed part-way: request (seq, part) resumes at
	// byte off.
	resumeSeq, resumePart uint64
	resumeOff             int
}

func (t *conn) close() {
	if t.c != nil {
		t.c.Close()
		t.c = nil
	}
}

func (t *conn) dial(ctx context.Context) error {
	if t.c != nil {
		return nil
	}
	var d net.Dialer
	networks := []string{t.ep.network}
	if t.ep.network == "unix?" {
		// datagram first, then stream (datadog-go's guess for unix://).
		networks = []string{"unixgram", "unix"}
		if t.kind != "" {
			networks = []string{t.kind}
		}
	}
	var err error
	for _, n := range networks {
		var c net.Conn
		if c, err = d.DialContext(ctx, n, t.ep.addr); err == nil {
			t.c, t.kind = c, n
			return nil
		}
		if !errors.Is(err, syscall.EPROTOTYPE) {
			break // not a socket of the other type: the agent is not there
		}
	}
	return err
}

// send is the push.Transport.
func (t *conn) send(ctx context.Context, r *push.Request) error {
	body := r.Body
	if t.ep.datagram() && len(body) > t.max {
		return ErrOversized
	}
	if err := t.dial(ctx); err != nil {
		return t.failed(err)
	}
	deadline, _ := ctx.Deadline()
	if deadline.IsZero() {
		deadline = time.Now().Add(DefaultTimeout)
	}
	t.c.SetWriteDeadline(deadline)
	if !t.stream() {
		if _, err := t.c.Write(body); err != nil {
			return t.failed(err)
		}
		return nil
	}
	off := 0
	if t.resumeOff > 0 && t.resumeSeq == r.Sequence && t.resumePart == r.Part {
		off = t.resumeOff
	}
	n, err := t.c.Write(body[off:])
	if err != nil {
		// Resume after the last whole line written.
		if i := lastNewline(body[:off+n]); i >= 0 {
			t.resumeSeq, t.resumePart, t.resumeOff = r.Sequence, r.Part, i+1
		}
		return t.failed(err)
	}
	t.resumeOff = 0
	return nil
}

func lastNewline(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			return i
		}
	}
	return -1
}

func (t *conn) stream() bool { return t.kind == "tcp" || t.kind == "unix" }

// failed closes the connection and says whether to retry: never for UDP
// (nothing waits on an agent that is not listening), with backoff for the
// others.
func (t *conn) failed(err error) error {
	t.close()
	if t.ep.network == "udp" {
		return err
	}
	return push.Retryable(err, 0)
}

// target is the endpoint as logs and errors name it.
func (ep endpoint) target() string {
	if ep.network == "udp" || ep.network == "tcp" {
		return (&url.URL{Scheme: ep.network, Host: ep.addr}).String()
	}
	return ep.String()
}
