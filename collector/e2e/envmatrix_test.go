package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/otlp/otlpgrpc"
	"github.com/zerostat/zerostat/internal/testca"
	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// envRow is one configuration of TestOTLPEnvMatrix: an exporter
// constructor given only environment variables, and what must follow.
type envRow struct {
	name string
	// ctor is "otlp" (otlp.New, OTLP/HTTP) or "grpc" (otlpgrpc.New:
	// gRPC, or OTLP/HTTP when the protocol variable says http/protobuf).
	ctor string
	// env holds NAME=value pairs; a name without the OTEL_ prefix is
	// OTEL_EXPORTER_OTLP_ followed by it. ${x} is expanded from the
	// fixture: a receiver's address (h_plain, g_tls, ...), a recording
	// proxy's (proxy_http, proxy_grpc), the test authority's files (ca,
	// client_cert, client_key) and a file that does not exist (missing).
	env []string

	// A working row: two exports, each of which must reach the Collector
	// through receiver arrive (one pipeline per receiver, so the receiver
	// says the protocol, the TLS mode and the URL path), with the
	// temporality the specification's table gives for pref ("":
	// cumulative, the default) and values to match.
	arrive string
	pref   string
	// Through a recording proxy: the URL path the exporter used and
	// headers of the request ("" means absent).
	path   string
	header map[string]string
	// warn: the constructor logs a warning naming this variable and its
	// value, then uses the default (the specification: MUST for enums).
	warn string
	// newErr: the constructor fails with an error naming this variable.
	newErr string
	// exportErr: the export fails, at once or when the export timeout
	// the row sets (OTEL_EXPORTER_OTLP_TIMEOUT) ends it, not at the
	// test's bound, and nothing reaches the Collector.
	exportErr bool
}

// envMatrix is the rows. The dimensions: exporter (otlp.New, otlpgrpc.New)
// × protocol variable (unset, http/protobuf, grpc, http/json, unknown;
// generic or METRICS_) × endpoint (generic base URL or METRICS_ URL; gRPC
// target host:port, http://, https://; trailing slash; path) × TLS (plain,
// CA file, INSECURE, mTLS, each refused configuration) × temporality
// preference (unset, cumulative, delta, lowmemory, case, invalid) × headers
// and compression × invalid values. The full product is thousands of
// rows, most meaningless (a gRPC target with a URL path); these were chosen
// so that every value of every dimension appears with both constructors,
// every pair of exporter × (protocol, endpoint form, TLS mode, preference)
// appears, and the preferences are spread over the protocols, endpoint
// forms and TLS modes (a preference is read the same way whatever the
// transport, so one value per row is enough for those pairs). A row that
// must fail fails alone: its other variables are valid.
var envMatrix = []envRow{
	// OTLP/HTTP (otlp.New): protocol and endpoint.
	{name: "http/base URL", ctor: "otlp", env: []string{"ENDPOINT=http://${h_plain}"}, arrive: "h_plain"},
	{name: "http/base URL, trailing slash", ctor: "otlp", env: []string{"PROTOCOL=http/protobuf", "ENDPOINT=http://${h_plain}/",
		"METRICS_TEMPORALITY_PREFERENCE=delta"}, arrive: "h_plain", pref: "delta"},
	{name: "http/base URL with a path", ctor: "otlp", env: []string{"ENDPOINT=http://${h_base}/base",
		"METRICS_TEMPORALITY_PREFERENCE=lowmemory", "METRICS_TIMEOUT=5000"}, arrive: "h_base", pref: "lowmemory"},
	{name: "http/base URL with a path and a trailing slash", ctor: "otlp", env: []string{"METRICS_PROTOCOL=http/protobuf",
		"ENDPOINT=http://${h_base}/base/"}, arrive: "h_base"},
	{name: "http/metrics URL used as is", ctor: "otlp", env: []string{"METRICS_ENDPOINT=http://${h_custom}/custom/metrics",
		"METRICS_TEMPORALITY_PREFERENCE=cumulative"}, arrive: "h_custom", pref: "cumulative"},
	{name: "http/metrics URL ending in v1 metrics", ctor: "otlp", env: []string{"METRICS_ENDPOINT=http://${h_plain}/v1/metrics"}, arrive: "h_plain"},
	{name: "http/metrics URL wins over base URL", ctor: "otlp", env: []string{"ENDPOINT=http://${h_plain}",
		"METRICS_ENDPOINT=http://${h_custom}/custom/metrics", "METRICS_TEMPORALITY_PREFERENCE=delta"}, arrive: "h_custom", pref: "delta"},
	{name: "http/metrics URL without a path posts to root", ctor: "otlp", env: []string{"METRICS_ENDPOINT=http://${proxy_http}"},
		arrive: "h_root", path: "/"},
	{name: "http/metrics protocol wins over protocol", ctor: "otlp", env: []string{"PROTOCOL=grpc", "METRICS_PROTOCOL=http/protobuf",
		"ENDPOINT=http://${h_plain}"}, arrive: "h_plain"},
	{name: "http/protocol grpc is otlpgrpc's", ctor: "otlp", env: []string{"PROTOCOL=grpc", "ENDPOINT=http://${g_plain}"},
		newErr: "OTEL_EXPORTER_OTLP_PROTOCOL"},
	{name: "http/protocol http-json warns", ctor: "otlp", env: []string{"PROTOCOL=http/json", "ENDPOINT=http://${h_plain}"},
		warn: "OTEL_EXPORTER_OTLP_PROTOCOL", arrive: "h_plain"},
	{name: "http/metrics protocol unknown warns", ctor: "otlp", env: []string{"METRICS_PROTOCOL=foo", "ENDPOINT=http://${h_base}/base",
		"METRICS_TEMPORALITY_PREFERENCE=delta"}, warn: "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", arrive: "h_base", pref: "delta"},
	{name: "http/protocol in upper case", ctor: "otlp", env: []string{"PROTOCOL=HTTP/PROTOBUF", "ENDPOINT=http://${h_plain}"}, arrive: "h_plain"},

	// otlpgrpc.New: protocol and endpoint.
	{name: "grpc/protocol unset, http target", ctor: "grpc", env: []string{"ENDPOINT=http://${g_plain}"}, arrive: "g_plain"},
	{name: "grpc/host-port insecure", ctor: "grpc", env: []string{"ENDPOINT=${g_plain}", "INSECURE=true",
		"METRICS_TEMPORALITY_PREFERENCE=delta"}, arrive: "g_plain", pref: "delta"},
	{name: "grpc/metrics endpoint, trailing slash", ctor: "grpc", env: []string{"PROTOCOL=grpc", "METRICS_ENDPOINT=http://${g_plain}/",
		"METRICS_TEMPORALITY_PREFERENCE=lowmemory"}, arrive: "g_plain", pref: "lowmemory"},
	{name: "grpc/a path is ignored", ctor: "grpc", env: []string{"PROTOCOL=grpc", "ENDPOINT=http://${g_plain}/ignored/path"}, arrive: "g_plain"},
	{name: "grpc/metrics protocol wins over protocol", ctor: "grpc", env: []string{"PROTOCOL=http/protobuf", "METRICS_PROTOCOL=grpc",
		"ENDPOINT=http://${g_plain}"}, arrive: "g_plain"},
	{name: "grpc/metrics endpoint and metrics insecure win", ctor: "grpc", env: []string{"ENDPOINT=http://${g_plain}",
		"METRICS_ENDPOINT=${proxy_grpc}", "INSECURE=false", "METRICS_INSECURE=true", "TIMEOUT=5000"}, arrive: "g_plain"},
	{name: "grpc/http-protobuf base URL", ctor: "grpc", env: []string{"PROTOCOL=http/protobuf", "ENDPOINT=http://${h_plain}",
		"METRICS_TEMPORALITY_PREFERENCE=delta", "TIMEOUT=5000"}, arrive: "h_plain", pref: "delta"},
	{name: "grpc/http-protobuf metrics URL", ctor: "grpc", env: []string{"PROTOCOL=http/protobuf",
		"METRICS_ENDPOINT=http://${h_custom}/custom/metrics"}, arrive: "h_custom"},
	{name: "grpc/metrics protocol http-protobuf, base URL with a path", ctor: "grpc", env: []string{"PROTOCOL=grpc",
		"METRICS_PROTOCOL=http/protobuf", "ENDPOINT=http://${h_base}/base/", "METRICS_TEMPORALITY_PREFERENCE=lowmemory", "TIMEOUT=5000"},
		arrive: "h_base", pref: "lowmemory"},
	{name: "grpc/protocol http-json warns", ctor: "grpc", env: []string{"PROTOCOL=http/json", "ENDPOINT=http://${g_plain}"},
		warn: "OTEL_EXPORTER_OTLP_PROTOCOL", arrive: "g_plain"},
	{name: "grpc/metrics protocol unknown warns", ctor: "grpc", env: []string{"METRICS_PROTOCOL=grpc2", "ENDPOINT=${g_plain}", "INSECURE=true"},
		warn: "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", arrive: "g_plain"},

	// TLS, OTLP/HTTP.
	{name: "http/https with CA file", ctor: "otlp", env: []string{"ENDPOINT=https://${h_tls}", "CERTIFICATE=${ca}"}, arrive: "h_tls"},
	{name: "http/https metrics URL, metrics CA file", ctor: "otlp", env: []string{"METRICS_ENDPOINT=https://${h_tls}/v1/metrics",
		"METRICS_CERTIFICATE=${ca}", "METRICS_TEMPORALITY_PREFERENCE=delta"}, arrive: "h_tls", pref: "delta"},
	{name: "http/insecure does not downgrade https", ctor: "otlp", env: []string{"ENDPOINT=https://${h_tls}", "CERTIFICATE=${ca}",
		"INSECURE=true", "METRICS_TEMPORALITY_PREFERENCE=lowmemory"}, arrive: "h_tls", pref: "lowmemory"},
	{name: "http/https without the CA fails within the timeout", ctor: "otlp", env: []string{"ENDPOINT=https://${h_tls}", "TIMEOUT=1000"},
		exportErr: true},
	{name: "http/mTLS", ctor: "otlp", env: []string{"ENDPOINT=https://${h_mtls}", "CERTIFICATE=${ca}",
		"CLIENT_CERTIFICATE=${client_cert}", "CLIENT_KEY=${client_key}"}, arrive: "h_mtls"},
	{name: "http/mTLS, metrics client files", ctor: "otlp", env: []string{"ENDPOINT=https://${h_mtls}", "CERTIFICATE=${ca}",
		"METRICS_CLIENT_CERTIFICATE=${client_cert}", "METRICS_CLIENT_KEY=${client_key}", "METRICS_TEMPORALITY_PREFERENCE=delta"},
		arrive: "h_mtls", pref: "delta"},
	{name: "http/mTLS without a client certificate fails within the timeout", ctor: "otlp", env: []string{"ENDPOINT=https://${h_mtls}",
		"CERTIFICATE=${ca}", "METRICS_TIMEOUT=1000"}, exportErr: true},

	// TLS, gRPC.
	{name: "grpc/https with CA file", ctor: "grpc", env: []string{"ENDPOINT=https://${g_tls}", "CERTIFICATE=${ca}"}, arrive: "g_tls"},
	{name: "grpc/host-port is TLS by default", ctor: "grpc", env: []string{"ENDPOINT=${g_tls}", "CERTIFICATE=${ca}",
		"METRICS_TEMPORALITY_PREFERENCE=delta"}, arrive: "g_tls", pref: "delta"},
	{name: "grpc/host-port, insecure false", ctor: "grpc", env: []string{"PROTOCOL=grpc", "METRICS_ENDPOINT=${g_tls}", "INSECURE=false",
		"CERTIFICATE=${ca}"}, arrive: "g_tls"},
	{name: "grpc/https wins over insecure true", ctor: "grpc", env: []string{"ENDPOINT=https://${g_tls}", "INSECURE=true",
		"CERTIFICATE=${ca}", "METRICS_TEMPORALITY_PREFERENCE=lowmemory"}, arrive: "g_tls", pref: "lowmemory"},
	{name: "grpc/mTLS", ctor: "grpc", env: []string{"ENDPOINT=${g_mtls}", "CERTIFICATE=${ca}", "CLIENT_CERTIFICATE=${client_cert}",
		"CLIENT_KEY=${client_key}"}, arrive: "g_mtls"},
	{name: "grpc/mTLS, metrics files", ctor: "grpc", env: []string{"ENDPOINT=https://${g_mtls}", "METRICS_CERTIFICATE=${ca}",
		"METRICS_CLIENT_CERTIFICATE=${client_cert}", "METRICS_CLIENT_KEY=${client_key}", "METRICS_TEMPORALITY_PREFERENCE=delta"},
		arrive: "g_mtls", pref: "delta"},
	{name: "grpc/mTLS without a client certificate fails within the timeout", ctor: "grpc", env: []string{"ENDPOINT=https://${g_mtls}",
		"CERTIFICATE=${ca}", "TIMEOUT=1000"}, exportErr: true},
	{name: "grpc/https without the CA fails within the timeout", ctor: "grpc", env: []string{"ENDPOINT=https://${g_tls}",
		"METRICS_TIMEOUT=1000"}, exportErr: true},
	{name: "grpc/host-port TLS to a plaintext receiver fails within the timeout", ctor: "grpc", env: []string{"ENDPOINT=${g_plain}",
		"TIMEOUT=1000"}, exportErr: true},
	{name: "grpc/http-protobuf over mTLS", ctor: "grpc", env: []string{"PROTOCOL=http/protobuf", "ENDPOINT=https://${h_mtls}",
		"CERTIFICATE=${ca}", "CLIENT_CERTIFICATE=${client_cert}", "CLIENT_KEY=${client_key}", "METRICS_TEMPORALITY_PREFERENCE=lowmemory"},
		arrive: "h_mtls", pref: "lowmemory"},

	// The temporality preference's other values.
	{name: "http/preference in mixed case", ctor: "otlp", env: []string{"ENDPOINT=http://${h_plain}",
		"METRICS_TEMPORALITY_PREFERENCE=LowMemory"}, arrive: "h_plain", pref: "lowmemory"},
	{name: "http/preference invalid warns", ctor: "otlp", env: []string{"ENDPOINT=http://${h_plain}",
		"METRICS_TEMPORALITY_PREFERENCE=deltas"}, warn: "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", arrive: "h_plain"},
	{name: "grpc/preference cumulative", ctor: "grpc", env: []string{"ENDPOINT=http://${g_plain}",
		"METRICS_TEMPORALITY_PREFERENCE=cumulative"}, arrive: "g_plain", pref: "cumulative"},
	{name: "grpc/preference in upper case", ctor: "grpc", env: []string{"ENDPOINT=http://${g_plain}",
		"METRICS_TEMPORALITY_PREFERENCE=DELTA"}, arrive: "g_plain", pref: "delta"},
	{name: "grpc/preference invalid warns", ctor: "grpc", env: []string{"ENDPOINT=http://${g_plain}",
		"METRICS_TEMPORALITY_PREFERENCE=foo"}, warn: "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", arrive: "g_plain"},

	// Headers and compression, seen by a recording proxy in front of the
	// Collector (plain HTTP/1.1 for OTLP/HTTP, h2c for gRPC).
	{name: "http/headers and gzip", ctor: "otlp", env: []string{"ENDPOINT=http://${proxy_http}",
		"HEADERS=api-key=se%3Dcret,x-tenant=a%20b", "COMPRESSION=gzip", "METRICS_TEMPORALITY_PREFERENCE=delta"},
		arrive: "h_root", pref: "delta", path: "/v1/metrics",
		header: map[string]string{"Api-Key": "se=cret", "X-Tenant": "a b", "Content-Encoding": "gzip"}},
	{name: "http/metrics headers and compression win", ctor: "otlp", env: []string{"ENDPOINT=http://${proxy_http}",
		"HEADERS=x-tenant=generic,x-generic=1", "METRICS_HEADERS=x-tenant=metrics", "COMPRESSION=gzip", "METRICS_COMPRESSION=none"},
		arrive: "h_root", path: "/v1/metrics", header: map[string]string{"X-Tenant": "metrics", "X-Generic": "", "Content-Encoding": ""}},
	{name: "http/compression unknown warns", ctor: "otlp", env: []string{"ENDPOINT=http://${proxy_http}", "COMPRESSION=br"},
		warn: "OTEL_EXPORTER_OTLP_COMPRESSION", arrive: "h_root", path: "/v1/metrics", header: map[string]string{"Content-Encoding": ""}},
	{name: "grpc/metadata and gzip", ctor: "grpc", env: []string{"ENDPOINT=http://${proxy_grpc}",
		"HEADERS=api-key=se%3Dcret,X-Tenant=a%20b", "COMPRESSION=gzip", "METRICS_TEMPORALITY_PREFERENCE=lowmemory"},
		arrive: "g_plain", pref: "lowmemory", header: map[string]string{"Api-Key": "se=cret", "X-Tenant": "a b", "Grpc-Encoding": "gzip"}},
	{name: "grpc/metrics headers and compression win", ctor: "grpc", env: []string{"ENDPOINT=${proxy_grpc}", "INSECURE=true",
		"HEADERS=x-tenant=generic", "METRICS_HEADERS=x-tenant=metrics", "COMPRESSION=gzip", "METRICS_COMPRESSION=none"},
		arrive: "g_plain", header: map[string]string{"X-Tenant": "metrics", "Grpc-Encoding": ""}},
	{name: "grpc/compression unknown warns", ctor: "grpc", env: []string{"ENDPOINT=http://${proxy_grpc}", "METRICS_COMPRESSION=zstd"},
		warn: "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", arrive: "g_plain", header: map[string]string{"Grpc-Encoding": ""}},

	// Invalid values: an error naming the variable, or a warning naming
	// it and the default.
	{name: "http/malformed endpoint", ctor: "otlp", env: []string{"ENDPOINT=http://[::1"}, newErr: "OTEL_EXPORTER_OTLP_ENDPOINT"},
	{name: "http/metrics endpoint without a scheme", ctor: "otlp", env: []string{"METRICS_ENDPOINT=${h_plain}"},
		newErr: "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"},
	{name: "grpc/endpoint that is no gRPC target", ctor: "grpc", env: []string{"ENDPOINT=${g_plain}/path"}, newErr: "OTEL_EXPORTER_OTLP_ENDPOINT"},
	{name: "grpc/metrics endpoint with a bad port", ctor: "grpc", env: []string{"METRICS_ENDPOINT=localhost:notaport"},
		newErr: "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"},
	{name: "http/timeout not a number warns", ctor: "otlp", env: []string{"ENDPOINT=http://${h_plain}", "TIMEOUT=10s"},
		warn: "OTEL_EXPORTER_OTLP_TIMEOUT", arrive: "h_plain"},
	{name: "grpc/metrics timeout negative warns", ctor: "grpc", env: []string{"ENDPOINT=http://${g_plain}", "METRICS_TIMEOUT=-5"},
		warn: "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", arrive: "g_plain"},
	{name: "grpc/insecure not a boolean warns", ctor: "grpc", env: []string{"ENDPOINT=http://${g_plain}", "INSECURE=yes"},
		warn: "OTEL_EXPORTER_OTLP_INSECURE", arrive: "g_plain"},
	{name: "http/missing CA file", ctor: "otlp", env: []string{"ENDPOINT=https://${h_tls}", "CERTIFICATE=${missing}"},
		newErr: "OTEL_EXPORTER_OTLP_CERTIFICATE"},
	{name: "grpc/missing metrics CA file", ctor: "grpc", env: []string{"ENDPOINT=https://${g_tls}", "METRICS_CERTIFICATE=${missing}"},
		newErr: "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE"},
	{name: "http/missing client key", ctor: "otlp", env: []string{"ENDPOINT=https://${h_mtls}", "CERTIFICATE=${ca}",
		"CLIENT_CERTIFICATE=${client_cert}", "METRICS_CLIENT_KEY=${missing}"}, newErr: "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY"},
	{name: "grpc/client certificate without its key", ctor: "grpc", env: []string{"ENDPOINT=https://${g_mtls}", "CERTIFICATE=${ca}",
		"CLIENT_CERTIFICATE=${client_cert}"}, newErr: "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"},
	{name: "http/CA file with a plain http endpoint", ctor: "otlp", env: []string{"ENDPOINT=http://${h_plain}", "CERTIFICATE=${ca}"},
		newErr: "OTEL_EXPORTER_OTLP_CERTIFICATE"},
	{name: "grpc/CA file with a plaintext target", ctor: "grpc", env: []string{"ENDPOINT=http://${g_tls}", "CERTIFICATE=${ca}"},
		newErr: "OTEL_EXPORTER_OTLP_CERTIFICATE"},
	{name: "http/header without a value", ctor: "otlp", env: []string{"ENDPOINT=http://${h_plain}", "HEADERS=api-key"},
		newErr: "OTEL_EXPORTER_OTLP_HEADERS"},
	{name: "http/header the exporter sets", ctor: "otlp", env: []string{"ENDPOINT=http://${h_plain}", "METRICS_HEADERS=content-type=text/plain"},
		newErr: "OTEL_EXPORTER_OTLP_METRICS_HEADERS"},
	{name: "grpc/header value gRPC cannot send", ctor: "grpc", env: []string{"ENDPOINT=http://${g_plain}", "METRICS_HEADERS=x=caf%C3%A9"},
		newErr: "OTEL_EXPORTER_OTLP_METRICS_HEADERS"},
	{name: "grpc/header gRPC reserves", ctor: "grpc", env: []string{"ENDPOINT=http://${g_plain}", "HEADERS=grpc-timeout=1S"},
		newErr: "OTEL_EXPORTER_OTLP_HEADERS"},
}

// matrixReceivers are the Collector's receivers, each an otlp receiver
// with one protocol and its own pipeline to the sink (so what arrived
// says which receiver took it): plain, TLS (the test authority's server
// certificate) and mTLS (a client certificate of the authority
// required), and OTLP/HTTP receivers with other metrics paths (h_root's
// "/" takes every path: the proxy in front of it records which).
var matrixReceivers = []struct{ name, protocol, tls, path string }{
	{"h_plain", "http", "", ""},
	{"h_base", "http", "", "/base/v1/metrics"},
	{"h_custom", "http", "", "/custom/metrics"},
	{"h_root", "http", "", "/"},
	{"h_tls", "http", "tls", ""},
	{"h_mtls", "http", "mtls", ""},
	{"g_plain", "grpc", "", ""},
	{"g_tls", "grpc", "tls", ""},
	{"g_mtls", "grpc", "mtls", ""},
}

// TestOTLPEnvMatrix (issue 42, "How it is checked") runs zerostat's OTLP
// exporters, configured by OpenTelemetry's environment variables alone,
// against a real Collector: every row of envMatrix builds an exporter
// with FromEnv and checks the constructor's error or warning, or records
// known values, exports twice and checks what the Collector received:
// through which receiver, the values, and each instrument kind's
// temporality against the specification's table. One Collector serves
// every row; each row's service.name (OTEL_SERVICE_NAME) tells its data
// apart. The Collector's pipelines have no queue, so a successful export
// returns after the data reached the sink.
func TestOTLPEnvMatrix(t *testing.T) {
	bin := collectorBinary(t)
	ca := testca.New(t)
	sink := newMatrixSink()
	sinkSrv := httptest.NewServer(sink)
	defer sinkSrv.Close()

	addrs := map[string]string{}
	var cfg strings.Builder
	var pipelines strings.Builder
	cfg.WriteString("receivers:\n")
	for _, r := range matrixReceivers {
		addrs[r.name] = freeAddr(t)
		fmt.Fprintf(&cfg, "  otlp/%s:\n    protocols:\n      %s:\n        endpoint: %q\n", r.name, r.protocol, addrs[r.name])
		if r.path != "" {
			fmt.Fprintf(&cfg, "        metrics_url_path: %q\n", r.path)
		}
		switch r.tls {
		case "tls":
			fmt.Fprintf(&cfg, "        tls: {cert_file: %q, key_file: %q}\n", ca.ServerCertFile, ca.ServerKeyFile)
		case "mtls":
			fmt.Fprintf(&cfg, "        tls: {cert_file: %q, key_file: %q, client_ca_file: %q}\n", ca.ServerCertFile, ca.ServerKeyFile, ca.CAFile)
		}
		fmt.Fprintf(&pipelines, "    metrics/%s: {receivers: [otlp/%s], exporters: [otlp_http/%s]}\n", r.name, r.name, r.name)
	}
	cfg.WriteString("exporters:\n")
	for _, r := range matrixReceivers {
		fmt.Fprintf(&cfg, "  otlp_http/%s:\n    metrics_endpoint: %q\n    compression: none\n"+
			"    retry_on_failure: {enabled: false}\n    sending_queue: {enabled: false}\n", r.name, sinkSrv.URL+"/"+r.name)
	}
	cfg.WriteString("service:\n  telemetry:\n    metrics: {level: none}\n    logs: {level: warn}\n  pipelines:\n")
	cfg.WriteString(pipelines.String())
	ready := make([]string, 0, len(addrs))
	for _, a := range addrs {
		ready = append(ready, a)
	}
	startCollector(t, bin, cfg.String(), ready...)

	proxyHTTP := newRecordingProxy(t, "http://"+addrs["h_root"], false)
	proxyGRPC := newRecordingProxy(t, "http://"+addrs["g_plain"], true)
	vars := map[string]string{
		"proxy_http": proxyHTTP.addr, "proxy_grpc": proxyGRPC.addr,
		"ca": ca.CAFile, "client_cert": ca.ClientCertFile, "client_key": ca.ClientKeyFile,
		"missing": filepath.Join(t.TempDir(), "missing.pem"),
	}
	for k, v := range addrs {
		vars[k] = v
	}

	// No variable of the test's environment leaks into a row.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OTEL_") {
			t.Setenv(k, "")
		}
	}
	in := newMatrixInstruments()
	for i, row := range envMatrix {
		t.Run(row.name, func(t *testing.T) {
			runEnvRow(t, row, fmt.Sprintf("matrix-%02d", i), vars, sink, in, map[string]*recordingProxy{
				"proxy_http": proxyHTTP, "proxy_grpc": proxyGRPC})
		})
	}
}

// exportStopper is what both constructors return.
type exportStopper interface {
	Export(context.Context) error
	Stop(context.Context) error
}

func runEnvRow(t *testing.T, row envRow, service string, vars map[string]string, sink *matrixSink, in *matrixInstruments,
	proxies map[string]*recordingProxy) {
	var envDesc []string
	for _, kv := range row.env {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "OTEL_") {
			k = "OTEL_EXPORTER_OTLP_" + k
		}
		v = os.Expand(v, func(name string) string {
			x, ok := vars[name]
			if !ok {
				t.Fatalf("row %q: no ${%s}", row.name, name)
			}
			return x
		})
		t.Setenv(k, v)
		envDesc = append(envDesc, k+"="+v)
	}
	t.Setenv("OTEL_SERVICE_NAME", service)
	t.Logf("%s %s", row.ctor, strings.Join(envDesc, " "))

	var logBuf syncBuffer
	opts := otlp.Options{FromEnv: true, Logger: slog.New(slog.NewTextHandler(&logBuf, nil))}
	var e exportStopper
	var err error
	switch row.ctor {
	case "otlp":
		var h *otlp.Exporter
		if h, err = otlp.New(opts); err == nil {
			e = h
		}
	case "grpc":
		var g *otlpgrpc.Exporter
		if g, err = otlpgrpc.New(opts); err == nil {
			e = g
		}
	default:
		t.Fatalf("row %q: constructor %q", row.name, row.ctor)
	}
	if row.newErr != "" {
		if err == nil || !strings.HasPrefix(err.Error(), "otlp: ") || !strings.Contains(err.Error(), row.newErr) {
			t.Errorf("New: got %v; want an error naming %s", err, row.newErr)
		}
		t.Logf("New: %v", err)
		if e != nil {
			e.Stop(canceled())
		}
		return
	}
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer e.Stop(canceled()) // closes a gRPC connection; the final export is not wanted
	if l := logBuf.String(); row.warn == "" && strings.Contains(l, "level=WARN") {
		t.Errorf("New logged %q; want no warning", l)
	} else if row.warn != "" {
		value := os.Getenv(row.warn)
		if !strings.Contains(l, "level=WARN") || !strings.Contains(l, row.warn) || !strings.Contains(l, value) {
			t.Errorf("New logged %q; want a warning naming %s and %q", l, row.warn, value)
		}
	}

	in.register(t)
	// A bound on the export, far above the row's own timeouts: an export
	// that hangs fails the row here instead of the whole test.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if row.exportErr {
		in.round(1)
		err := e.Export(ctx)
		if err == nil || ctx.Err() != nil {
			t.Errorf("export: %v (the test's bound: %v); want a failure within the row's OTEL_EXPORTER_OTLP_TIMEOUT", err, ctx.Err())
		}
		t.Logf("export: %v", err)
		if got := sink.arrivals(service); len(got) != 0 {
			t.Errorf("%d batches reached the Collector (receiver %s); want none", len(got), got[0].receiver)
		}
		return
	}
	var proxy *recordingProxy
	for name, p := range proxies {
		if strings.Contains(strings.Join(row.env, " "), "${"+name+"}") {
			proxy = p
		}
	}
	var before int
	if proxy != nil {
		before = len(proxy.requests())
	}
	for round := 1; round <= 2; round++ {
		in.round(round)
		if err := e.Export(ctx); err != nil {
			t.Fatalf("export %d: %v", round, err)
		}
		sink.wait(t, service, round)
	}
	got := sink.arrivals(service)
	if len(got) != 2 {
		t.Fatalf("%d batches reached the Collector; want 2", len(got))
	}
	for i, a := range got {
		if a.receiver != row.arrive {
			t.Errorf("batch %d arrived through receiver %s; want %s", i+1, a.receiver, row.arrive)
		}
	}
	pref := row.pref
	if pref == "" {
		pref = "cumulative"
	}
	in.check(t, pref, got[0].md, got[1].md)

	if proxy == nil {
		return
	}
	reqs := proxy.requests()[before:]
	if len(reqs) != 2 {
		t.Fatalf("the proxy saw %d requests; want 2", len(reqs))
	}
	for _, r := range reqs {
		if row.path != "" && r.path != row.path {
			t.Errorf("the exporter sent to path %q; want %q", r.path, row.path)
		}
		for k, want := range row.header {
			if g := strings.Join(r.header.Values(k), ","); g != want {
				t.Errorf("header %s: %q; want %q", k, g, want)
			}
		}
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// specTemporality is the OTLP metrics exporter's
// OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE table
// (https://opentelemetry.io/docs/specs/otel/metrics/sdk_exporters/otlp/#additional-environment-variable-configuration),
// by instrument kind. A Gauge has no temporality.
var specTemporality = map[string]map[string]pmetric.AggregationTemporality{
	"cumulative": {"Counter": cum, "Asynchronous Counter": cum, "Histogram": cum, "UpDownCounter": cum},
	"delta":      {"Counter": dlt, "Asynchronous Counter": dlt, "Histogram": dlt, "UpDownCounter": cum},
	"lowmemory":  {"Counter": dlt, "Asynchronous Counter": cum, "Histogram": dlt, "UpDownCounter": cum},
}

const (
	cum = pmetric.AggregationTemporalityCumulative
	dlt = pmetric.AggregationTemporalityDelta
)

// matrixInstruments are one instrument of each kind zerostat has, as
// views registered for each row (so each row's exporter starts from
// nothing): counters (Count and Sum views), a histogram (Distribution), an
// up-down counter (UpDownSum), a gauge (LastValue), and callbacks
// (package metric): an asynchronous counter and an asynchronous gauge.
// zerostat has no asynchronous up-down counter in the root module.
type matrixInstruments struct {
	lat      *stats.Float64Measure
	size     *stats.Int64Measure
	inflight *stats.Int64Measure
	queue    *stats.Int64Measure
	observed atomic.Int64  // the asynchronous counter's total
	temp     atomic.Uint64 // the asynchronous gauge's value (float64 bits)
	views    []*view.View
	cbs      []*metric.Callback
}

func newMatrixInstruments() *matrixInstruments {
	return &matrixInstruments{
		lat:      stats.Float64("matrix/latency", "Latency", stats.UnitMilliseconds),
		size:     stats.Int64("matrix/size", "Bytes", stats.UnitBytes),
		inflight: stats.Int64("matrix/inflight_change", "In-flight change", stats.UnitDimensionless),
		queue:    stats.Int64("matrix/queue", "Queue length", stats.UnitDimensionless),
	}
}

// register registers the row's instruments; the row's end unregisters them.
func (m *matrixInstruments) register(t *testing.T) {
	m.views = []*view.View{
		{Name: "matrix/requests", Measure: m.lat, Aggregation: view.Count()},
		{Name: "matrix/bytes", Measure: m.size, Aggregation: view.Sum()},
		{Name: "matrix/latency", Measure: m.lat, Aggregation: view.Distribution(10, 100)},
		{Name: "matrix/inflight", Measure: m.inflight, Aggregation: view.UpDownSum()},
		{Name: "matrix/queue", Measure: m.queue, Aggregation: view.LastValue()},
	}
	if err := view.Register(m.views...); err != nil {
		t.Fatal(err)
	}
	m.observed.Store(0)
	m.temp.Store(0)
	c, err := metric.NewCounter("matrix/observed", "Observed total", stats.UnitDimensionless, nil,
		func(o *metric.Observer) { o.Observe(float64(m.observed.Load())) })
	if err != nil {
		t.Fatal(err)
	}
	g, err := metric.NewGauge("matrix/temperature", "Observed gauge", stats.UnitDimensionless, nil,
		func(o *metric.Observer) { o.Observe(math.Float64frombits(m.temp.Load())) })
	if err != nil {
		t.Fatal(err)
	}
	m.cbs = []*metric.Callback{c, g}
	t.Cleanup(func() {
		view.Unregister(m.views...)
		for _, c := range m.cbs {
			c.Unregister()
		}
	})
}

// round records round r's values (rounds 1 and 2; the values wanted are
// in check).
func (m *matrixInstruments) round(r int) {
	ctx := context.Background()
	switch r {
	case 1:
		stats.Record(ctx, m.lat.M(5), m.size.M(100), m.inflight.M(5), m.queue.M(7))
		stats.Record(ctx, m.lat.M(50), m.size.M(200), m.inflight.M(-2))
		stats.Record(ctx, m.lat.M(500), m.size.M(300))
		m.observed.Store(40)
		m.temp.Store(math.Float64bits(1.5))
	case 2:
		stats.Record(ctx, m.lat.M(20), m.size.M(50), m.inflight.M(4))
		stats.Record(ctx, m.lat.M(1000), m.size.M(70), m.queue.M(9))
		m.observed.Store(55)
		m.temp.Store(math.Float64bits(2.5))
	}
}

// point is what check reads of one metric in a batch.
type point struct {
	typ         pmetric.MetricType
	temporality pmetric.AggregationTemporality
	monotonic   bool
	value       float64  // a sum's or a gauge's
	count       uint64   // a histogram's
	sum         float64  // a histogram's
	buckets     []uint64 // a histogram's
	bounds      []float64
	start, time pcommon.Timestamp
}

// check checks the two batches of a row under preference pref: each
// instrument's type, temporality (the specification's table), and
// values (a delta point holds round 2's values only), and that a delta
// point of the second batch starts where the first ended.
func (m *matrixInstruments) check(t *testing.T, pref string, b1, b2 pmetric.Metrics) {
	t.Helper()
	table := specTemporality[pref]
	type want struct {
		kind       string // the specification's instrument kind; "" for a gauge
		typ        pmetric.MetricType
		monotonic  bool
		v1, v2, d2 float64 // round 1's value, the total after round 2, round 2's change
		hist1      []uint64
		hist2      []uint64
		histd      []uint64
		sum1, sum2 float64
	}
	wants := map[string]want{
		"matrix/requests": {kind: "Counter", typ: pmetric.MetricTypeSum, monotonic: true, v1: 3, v2: 5, d2: 2},
		"matrix/bytes":    {kind: "Counter", typ: pmetric.MetricTypeSum, monotonic: true, v1: 600, v2: 720, d2: 120},
		"matrix/latency": {kind: "Histogram", typ: pmetric.MetricTypeHistogram, v1: 3, v2: 5, d2: 2,
			hist1: []uint64{1, 1, 1}, hist2: []uint64{1, 2, 2}, histd: []uint64{0, 1, 1}, sum1: 555, sum2: 1575},
		"matrix/inflight":    {kind: "UpDownCounter", typ: pmetric.MetricTypeSum, v1: 3, v2: 7, d2: 4},
		"matrix/observed":    {kind: "Asynchronous Counter", typ: pmetric.MetricTypeSum, monotonic: true, v1: 40, v2: 55, d2: 15},
		"matrix/queue":       {typ: pmetric.MetricTypeGauge, v1: 7, v2: 9},
		"matrix/temperature": {typ: pmetric.MetricTypeGauge, v1: 1.5, v2: 2.5},
	}
	p1, p2 := readPoints(t, b1), readPoints(t, b2)
	for name, w := range wants {
		a, ok1 := p1[name]
		b, ok2 := p2[name]
		if !ok1 || !ok2 {
			t.Errorf("%s: in batch 1 %v, in batch 2 %v; want both", name, ok1, ok2)
			continue
		}
		for i, p := range []point{a, b} {
			if p.typ != w.typ || p.typ == pmetric.MetricTypeSum && p.monotonic != w.monotonic {
				t.Errorf("%s, batch %d: %v (monotonic %v); want %v (monotonic %v)", name, i+1, p.typ, p.monotonic, w.typ, w.monotonic)
			}
		}
		if w.kind == "" { // a gauge: its last value
			if a.value != w.v1 || b.value != w.v2 {
				t.Errorf("%s: %v then %v; want %v then %v", name, a.value, b.value, w.v1, w.v2)
			}
			continue
		}
		wt := table[w.kind]
		if a.temporality != wt || b.temporality != wt {
			t.Errorf("%s (%s) under %s: temporality %v then %v; want %v", name, w.kind, pref, a.temporality, b.temporality, wt)
			continue
		}
		v2, hist2, sum2 := w.v2, w.hist2, w.sum2
		if wt == dlt {
			v2, hist2, sum2 = w.d2, w.histd, w.sum2-w.sum1
			if b.start != a.time {
				t.Errorf("%s, delta: batch 2 starts at %v; want the end of batch 1, %v", name, b.start, a.time)
			}
		} else if b.start != a.start {
			t.Errorf("%s, cumulative: batch 2 starts at %v; want batch 1's start, %v", name, b.start, a.start)
		}
		if w.typ == pmetric.MetricTypeHistogram {
			if a.count != uint64(w.v1) || !slices.Equal(a.buckets, w.hist1) || a.sum != w.sum1 ||
				b.count != uint64(v2) || !slices.Equal(b.buckets, hist2) || b.sum != sum2 || !slices.Equal(b.bounds, []float64{10, 100}) {
				t.Errorf("%s under %s: count %d sum %v buckets %v, then count %d sum %v buckets %v (bounds %v); "+
					"want %v %v %v, then %v %v %v", name, pref, a.count, a.sum, a.buckets, b.count, b.sum, b.buckets, b.bounds,
					w.v1, w.sum1, w.hist1, v2, sum2, hist2)
			}
			continue
		}
		if a.value != w.v1 || b.value != v2 {
			t.Errorf("%s under %s: %v then %v; want %v then %v", name, pref, a.value, b.value, w.v1, v2)
		}
	}
}

// readPoints returns the single point of each matrix/ metric in md.
func readPoints(t *testing.T, md pmetric.Metrics) map[string]point {
	t.Helper()
	out := map[string]point{}
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				m := ms.At(k)
				if !strings.HasPrefix(m.Name(), "matrix/") {
					continue
				}
				p := point{typ: m.Type()}
				n := 0
				switch m.Type() {
				case pmetric.MetricTypeSum:
					s := m.Sum()
					p.temporality, p.monotonic, n = s.AggregationTemporality(), s.IsMonotonic(), s.DataPoints().Len()
					if n == 1 {
						dp := s.DataPoints().At(0)
						p.value, p.start, p.time = numberValue(dp), dp.StartTimestamp(), dp.Timestamp()
					}
				case pmetric.MetricTypeGauge:
					n = m.Gauge().DataPoints().Len()
					if n == 1 {
						p.value = numberValue(m.Gauge().DataPoints().At(0))
					}
				case pmetric.MetricTypeHistogram:
					h := m.Histogram()
					p.temporality, n = h.AggregationTemporality(), h.DataPoints().Len()
					if n == 1 {
						dp := h.DataPoints().At(0)
						p.count, p.sum, p.buckets, p.bounds = dp.Count(), dp.Sum(), dp.BucketCounts().AsRaw(), dp.ExplicitBounds().AsRaw()
						p.start, p.time = dp.StartTimestamp(), dp.Timestamp()
					}
				}
				if _, dup := out[m.Name()]; dup || n != 1 {
					t.Errorf("%s: %d points (or sent twice); want one", m.Name(), n)
				}
				out[m.Name()] = p
			}
		}
	}
	return out
}

func numberValue(dp pmetric.NumberDataPoint) float64 {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(dp.IntValue())
	}
	return dp.DoubleValue()
}

// matrixSink is the OTLP/HTTP server the Collector's otlphttp exporters
// send to, one URL path per receiver's pipeline. It keeps each batch with
// its receiver and service.name, and wakes waiters on each arrival.
type matrixSink struct {
	mu      sync.Mutex
	got     []arrival
	changed chan struct{} // closed, and replaced, at each arrival
}

type arrival struct {
	receiver, service string
	md                pmetric.Metrics
}

func newMatrixSink() *matrixSink { return &matrixSink{changed: make(chan struct{})} }

func (s *matrixSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	md := req.Metrics()
	service := ""
	if md.ResourceMetrics().Len() > 0 {
		if v, ok := md.ResourceMetrics().At(0).Resource().Attributes().Get("service.name"); ok {
			service = v.Str()
		}
	}
	s.mu.Lock()
	s.got = append(s.got, arrival{receiver: strings.TrimPrefix(r.URL.Path, "/"), service: service, md: md})
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := pmetricotlp.NewExportResponse().MarshalProto()
	w.Write(b)
}

// arrivals returns the batches of service, in order.
func (s *matrixSink) arrivals(service string) []arrival {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []arrival
	for _, a := range s.got {
		if a.service == service {
			out = append(out, a)
		}
	}
	return out
}

// wait waits until n batches of service arrived (at most 30 s: with no
// queue in the Collector's pipelines they have when the export returns).
func (s *matrixSink) wait(t *testing.T, service string, n int) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		if len(s.arrivals(service)) >= n {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("%d batches of %s reached the Collector's sink after 30 s; want %d", len(s.arrivals(service)), service, n)
		}
	}
}

// recordingProxy forwards every request to a Collector receiver and
// records its path and headers: over HTTP/1.1, or over h2c (HTTP/2
// without TLS, as gRPC sends it to an http:// target) both ways.
type recordingProxy struct {
	addr string
	mu   sync.Mutex
	reqs []proxied
}

type proxied struct {
	path   string
	header http.Header
}

func newRecordingProxy(t *testing.T, target string, h2c bool) *recordingProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) },
		ErrorLog: log.New(io.Discard, "", 0)}
	srv := &http.Server{ErrorLog: log.New(io.Discard, "", 0), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.reqs = append(p.reqs, proxied{path: r.URL.Path, header: r.Header.Clone()})
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	})}
	if h2c {
		var protos http.Protocols
		protos.SetUnencryptedHTTP2(true)
		rp.Transport = &http.Transport{Protocols: &protos}
		srv.Protocols = &protos
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return p
}

func (p *recordingProxy) requests() []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reqs)
}

// syncBuffer is a bytes.Buffer safe for concurrent use (a logger's
// output).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
