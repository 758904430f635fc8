package otlpgrpc

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	_ "google.golang.org/grpc/encoding/gzip" // the server decompresses
	"google.golang.org/grpc/metadata"
	grpcstats "google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/testca"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// collector is an OTLP/gRPC receiver on 127.0.0.1 that decodes with the
// official types; answer(n) scripts the answer to the n-th call (nil:
// success).
type collector struct {
	colmetricspb.UnimplementedMetricsServiceServer
	addr   string
	answer func(n int) (*colmetricspb.ExportMetricsServiceResponse, error)

	mu       sync.Mutex
	reqs     []*colmetricspb.ExportMetricsServiceRequest
	mds      []metadata.MD
	ok       []*colmetricspb.ExportMetricsServiceRequest // the requests answered with success
	payloads []grpcstats.InPayload                       // as received: lengths before and after decompression
}

// The collector is its server's stats handler, to see the payloads'
// sizes on the wire.
func (c *collector) TagRPC(ctx context.Context, _ *grpcstats.RPCTagInfo) context.Context { return ctx }
func (c *collector) TagConn(ctx context.Context, _ *grpcstats.ConnTagInfo) context.Context {
	return ctx
}
func (c *collector) HandleConn(context.Context, grpcstats.ConnStats) {}
func (c *collector) HandleRPC(_ context.Context, s grpcstats.RPCStats) {
	if p, ok := s.(*grpcstats.InPayload); ok {
		c.mu.Lock()
		c.payloads = append(c.payloads, *p)
		c.mu.Unlock()
	}
}

func newCollector(t *testing.T, answer func(n int) (*colmetricspb.ExportMetricsServiceResponse, error), opts ...grpc.ServerOption) *collector {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{addr: lis.Addr().String(), answer: answer}
	s := grpc.NewServer(append(opts, grpc.StatsHandler(c))...)
	colmetricspb.RegisterMetricsServiceServer(s, c)
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(lis) }()
	t.Cleanup(func() { s.Stop(); <-done })
	return c
}

func (c *collector) Export(ctx context.Context, req *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	c.mu.Lock()
	n := len(c.reqs)
	c.reqs = append(c.reqs, req)
	c.mds = append(c.mds, md)
	c.mu.Unlock()
	resp, err := &colmetricspb.ExportMetricsServiceResponse{}, error(nil)
	if c.answer != nil {
		resp, err = c.answer(n)
	}
	if err == nil {
		c.mu.Lock()
		c.ok = append(c.ok, req)
		c.mu.Unlock()
	}
	return resp, err
}

func (c *collector) got() ([]*colmetricspb.ExportMetricsServiceRequest, []metadata.MD) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reqs, c.mds
}

var (
	keyRoute   = tag.MustNewKey("route")
	fixtureSeq int
)

// fixture registers a Count and a LastValue view and records into them
// (route /a twice, /b once); it returns the views' name prefix and their
// measure.
func fixture(t *testing.T) (string, *stats.Int64Measure) {
	fixtureSeq++
	p := fmt.Sprintf("grpc%d/", fixtureSeq)
	m := stats.Int64(p+"m", "", stats.UnitBytes)
	vs := []*view.View{
		{Name: p + "count", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}},
		{Name: p + "last", Measure: m, Aggregation: view.LastValue()},
	}
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
	for _, r := range []string{"/a", "/b", "/a"} {
		ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, r))
		stats.Record(ctx, m.M(5))
	}
	return p, m
}

// metric returns the named metric of req, or nil.
func metric(req *colmetricspb.ExportMetricsServiceRequest, name string) *metricspb.Metric {
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name == name {
					return m
				}
			}
		}
	}
	return nil
}

// quiet silences the state log of exporters the tests make fail.
var quiet = slog.New(slog.DiscardHandler)

var fastRetry = otlp.Retry{InitialBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}

func TestExport(t *testing.T) {
	p, _ := fixture(t)
	c := newCollector(t, nil)
	e, err := New(otlp.Options{Endpoint: "http://" + c.addr, Compression: otlp.Gzip, Temporality: otlp.Delta,
		Header: map[string][]string{"Authorization": {"Bearer x"}}, Resource: exporter.Resource{ServiceName: "svc"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	conn, _, _ := e.s.connect()
	if err := e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := conn.GetState(); s != connectivity.Shutdown || e.s.conn != nil {
		t.Errorf("connection %v after Stop; want Shutdown, and none open", s)
	}
	reqs, mds := c.got()
	if len(reqs) != 2 { // the export and Stop's (the gauge)
		t.Fatalf("%d requests; want 2", len(reqs))
	}
	c.mu.Lock()
	p0 := c.payloads[0]
	c.mu.Unlock()
	if p0.CompressedLength == 0 || p0.CompressedLength >= p0.Length {
		t.Errorf("payload %d bytes, %d compressed; want gzip", p0.Length, p0.CompressedLength)
	}
	if got := mds[0].Get("authorization"); len(got) != 1 || got[0] != "Bearer x" {
		t.Errorf("metadata %v", mds[0])
	}
	if ua := mds[0].Get("user-agent"); len(ua) != 1 || !strings.HasPrefix(ua[0], userAgent) {
		t.Errorf("user-agent %v", ua)
	}
	res := reqs[0].ResourceMetrics[0].Resource
	if res.Attributes[0].Key != "service.name" || res.Attributes[0].Value.GetStringValue() != "svc" {
		t.Errorf("resource %v", res)
	}
	m := metric(reqs[0], p+"count")
	if m == nil {
		t.Fatalf("no metric %s in %v", p+"count", reqs[0])
	}
	sum := m.GetSum()
	counts := map[string]int64{}
	for _, dp := range sum.GetDataPoints() {
		counts[dp.Attributes[0].Value.GetStringValue()] = dp.GetAsInt()
	}
	if sum.AggregationTemporality != metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA || !sum.IsMonotonic ||
		counts["/a"] != 2 || counts["/b"] != 1 {
		t.Errorf("count metric %v", m)
	}
	if st := e.Stats(); st.Sent != 2 || st.Points != 4 || st.Failures != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestRetryCodes(t *testing.T) {
	fixture(t)
	withInfo := func(c codes.Code, d time.Duration) error {
		st, err := status.New(c, "busy").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(d)})
		if err != nil {
			t.Fatal(err)
		}
		return st.Err()
	}
	for _, tc := range []struct {
		name     string
		first    error // the first answer; then success
		requests int   // calls made by one export
		fails    bool
	}{
		{"unavailable", status.Error(codes.Unavailable, "down"), 2, false},
		{"aborted", status.Error(codes.Aborted, "x"), 2, false},
		{"data loss", status.Error(codes.DataLoss, "x"), 2, false},
		{"exhausted with RetryInfo", withInfo(codes.ResourceExhausted, time.Millisecond), 2, false},
		{"exhausted without RetryInfo", status.Error(codes.ResourceExhausted, "quota"), 1, true},
		{"invalid argument", status.Error(codes.InvalidArgument, "bad"), 1, true},
		{"unauthenticated", status.Error(codes.Unauthenticated, "who"), 1, true},
		{"internal", status.Error(codes.Internal, "x"), 1, true},
		// A RetryInfo delay past the export's deadline: no retry (with
		// the backoff instead, it would have retried at once).
		{"RetryInfo beyond the deadline", withInfo(codes.Unavailable, time.Hour), 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCollector(t, func(n int) (*colmetricspb.ExportMetricsServiceResponse, error) {
				if n == 0 {
					return nil, tc.first
				}
				return &colmetricspb.ExportMetricsServiceResponse{}, nil
			})
			e, err := New(otlp.Options{Endpoint: "http://" + c.addr, Retry: fastRetry, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			defer e.s.close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err = e.Export(ctx)
			if (err != nil) != tc.fails {
				t.Errorf("Export: %v; want failure %v", err, tc.fails)
			}
			if tc.fails && !strings.Contains(err.Error(), "code = "+status.Code(tc.first).String()) {
				t.Errorf("error %v does not say the code %v", err, status.Code(tc.first))
			}
			if reqs, _ := c.got(); len(reqs) != tc.requests {
				t.Errorf("%d calls; want %d", len(reqs), tc.requests)
			}
		})
	}
}

func TestConnectionRefusedIsRetried(t *testing.T) {
	fixture(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now
	e, err := New(otlp.Options{Endpoint: addr, TLS: otlp.TLS{Insecure: true}, Retry: fastRetry,
		Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.s.close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := e.Export(ctx); err == nil || !strings.Contains(err.Error(), "code = Unavailable") {
		t.Errorf("Export: %v; want Unavailable", err)
	}
	if st := e.Stats(); st.Retries == 0 || st.Dropped != 1 {
		t.Errorf("stats %+v; want retries, then the cumulative request dropped", st)
	}
}

func TestPartialSuccess(t *testing.T) {
	fixture(t)
	c := newCollector(t, func(int) (*colmetricspb.ExportMetricsServiceResponse, error) {
		return &colmetricspb.ExportMetricsServiceResponse{PartialSuccess: &colmetricspb.ExportMetricsPartialSuccess{
			RejectedDataPoints: 2, ErrorMessage: "too old"}}, nil
	})
	e, err := New(otlp.Options{Endpoint: "http://" + c.addr, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.s.close()
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := e.Stats(); st.Rejected != 2 || st.Sent != 1 {
		t.Errorf("stats %+v; want 2 rejected of a delivered request", st)
	}
}

// TestTLSFromEnv: mutual TLS with files from the environment, against a
// server that requires a client certificate of the test authority; and
// the insecure switch for a target without a scheme.
func TestTLSFromEnv(t *testing.T) {
	fixture(t)
	ca := testca.New(t)
	c := newCollector(t, nil, grpc.Creds(credentials.NewTLS(ca.ServerTLS(true))))
	t.Setenv(otlp.EnvProtocol, "grpc")
	t.Setenv(otlp.EnvEndpoint, "https://"+c.addr)
	t.Setenv(otlp.EnvCertificate, ca.CAFile)
	t.Setenv(otlp.EnvClientCertificate, ca.ClientCertFile)
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY", ca.ClientKeyFile)
	e, err := New(otlp.Options{FromEnv: true, Retry: otlp.Retry{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatalf("mTLS: %v", err)
	}
	e.s.close()

	// Without the client certificate the server refuses the handshake.
	t.Setenv(otlp.EnvClientCertificate, "")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY", "")
	e, err = New(otlp.Options{FromEnv: true, Retry: otlp.Retry{Disabled: true}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err == nil {
		t.Error("without a client certificate: no error")
	}
	e.s.close()
	if reqs, _ := c.got(); len(reqs) != 1 {
		t.Errorf("%d requests reached the server; want 1", len(reqs))
	}

	// A target without a scheme: TLS unless OTEL_EXPORTER_OTLP_INSECURE.
	plain := newCollector(t, nil)
	t.Setenv(otlp.EnvEndpoint, plain.addr)
	t.Setenv(otlp.EnvCertificate, "")
	t.Setenv(otlp.EnvInsecure, "true")
	e, err = New(otlp.Options{FromEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatalf("insecure: %v", err)
	}
	e.s.close()
}

func TestProtocolChoosesTransport(t *testing.T) {
	t.Setenv(otlp.EnvProtocol, "http/protobuf")
	t.Setenv(otlp.EnvEndpoint, "http://127.0.0.1:4318")
	e, err := New(otlp.Options{FromEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	if e.s != nil || e.URL() != "http://127.0.0.1:4318/v1/metrics" {
		t.Errorf("http/protobuf: sender %v, URL %q; want the HTTP exporter", e.s, e.URL())
	}
	for _, o := range []otlp.Options{
		{Protocol: "http/json"},
		{URL: "http://x/v1/metrics"},
		{Endpoint: "x:1/path"},
		{Header: map[string][]string{"grpc-timeout": {"1S"}}},
		{Compression: 9},
		{Endpoint: "http://127.0.0.1:4317", TLS: otlp.TLS{CAFile: "ca.pem"}},
		{Temporality: otlp.Delta, TemporalityPreference: exporter.PreferDelta},
	} {
		if _, err := New(o); err == nil || !strings.HasPrefix(err.Error(), "otlp: ") {
			t.Errorf("New(%+v): got %v; want an error", o, err)
		}
	}
}

// TestDeltaQueueOverGRPC: delta requests the receiver could not take
// (UNAVAILABLE) are queued by the shared pipeline and delivered, oldest
// first, once it answers: the counts add up exactly.
func TestDeltaQueueOverGRPC(t *testing.T) {
	p, m := fixture(t)
	c, e, setDown := downCollector(t)
	ctx := context.Background()
	if err := e.Export(ctx); err == nil { // the 3 records: queued
		t.Fatal("export to a receiver that is down: no error")
	}
	ctxA, _ := tag.New(ctx, tag.Upsert(keyRoute, "/a"))
	stats.Record(ctxA, m.M(1)) // one more: a second request
	if err := e.Export(ctx); err == nil {
		t.Fatal("second export: no error")
	}
	if st := e.Stats(); st.Queued != 2 {
		t.Fatalf("stats %+v; want 2 requests queued", st)
	}
	setDown(false)
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	delivered := c.ok
	c.mu.Unlock()
	total := map[string]int64{}
	for _, r := range delivered {
		m := metric(r, p+"count")
		if m == nil {
			continue
		}
		for _, dp := range m.GetSum().GetDataPoints() {
			total[dp.Attributes[0].Value.GetStringValue()] += dp.GetAsInt()
		}
	}
	if len(delivered) != 3 || total["/a"] != 3 || total["/b"] != 1 { // the two queued, Stop's (the gauge only)
		t.Errorf("delivered counts %v; want /a 3, /b 1", total)
	}
	if st := e.Stats(); st.Queued != 0 || st.Dropped != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestRequestMetadataValues: gRPC sends a header value only as printable
// ASCII (or as bytes under a key ending in -bin) and fails every call
// otherwise, so New refuses such a value, naming the header.
func TestRequestMetadataValues(t *testing.T) {
	for _, tc := range []struct {
		h  map[string][]string
		ok bool
	}{
		{map[string][]string{"X-Key": {"printable ~ ASCII"}}, true},
		{map[string][]string{"X-Key-Bin": {"\x00\xff"}}, true},
		{map[string][]string{"X-Key": {"line\nbreak"}}, false},
		{map[string][]string{"X-Key": {"tab\there"}}, false},
		{map[string][]string{"X-Key": {"ünïcode"}}, false},
	} {
		_, err := requestMetadata(tc.h)
		if tc.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), `"X-Key"`) {
			t.Errorf("%q: got %v; want ok %v, or an error naming the header", tc.h, err, tc.ok)
		}
	}
}

// TestExportAfterStopReconnects (issue 41, item 4): requests still queued
// when Stop returns (the receiver was down) are sent by an Export called
// later, as the push pipeline's docs promise: the connection Stop closed is
// opened again. Before, every attempt of that Export failed with
// CANCELLED on the closed connection, retried about 90 times a second
// until its deadline, and sent nothing.
func TestExportAfterStopReconnects(t *testing.T) {
	p, _ := fixture(t)
	c, e, setDown := downCollector(t)
	ctx := context.Background()
	if err := e.Stop(ctx); err == nil || e.Stats().Queued == 0 {
		t.Fatalf("Stop with the receiver down: %v, stats %+v; want the request queued", err, e.Stats())
	}
	setDown(false)
	before, _ := c.got()
	if err := e.Export(ctx); err != nil {
		t.Fatalf("Export after Stop: %v", err)
	}
	after, _ := c.got()
	// The queued request, then the new snapshot (the gauge).
	if st := e.Stats(); st.Queued != 0 || len(after)-len(before) != 2 {
		t.Fatalf("Export after Stop: %d calls, stats %+v; want the queued request and the new snapshot, one call each", len(after)-len(before), st)
	}
	if m := metric(after[len(before)], p+"count"); m == nil {
		t.Error("the queued request did not carry the count")
	}
	if err := e.Stop(ctx); err != nil { // closes the new connection
		t.Fatal(err)
	}
}

// TestEnvWithoutProtocol (issue 42, item 8): with OTEL_EXPORTER_OTLP_PROTOCOL
// unset, otlpgrpc.New reads the endpoint variables as gRPC targets, as its
// docs promise: a metrics endpoint http://host:port, and host:port with
// OTEL_EXPORTER_OTLP_INSECURE=true. Before, the first was refused ("URL
// is for OTLP/HTTP", naming no variable) and the second failed to parse
// as a URL.
func TestEnvWithoutProtocol(t *testing.T) {
	fixture(t)
	c := newCollector(t, nil)
	for _, env := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://" + c.addr},
		{otlp.EnvEndpoint: c.addr, otlp.EnvInsecure: "true"},
	} {
		for k, v := range env {
			t.Setenv(k, v)
		}
		before, _ := c.got()
		e, err := New(otlp.Options{FromEnv: true, Retry: otlp.Retry{Disabled: true}})
		if err != nil {
			t.Fatalf("%v: %v", env, err)
		}
		if err := e.Export(context.Background()); err != nil {
			t.Fatalf("%v: export: %v", env, err)
		}
		if after, _ := c.got(); len(after) != len(before)+1 {
			t.Errorf("%v: %d requests reached the collector; want 1", env, len(after)-len(before))
		}
		e.s.close()
		for k := range env {
			t.Setenv(k, "")
		}
	}
}

// TestEnvErrorsNameTheVariable (issue 42, item 11): a gRPC header value
// gRPC cannot send, TLS files with a plaintext endpoint, and an endpoint
// that is no gRPC target are refused by New with an error naming the
// variable. Before, the first two named an option, and the third was
// accepted at start-up, then every export failed.
func TestEnvErrorsNameTheVariable(t *testing.T) {
	ca := testca.New(t)
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{otlp.EnvEndpoint: "127.0.0.1:4317", otlp.EnvInsecure: "true", otlp.EnvHeaders: "api-key=caf%C3%A9"}, otlp.EnvHeaders},
		{map[string]string{otlp.EnvEndpoint: "http://127.0.0.1:4317", otlp.EnvCertificate: ca.CAFile}, otlp.EnvCertificate},
		{map[string]string{otlp.EnvEndpoint: "::not a target::"}, otlp.EnvEndpoint},
		{map[string]string{otlp.EnvEndpoint: "localhost:notaport"}, otlp.EnvEndpoint},
		// Found by collector/e2e's TestOTLPEnvMatrix: a header gRPC
		// reserves named only the header.
		{map[string]string{otlp.EnvEndpoint: "127.0.0.1:4317", otlp.EnvInsecure: "true", otlp.EnvHeaders: "grpc-timeout=1S"}, otlp.EnvHeaders},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		_, err := New(otlp.Options{FromEnv: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want an error naming %s", tc.env, err, tc.want)
		}
		for k := range tc.env {
			t.Setenv(k, "")
		}
	}
}

// downCollector returns a collector that answers UNAVAILABLE until
// setDown(false), and a delta exporter to it that does not retry.
func downCollector(t *testing.T) (*collector, *Exporter, func(bool)) {
	var mu sync.Mutex
	down := true
	c := newCollector(t, func(int) (*colmetricspb.ExportMetricsServiceResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return nil, status.Error(codes.Unavailable, "restarting")
		}
		return &colmetricspb.ExportMetricsServiceResponse{}, nil
	})
	e, err := New(otlp.Options{Endpoint: "http://" + c.addr, TemporalityPreference: exporter.PreferDelta,
		Retry: otlp.Retry{Disabled: true}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return c, e, func(d bool) { mu.Lock(); down = d; mu.Unlock() }
}

// TestExportExponential: an exponential view reaches a gRPC receiver as
// an ExponentialHistogram the official types decode (the encoder's
// request, shared with OTLP/HTTP), delta: each interval's own values.
func TestExportExponential(t *testing.T) {
	fixtureSeq++
	p := fmt.Sprintf("grpc%d/", fixtureSeq)
	m := stats.Float64(p+"m", "", stats.UnitMilliseconds)
	v := &view.View{Name: p + "exp", Measure: m, Aggregation: view.ExponentialDistribution(0, 0), TagKeys: []tag.Key{keyRoute}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	ctx, _ := tag.New(context.Background(), tag.Upsert(keyRoute, "/a"))
	intervals := [][]float64{{1, 2, 4, 0, -8}, {1e-9, 1e9}, {3}}
	c := newCollector(t, nil)
	e, err := New(otlp.Options{Endpoint: "http://" + c.addr, Temporality: otlp.Delta})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop(context.Background())
	for i, vs := range intervals {
		h := exphist.MustNew(exphist.DefaultMaxSize, exphist.DefaultMaxScale)
		for _, x := range vs {
			stats.Record(ctx, m.M(x))
			h.Record(x)
		}
		var want exphist.Snapshot
		h.Snapshot(&want)
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
		reqs, _ := c.got()
		mt := metric(reqs[len(reqs)-1], p+"exp")
		eh := mt.GetExponentialHistogram()
		if eh == nil || eh.AggregationTemporality != metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA || len(eh.DataPoints) != 1 {
			t.Fatalf("interval %d: %v", i, mt)
		}
		dp := eh.DataPoints[0]
		if dp.Count != want.Count || dp.Scale != want.Scale || dp.ZeroCount != want.ZeroCount ||
			dp.GetPositive().GetOffset() != want.Positive.Offset || !slices.Equal(dp.GetPositive().GetBucketCounts(), want.Positive.Counts) ||
			dp.GetNegative().GetOffset() != want.Negative.Offset || !slices.Equal(dp.GetNegative().GetBucketCounts(), want.Negative.Counts) ||
			dp.GetMin() != want.Min || dp.GetMax() != want.Max || (dp.Sum != nil) != (want.Min >= 0) || dp.GetSum() != want.Sum && dp.Sum != nil ||
			dp.Attributes[0].Value.GetStringValue() != "/a" {
			t.Errorf("interval %d: %v; want %+v", i, dp, want)
		}
	}
}
