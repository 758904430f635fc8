package otlpgrpc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/push"
)

// ExportMethod is the gRPC method every request calls (the OTLP metrics
// service, opentelemetry/proto/collector/metrics/v1).
const ExportMethod = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"

// userAgent prefixes grpc-go's own.
const userAgent = "zerostat-otlp"

// maxRetryDelay caps a server's RetryInfo: an export never waits longer
// than its deadline anyway.
const maxRetryDelay = time.Hour

// Exporter is an OTLP exporter (otlp.Exporter: Start, Export, Stats) whose
// Stop also closes its gRPC connection. Safe for concurrent use.
type Exporter struct {
	*otlp.Exporter
	s *sender // nil: OTLP/HTTP
}

// New returns an exporter configured by opts, sending OTLP/gRPC when the
// protocol (opts.Protocol, or with opts.FromEnv OTEL_EXPORTER_OTLP_PROTOCOL)
// is grpc or unset, OTLP/HTTP (otlp.New) when it is http/protobuf. With
// gRPC:
//
//   - Endpoint is the target: host:port (TLS unless opts.TLS.Insecure),
//     http://host:port (no TLS) or https://host:port (TLS); the default
//     is otlp.DefaultGRPCEndpoint, localhost:4317 without TLS;
//   - opts.TLS's files configure TLS and mTLS as for HTTP;
//   - Header becomes the request metadata (keys lower-cased);
//   - Compression Gzip uses grpc-go's gzip compressor (its default level:
//     GzipLevel is not applied);
//   - URL and Client, HTTP-only, must be unset.
//
// The connection is made lazily (the first export connects). It fails on
// invalid options, naming the option or the variable.
func New(opts otlp.Options) (*Exporter, error) {
	var err error
	if opts.FromEnv {
		// gRPC unless a protocol is set: the endpoint variables are read
		// as gRPC targets.
		if opts, err = opts.WithEnvDefault(otlp.ProtocolGRPC); err != nil {
			return nil, err
		}
	}
	switch opts.Protocol {
	case otlp.ProtocolHTTP:
		e, err := otlp.New(opts)
		if err != nil {
			return nil, err
		}
		return &Exporter{Exporter: e}, nil
	case "", otlp.ProtocolGRPC:
	default:
		return nil, fmt.Errorf("otlp: unsupported Protocol %q (want %s or %s)", opts.Protocol, otlp.ProtocolGRPC, otlp.ProtocolHTTP)
	}
	if opts.URL != "" {
		return nil, errors.New("otlp: URL is for OTLP/HTTP; set Endpoint to the gRPC target")
	}
	if opts.Client != nil {
		return nil, errors.New("otlp: Client is for OTLP/HTTP; configure gRPC's TLS with TLS")
	}
	target, useTLS, err := otlp.GRPCTarget(opts.Endpoint, opts.TLS.Insecure)
	if err != nil {
		return nil, fmt.Errorf("otlp: Endpoint: %w", err)
	}
	md, err := requestMetadata(opts.Header)
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if !useTLS && (opts.TLS.CAFile != "" || opts.TLS.CertFile != "" || opts.TLS.KeyFile != "") {
		return nil, fmt.Errorf("otlp: TLS files are set but Endpoint %q is plaintext (http://, or no scheme with TLS.Insecure)", opts.Endpoint)
	}
	if useTLS {
		cfg, err := opts.TLS.Config()
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(cfg)
	}
	s := &sender{target: target, dialOpts: []grpc.DialOption{grpc.WithTransportCredentials(creds), grpc.WithUserAgent(userAgent)}, md: md}
	if _, _, err := s.connect(); err != nil {
		return nil, fmt.Errorf("otlp: Endpoint %q: %w", opts.Endpoint, err)
	}
	s.callOpts = []grpc.CallOption{grpc.ForceCodecV2(rawCodec{})}
	if opts.Compression == otlp.Gzip {
		s.callOpts = append(s.callOpts, grpc.UseCompressor(gzip.Name))
	}
	e, err := otlp.NewWithSender(opts, target, s.send)
	if err != nil {
		s.close()
		return nil, err
	}
	return &Exporter{Exporter: e, s: s}, nil
}

// Stop stops the exporter (otlp.Exporter.Stop: a final export, queued
// requests first), then closes the gRPC connection. An Export called
// later, for requests still queued, connects again (as the push
// pipeline's docs promise: a later Export sends them), and a later Stop
// closes that connection; a call cut short by the close fails at once,
// never retried.
func (e *Exporter) Stop(ctx context.Context) error {
	err := e.Exporter.Stop(ctx)
	if e.s != nil {
		if cerr := e.s.close(); err == nil && cerr != nil {
			err = fmt.Errorf("otlp: closing the gRPC connection: %w", cerr)
		}
	}
	return err
}

// requestMetadata returns the headers as gRPC metadata: keys lower-cased,
// none that gRPC reserves, and values gRPC sends: printable ASCII, unless
// the key ends in -bin (gRPC refuses every call otherwise).
func requestMetadata(h http.Header) (metadata.MD, error) {
	md := metadata.MD{}
	for k, vs := range h {
		lk := strings.ToLower(k)
		if otlp.GRPCReservedHeader(lk) {
			return nil, fmt.Errorf("otlp: Header sets %s, which gRPC sets", k)
		}
		for _, v := range vs {
			if !otlp.GRPCHeaderValue(lk, v) {
				return nil, fmt.Errorf("otlp: Header %q has a value gRPC cannot send: printable ASCII only (or a key ending in -bin)", k)
			}
		}
		md[lk] = append(md[lk], vs...)
	}
	return md, nil
}

// sender sends requests over its connection, which Stop closes (close)
// and the next call opens again (connect). send is called from one
// goroutine at a time (the push pipeline's), close from Stop's.
type sender struct {
	target   string
	dialOpts []grpc.DialOption
	md       metadata.MD
	callOpts []grpc.CallOption

	mu     sync.Mutex
	conn   *grpc.ClientConn // nil: closed
	closed uint64           // how many connections close closed
}

// connect returns the open connection, making one (lazily connected: no
// I/O here) when there is none, and the count of closed ones.
func (s *sender) connect() (*grpc.ClientConn, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		conn, err := grpc.NewClient(s.target, s.dialOpts...)
		if err != nil {
			return nil, s.closed, err
		}
		s.conn = conn
	}
	return s.conn, s.closed, nil
}

// close closes the connection, if open.
func (s *sender) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close()
	s.conn = nil
	s.closed++
	return err
}

// errClosedByStop is a call's error when Stop closed the connection under
// it: the exporter's own cancellation, never retried (the next Export
// connects again).
var errClosedByStop = errors.New("otlp: the gRPC connection was closed by Stop during the call")

// send makes one Export call with the encoded request and returns the
// encoded response. Its error is wrapped by push.Retryable for the codes
// the OTLP specification calls retryable
// (https://opentelemetry.io/docs/specs/otlp/#failures): CANCELLED,
// DEADLINE_EXCEEDED, ABORTED, OUT_OF_RANGE, UNAVAILABLE, DATA_LOSS, and
// RESOURCE_EXHAUSTED when the server says when to retry, after the
// status's RetryInfo.retry_delay when it has one.
func (s *sender) send(ctx context.Context, body []byte) ([]byte, error) {
	if len(s.md) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, s.md)
	}
	conn, closed, err := s.connect()
	if err != nil {
		return nil, err
	}
	req, resp := rawMessage{b: body}, rawMessage{}
	err = conn.Invoke(ctx, ExportMethod, &req, &resp, s.callOpts...)
	if err == nil {
		return resp.b, nil
	}
	st, _ := status.FromError(err)
	if st.Code() == codes.Canceled && ctx.Err() == nil {
		s.mu.Lock()
		byStop := s.closed != closed
		s.mu.Unlock()
		if byStop {
			return nil, fmt.Errorf("%w: %w", errClosedByStop, err)
		}
	}
	delay, hasInfo := retryDelay(st)
	if retryable(st.Code(), hasInfo) {
		return nil, push.Retryable(err, delay)
	}
	return nil, err
}

// retryable reports whether the OTLP specification allows retrying code.
func retryable(c codes.Code, hasRetryInfo bool) bool {
	switch c {
	case codes.Canceled, codes.DeadlineExceeded, codes.Aborted, codes.OutOfRange, codes.Unavailable, codes.DataLoss:
		return true
	case codes.ResourceExhausted:
		// "the server MAY ... [send] RetryInfo ... the client SHOULD
		// retry only if the server did": without it the limit is not
		// temporary.
		return hasRetryInfo
	}
	return false
}

// retryDelay returns the status's RetryInfo.retry_delay (capped), and
// whether it has a RetryInfo.
func retryDelay(st *status.Status) (time.Duration, bool) {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			delay := ri.GetRetryDelay().AsDuration()
			return min(max(delay, 0), maxRetryDelay), true
		}
	}
	return 0, false
}

// rawMessage is an already encoded protobuf message: the codec passes its
// bytes through.
type rawMessage struct{ b []byte }

// rawCodec sends and receives rawMessages as they are: the exporter's
// encoder has written the ExportMetricsServiceRequest, so no protobuf
// structs are built. Its name is "proto", the content-subtype receivers
// expect (application/grpc+proto).
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(*rawMessage)
	if !ok {
		return nil, fmt.Errorf("otlpgrpc: cannot marshal %T", v)
	}
	// SliceBuffer does not return the bytes to a pool: they stay the
	// encoder's, and are not used after the call returns.
	return mem.BufferSlice{mem.SliceBuffer(m.b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(*rawMessage)
	if !ok {
		return fmt.Errorf("otlpgrpc: cannot unmarshal into %T", v)
	}
	m.b = data.Materialize() // a copy: data is freed when this returns
	return nil
}
