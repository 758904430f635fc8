package otlp

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/internal/testca"
)

// setenv sets the variables for the test (t.Setenv: not parallel).
func setenv(t *testing.T, kv ...string) {
	for i := 0; i < len(kv); i += 2 {
		t.Setenv(kv[i], kv[i+1])
	}
}

func TestWithEnv(t *testing.T) {
	setenv(t,
		EnvEndpoint, "http://generic:4318",
		EnvHeaders, "api-key=generic",
		EnvTimeout, "9000",
		metricsVar(EnvHeaders), "Api-Key=se%3Dcret%2C1 , x-tenant=a%20b, authorization=env",
		metricsVar(EnvTimeout), "2500",
		EnvCompression, "gzip",
		EnvTemporality, "delta",
		EnvMetricExportPeriod, "60000",
		exporter.EnvServiceName, "svc",
	)
	o, err := Options{FromEnv: true, Header: http.Header{"Authorization": {"Bearer code"}}}.WithEnv()
	if err != nil {
		t.Fatal(err)
	}
	if o.Endpoint != "http://generic:4318" || o.URL != "" || o.Protocol != "" || o.FromEnv {
		t.Errorf("endpoint %q, URL %q, protocol %q, FromEnv %v; want the generic base URL", o.Endpoint, o.URL, o.Protocol, o.FromEnv)
	}
	h := o.Header
	if h.Get("Api-Key") != "se=cret,1" || h.Get("X-Tenant") != "a b" || strings.Join(h.Values("Authorization"), ";") != "Bearer code" {
		t.Errorf("headers %v; want the metrics variable's, percent-decoded, and the code's Authorization", h)
	}
	// TIMEOUT bounds the whole export (ExportTimeout), not each attempt.
	if o.ExportTimeout != 2500*time.Millisecond || o.Timeout != 0 || o.Compression != Gzip || o.TemporalityPreference != exporter.PreferDelta ||
		o.Interval != time.Minute || o.Resource.ServiceName != "svc" {
		t.Errorf("export timeout %v, timeout %v, compression %v, preference %v, interval %v, resource %+v", o.ExportTimeout, o.Timeout, o.Compression,
			o.TemporalityPreference, o.Interval, o.Resource)
	}

	// The metrics endpoint is used as is; code wins over the environment.
	t.Setenv(EnvMetricsEndpoint, "https://specific:4318/custom/path")
	if o, err = (Options{}).WithEnv(); err != nil || o.URL != "https://specific:4318/custom/path" || o.Endpoint != "" {
		t.Errorf("got %q, %q, %v; want the metrics endpoint as URL", o.Endpoint, o.URL, err)
	}
	code := Options{Endpoint: "http://code:1", ExportTimeout: time.Second, Interval: time.Second, Temporality: Delta}
	if o, err = code.WithEnv(); err != nil || o.Endpoint != "http://code:1" || o.URL != "" || o.ExportTimeout != time.Second ||
		o.Interval != time.Second || o.TemporalityPreference != exporter.PreferCumulative {
		t.Errorf("got %+v, %v; want the code's options", o, err)
	}

	// gRPC: either endpoint is the target.
	t.Setenv(EnvProtocol, "grpc")
	t.Setenv(EnvMetricsEndpoint, "")
	if o, err = (Options{}).WithEnv(); err != nil || o.Protocol != ProtocolGRPC || o.Endpoint != "http://generic:4318" || o.URL != "" {
		t.Errorf("grpc: got protocol %q, endpoint %q, URL %q, %v", o.Protocol, o.Endpoint, o.URL, err)
	}
	if _, err := New(Options{FromEnv: true}); err == nil || !strings.Contains(err.Error(), "otlpgrpc") {
		t.Errorf("New with protocol grpc: got %v; want an error pointing to otlpgrpc", err)
	}
}

func TestEnvNotReadWithoutFromEnv(t *testing.T) {
	setenv(t, EnvEndpoint, "http://env:1", EnvProtocol, "grpc", EnvHeaders, "x=1", exporter.EnvServiceName, "env")
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.URL() != "http://localhost:4318/v1/metrics" || e.opts.Header != nil || e.opts.Resource.ServiceName != "" {
		t.Errorf("without FromEnv: URL %q, header %v, resource %+v; want the defaults", e.URL(), e.opts.Header, e.opts.Resource)
	}
}

func TestWithEnvErrors(t *testing.T) {
	for _, tc := range [][2]string{
		{EnvEndpoint, "ftp://x"},
		{EnvEndpoint, "http://x/?q=1"},
		{EnvMetricsEndpoint, "localhost:4318"},
		{EnvHeaders, "novalue"},
		{metricsVar(EnvHeaders), "a=%zz"},
		{EnvHeaders, "bad key=1"},
		{EnvHeaders, "api-key=abc%0Adef"}, // a control character: net/http would refuse every request
		{metricsVar(EnvHeaders), "x=%7F"},
		{EnvCertificate, "/nonexistent/ca.pem"},
		{metricsVar(EnvClientKey), "/nonexistent/key.pem"},
		{exporter.EnvResourceAttributes, "a"},
		// Found by collector/e2e's TestOTLPEnvMatrix, each refused
		// without naming its variable before:
		{EnvProtocol, "grpc"},          // otlp.New sends OTLP/HTTP
		{EnvHeaders, "Content-Type=x"}, // a header the exporter sets
	} {
		t.Run(tc[0]+"="+tc[1], func(t *testing.T) {
			t.Setenv(tc[0], tc[1])
			_, err := New(Options{FromEnv: true})
			if err == nil || !strings.Contains(err.Error(), tc[0]) || !strings.HasPrefix(err.Error(), "otlp: ") {
				t.Errorf("got %v; want an error naming %s", err, tc[0])
			}
		})
	}
	// A header value is not quoted in the error: it may be a credential.
	for _, tc := range [][2]string{
		{"api-key=sec%0Dret", `header "api-key" has a control character`},
		{"api-key=sec%zzret", `member 1 (key "api-key"): the value has an invalid percent-escape`},
		{"x=1,Bearer secret", "member 2 has no '='"},
		{"=secret", "member 1 has an empty key"},
	} {
		t.Setenv(EnvHeaders, tc[0])
		if _, err := New(Options{FromEnv: true}); err == nil || !strings.Contains(err.Error(), tc[1]) || strings.Contains(err.Error(), "sec") {
			t.Errorf("%s=%q: got %v; want an error saying %q, without the value", EnvHeaders, tc[0], err, tc[1])
		}
	}
	t.Setenv(EnvHeaders, "")
	for _, v := range []string{"a\nb", "\x00", "x\x7f"} {
		if _, err := New(Options{Endpoint: "http://127.0.0.1:4318", Header: map[string][]string{"Api-Key": {v}}}); err == nil || !strings.Contains(err.Error(), `Header "Api-Key" has a value with a control character`) {
			t.Errorf("Header Api-Key=%q: got %v; want an error naming it", v, err)
		}
	}
	if _, err := New(Options{Endpoint: "http://127.0.0.1:4318", Header: map[string][]string{"Api-Key": {"tab\tand ünïcode"}}}); err != nil {
		t.Errorf("a tab and UTF-8 in a header value: %v; want them sent (net/http does)", err)
	}
	// The gRPC target is checked with the grpc protocol.
	setenv(t, EnvProtocol, "grpc", EnvEndpoint, "collector:4317/path")
	if _, err := (Options{}).WithEnv(); err == nil || !strings.Contains(err.Error(), EnvEndpoint) {
		t.Errorf("got %v; want an error naming %s", err, EnvEndpoint)
	}
}

func TestEnvEndpointAndHeadersReachTheReceiver(t *testing.T) {
	f := newFixture(t)
	f.record(t, "/a", "200", 3, 4)
	s := newServer(t, nil)
	setenv(t, EnvEndpoint, s.URL+"/base/", EnvHeaders, "api-key=se%3Dcret")
	e, err := New(Options{FromEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvMetricsEndpoint, s.URL+"/custom")
	e2, err := New(Options{FromEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := e2.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, hdrs, _ := s.got()
	if e.URL() != s.URL+"/base/v1/metrics" || e2.URL() != s.URL+"/custom" || len(hdrs) != 2 || hdrs[0].Get("Api-Key") != "se=cret" {
		t.Errorf("URLs %q, %q; headers %v", e.URL(), e2.URL(), hdrs)
	}
}

func TestMetricsURL(t *testing.T) {
	for _, tc := range []struct{ endpoint, full, want string }{
		{"", "", "http://localhost:4318/v1/metrics"},
		{"http://h:1/", "", "http://h:1/v1/metrics"},
		{"", "http://h:1", "http://h:1/"},
		{"", "http://h:1/x/v1/metrics", "http://h:1/x/v1/metrics"},
	} {
		if got, err := metricsURL(tc.endpoint, tc.full); err != nil || got != tc.want {
			t.Errorf("metricsURL(%q, %q) = %q, %v; want %q", tc.endpoint, tc.full, got, err, tc.want)
		}
	}
	if _, err := New(Options{Endpoint: "http://a", URL: "http://b"}); err == nil {
		t.Error("Endpoint and URL both set: no error")
	}
}

func TestGRPCTarget(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		insecure bool
		target   string
		tls      bool
	}{
		{"", false, "localhost:4317", false},
		{"collector:4317", false, "collector:4317", true},
		{"collector:4317", true, "collector:4317", false},
		{"https://collector", true, "collector:4317", true},
		{"http://10.0.0.1:9000/ignored", false, "10.0.0.1:9000", false},
	} {
		target, useTLS, err := GRPCTarget(tc.endpoint, tc.insecure)
		if err != nil || target != tc.target || useTLS != tc.tls {
			t.Errorf("GRPCTarget(%q, %v) = %q, %v, %v; want %q, %v", tc.endpoint, tc.insecure, target, useTLS, err, tc.target, tc.tls)
		}
	}
	for _, bad := range []string{"unix:///x", "a:1/b", "http://"} {
		if _, _, err := GRPCTarget(bad, false); err == nil {
			t.Errorf("GRPCTarget(%q): no error", bad)
		}
	}
}

// TestTLS exports to a receiver that requires a client certificate
// signed by a test authority: with the CA and the client's files it
// succeeds (from options and from the environment); without the client
// certificate, or verifying against another authority, it fails.
func TestTLS(t *testing.T) {
	ca := testca.New(t)
	f := newFixture(t)
	f.record(t, "/a", "200", 3, 4)
	gotCN := make(chan string, 8)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) > 0 {
			gotCN <- r.TLS.PeerCertificates[0].Subject.CommonName
		}
	}))
	s.TLS = ca.ServerTLS(true)
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	s.StartTLS()
	defer s.Close()
	export := func(o Options) error {
		o.Retry = Retry{Disabled: true}
		if o.Endpoint == "" {
			o.Endpoint = s.URL
		}
		e, err := New(o)
		if err != nil {
			return err
		}
		return e.Export(context.Background())
	}
	mtls := TLS{CAFile: ca.CAFile, CertFile: ca.ClientCertFile, KeyFile: ca.ClientKeyFile}
	if err := export(Options{TLS: mtls}); err != nil {
		t.Fatalf("mTLS: %v", err)
	}
	if cn := <-gotCN; cn != testca.ClientCN {
		t.Errorf("client CN %q; want %q", cn, testca.ClientCN)
	}
	if err := export(Options{TLS: TLS{CAFile: ca.CAFile}}); err == nil {
		t.Error("without a client certificate: no error")
	}
	if err := export(Options{TLS: TLS{CAFile: ca.OtherCAFile, CertFile: ca.ClientCertFile, KeyFile: ca.ClientKeyFile}}); err == nil {
		t.Error("verified against another authority: no error")
	}
	if err := export(Options{}); err == nil {
		t.Error("with the system's authorities: no error")
	}

	setenv(t, EnvCertificate, ca.CAFile, metricsVar(EnvClientCertificate), ca.ClientCertFile, EnvClientKey, ca.ClientKeyFile)
	if err := export(Options{FromEnv: true}); err != nil {
		t.Fatalf("mTLS from the environment: %v", err)
	}
	if cn := <-gotCN; cn != testca.ClientCN {
		t.Errorf("client CN %q; want %q", cn, testca.ClientCN)
	}

	// Option errors.
	for _, o := range []Options{
		{TLS: TLS{CertFile: ca.ClientCertFile}},
		{TLS: TLS{CAFile: ca.ClientKeyFile}},
		{TLS: TLS{CertFile: ca.ClientCertFile, KeyFile: ca.ServerKeyFile}},
		{TLS: mtls, Client: &http.Client{}},
		{TLS: mtls, Endpoint: "http://127.0.0.1:4318"},
		{Header: http.Header{"Bad Name": {"x"}}},
	} {
		if o.Endpoint == "" {
			o.Endpoint = s.URL // https: only the TLS options are wrong
		}
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), "otlp: ") {
			t.Errorf("New(%+v): got %v; want an error", o.TLS, err)
		}
	}
	cfg, err := mtls.Config()
	if err != nil || cfg.MinVersion != tls.VersionTLS12 || len(cfg.Certificates) != 1 || cfg.RootCAs == nil {
		t.Errorf("Config() = %+v, %v", cfg, err)
	}
}

// TestTemporalityPreference: under the delta preference, sums and
// histograms are sent delta and the gauge as it is (a Gauge has no
// temporality), unchanged series of the counters left out.
func TestTemporalityPreference(t *testing.T) {
	f := newFixture(t)
	f.record(t, "/a", "200", 3, 4)
	for _, p := range []exporter.TemporalityPreference{exporter.PreferDelta, exporter.PreferLowMemory} {
		s := newServer(t, nil)
		e, err := New(Options{Endpoint: s.URL, TemporalityPreference: p})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := e.Export(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		bodies, _, _ := s.got()
		if len(bodies) != 2 {
			t.Fatalf("%v: %d requests; want 2", p, len(bodies))
		}
		d := decodeRequest(t, bodies[0])
		for _, name := range []string{"count", "sum", "dist"} {
			if m := f.metric(t, d, name); m.temporality != temporalityDelta {
				t.Errorf("%v: %s temporality %d; want delta", p, name, m.temporality)
			}
		}
		if m := f.metric(t, d, "last"); m.kind != "gauge" || len(m.points) != 1 {
			t.Errorf("%v: last is %s with %d points; want a gauge with 1", p, m.kind, len(m.points))
		}
		d = decodeRequest(t, bodies[1]) // nothing new: the gauge only
		if _, ok := d.metrics[f.prefix+"count"]; ok || len(d.metrics) != 1 {
			t.Errorf("%v: second export has %d metrics; want the gauge only", p, len(d.metrics))
		}
		if st := e.Stats(); st.Queued != 0 {
			t.Errorf("stats %+v", st)
		}
	}
	if _, err := New(Options{Temporality: Delta, TemporalityPreference: exporter.PreferDelta}); err == nil {
		t.Error("Temporality Delta with a preference: no error")
	}
}

// TestWithEnvIgnoresUnrecognisedValues (issue 42, item 10): an enum, number
// or boolean value the exporter does not recognise is logged as a warning
// naming the variable and the value, and ignored: New succeeds with the
// default, as the specification says (MUST for enums, SHOULD for the
// others). Before, each made New fail and the service exported nothing.
// Values that cannot be ignored safely still fail (TestWithEnvErrors).
func TestWithEnvIgnoresUnrecognisedValues(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		check       func(*Exporter) bool
	}{
		{EnvProtocol, "foo", func(e *Exporter) bool { return e.URL() == "http://localhost:4318/v1/metrics" }},
		{EnvProtocol, "http/json", func(e *Exporter) bool { return e.URL() == "http://localhost:4318/v1/metrics" }},
		{EnvTimeout, "abc", func(e *Exporter) bool { return e.opts.ExportTimeout == 0 }},
		{EnvTimeout, "10s", func(e *Exporter) bool { return e.opts.ExportTimeout == 0 }},
		{metricsVar(EnvTimeout), "0", func(e *Exporter) bool { return e.opts.ExportTimeout == 0 }},
		{EnvCompression, "br", func(e *Exporter) bool { return e.opts.Compression == NoCompression }},
		{metricsVar(EnvCompression), "zstd", func(e *Exporter) bool { return e.opts.Compression == NoCompression }},
		{EnvInsecure, "yes", func(e *Exporter) bool { return !e.opts.TLS.Insecure }},
		{EnvTemporality, "foo", func(e *Exporter) bool { return e.opts.TemporalityPreference == exporter.PreferCumulative }},
		{EnvMetricExportPeriod, "-1", func(e *Exporter) bool { return e.opts.Interval == exporter.DefaultInterval }},
		{EnvMetricExportPeriod, "1m", func(e *Exporter) bool { return e.opts.Interval == exporter.DefaultInterval }},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.name, tc.value)
			var log bytes.Buffer
			e, err := New(Options{FromEnv: true, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if err != nil {
				t.Fatalf("New: %v; want the value ignored", err)
			}
			if !tc.check(e) {
				t.Errorf("options %+v; want the default", e.opts)
			}
			if l := log.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, tc.name) || !strings.Contains(l, tc.value) {
				t.Errorf("log %q; want a warning naming %s and %q", l, tc.name, tc.value)
			}
		})
	}
	// OTEL_EXPORTER_OTLP_PROTOCOL is matched as the other enums: in any case.
	t.Setenv(EnvProtocol, "HTTP/Protobuf")
	if o, err := (Options{}).WithEnv(); err != nil || o.Protocol != ProtocolHTTP {
		t.Errorf("HTTP/Protobuf: %q, %v; want %s", o.Protocol, err, ProtocolHTTP)
	}
}

// TestHistogramAggregationEnv (issue 42, item 14; issue 45):
// explicit_bucket_histogram and base2_exponential_bucket_histogram (in any
// case) are read silently: a view's aggregation is its own, and the otel
// module's provider is what reads the variable to choose its histograms'
// aggregation; another value is a warning naming it.
func TestHistogramAggregationEnv(t *testing.T) {
	for _, tc := range []struct{ value, warn string }{
		{"explicit_bucket_histogram", ""},
		{"base2_exponential_bucket_histogram", ""},
		{"Base2_Exponential_Bucket_Histogram", ""},
		{"foo", "want explicit_bucket_histogram or base2_exponential_bucket_histogram"},
	} {
		t.Setenv(EnvHistogramAggregation, tc.value)
		var log bytes.Buffer
		if _, err := New(Options{FromEnv: true, Logger: slog.New(slog.NewTextHandler(&log, nil))}); err != nil {
			t.Fatalf("%s: New: %v", tc.value, err)
		}
		if l := log.String(); tc.warn == "" && l != "" || tc.warn != "" && (!strings.Contains(l, tc.warn) || !strings.Contains(l, EnvHistogramAggregation)) {
			t.Errorf("%s: log %q; want %q", tc.value, l, tc.warn)
		}
	}
}

// TestEnvTimeoutBoundsTheExport (issue 42, item 12):
// OTEL_EXPORTER_OTLP_TIMEOUT is, per the specification, the maximum time
// of one export, retries included. Against a receiver that never answers,
// an export with TIMEOUT=300 makes one attempt and fails by its deadline.
// Before, the variable bounded each attempt: the same export made attempt
// after attempt until its interval ran out.
func TestEnvTimeoutBoundsTheExport(t *testing.T) {
	newFixture(t).record(t, "/a", "", 1, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // never answers: the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	t.Setenv(EnvTimeout, "300")
	e, err := New(Options{FromEnv: true, Endpoint: srv.URL, Interval: time.Minute,
		Retry: Retry{InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if e.opts.ExportTimeout != 300*time.Millisecond || e.opts.Timeout != DefaultTimeout {
		t.Fatalf("export timeout %v, attempt timeout %v; want 300ms and the default", e.opts.ExportTimeout, e.opts.Timeout)
	}
	err = e.Export(context.Background())
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("export to a receiver that never answers: %v; want the export's deadline", err)
	}
	if st := e.Stats(); st.Retries != 0 {
		t.Errorf("%d retries; want one attempt, bounded by the export's 300 ms", st.Retries)
	}
}
