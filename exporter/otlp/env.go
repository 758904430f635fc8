package otlp

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/internal/otelenv"
)

// The OTLP exporter's environment variables
// (https://opentelemetry.io/docs/specs/otel/protocol/exporter/). Each
// generic OTEL_EXPORTER_OTLP_X has a metrics-specific
// OTEL_EXPORTER_OTLP_METRICS_X, which wins when both are set.
const (
	EnvEndpoint           = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvMetricsEndpoint    = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
	EnvHeaders            = "OTEL_EXPORTER_OTLP_HEADERS"
	EnvTimeout            = "OTEL_EXPORTER_OTLP_TIMEOUT"
	EnvCompression        = "OTEL_EXPORTER_OTLP_COMPRESSION"
	EnvProtocol           = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvCertificate        = "OTEL_EXPORTER_OTLP_CERTIFICATE"
	EnvClientCertificate  = "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"
	EnvClientKey          = "OTEL_EXPORTER_OTLP_CLIENT_KEY"
	EnvInsecure           = "OTEL_EXPORTER_OTLP_INSECURE"
	EnvTemporality        = exporter.EnvTemporalityPreference
	EnvMetricExportPeriod = exporter.EnvMetricExportInterval
	// EnvHistogramAggregation chooses the default histogram aggregation,
	// explicit_bucket_histogram or base2_exponential_bucket_histogram. An
	// exporter sends each view with the aggregation the view has
	// (view.Distribution, view.ExponentialDistribution): the variable is
	// read by the otel module's MeterProvider, whose histograms it makes
	// exponential. The exporter only checks the value (another one is a
	// warning).
	EnvHistogramAggregation = otelenv.HistogramAggregation
)

// metricsVar returns OTEL_EXPORTER_OTLP_METRICS_X for OTEL_EXPORTER_OTLP_X.
func metricsVar(generic string) string {
	return "OTEL_EXPORTER_OTLP_METRICS_" + strings.TrimPrefix(generic, "OTEL_EXPORTER_OTLP_")
}

// WithEnv returns o with the options it leaves unset read from
// OpenTelemetry's environment variables (the table in the package
// documentation), and FromEnv false. Precedence: an option set in code
// wins (as in OTel Go's exporters; a header set in code wins over the
// variable's of the same name), then the metrics-specific variable, then
// the generic one. For OTLP/HTTP, OTEL_EXPORTER_OTLP_ENDPOINT is a base
// URL (MetricsPath is appended) and OTEL_EXPORTER_OTLP_METRICS_ENDPOINT
// the full URL (used as is); for gRPC either is the target. Headers are
// percent-decoded; timeouts and the interval are milliseconds. An invalid
// value is an error naming the variable. New calls it when FromEnv is
// set; it reads the environment (and the TLS files it names) once.
func (o Options) WithEnv() (Options, error) { return o.WithEnvDefault("") }

// WithEnvDefault is WithEnv for an exporter whose protocol, when neither
// o.Protocol nor the environment sets one, is protocol (otlpgrpc.New:
// gRPC): the endpoint variables are then read as that protocol's (a
// gRPC target, http:// or https:// URLs included), and its rules are
// checked, each error naming its variable.
func (o Options) WithEnvDefault(protocol string) (Options, error) {
	var env otelenv.Env
	get := func(generic string) (name, value string) { return env.First(metricsVar(generic), generic) }
	fail := func(err error) (Options, error) { return o, fmt.Errorf("otlp: %w", err) }
	// An enum, number or boolean value not recognised is a warning, and
	// the default is used (the specification: MUST for enums, SHOULD for
	// the others); what cannot be ignored safely (an endpoint, a header,
	// a TLS file) fails.
	var ignored []otelenv.Ignored
	ignore := func(err error) { ignored = append(ignored, otelenv.Ignored{Err: err}) }
	defer func() { otelenv.Warn(o.Logger, "zerostat otlp", ignored) }()
	var err error
	if o.Protocol == "" {
		if n, v := get(EnvProtocol); v != "" {
			switch lv := strings.ToLower(v); lv {
			case ProtocolHTTP, ProtocolGRPC:
				o.Protocol = lv
			default:
				ignore(fmt.Errorf("%s=%q: zerostat sends %s and %s", n, v, ProtocolHTTP, ProtocolGRPC))
			}
		}
	}
	if o.Protocol == "" {
		o.Protocol = protocol
	}
	if o.Endpoint == "" && o.URL == "" {
		if n, v := get(EnvEndpoint); o.Protocol == ProtocolGRPC && v != "" {
			if _, _, err := GRPCTarget(v, false); err != nil {
				return fail(fmt.Errorf("%s: %w", n, err))
			}
			o.Endpoint = v
		} else if v != "" {
			full := ""
			if n == EnvMetricsEndpoint {
				full, v = v, ""
			}
			if _, err := metricsURL(v, full); err != nil {
				return fail(fmt.Errorf("%s=%q: %w", n, v+full, err))
			}
			o.Endpoint, o.URL = v, full
		}
	}
	if n, v := get(EnvHeaders); v != "" {
		pairs, err := otelenv.Pairs(n, v)
		if err != nil {
			return fail(err)
		}
		h := make(http.Header, len(o.Header)+len(pairs))
		for k, vs := range o.Header {
			h[http.CanonicalHeaderKey(k)] = vs
		}
		for _, p := range pairs {
			if !ValidHeaderName(p.Key) {
				return fail(fmt.Errorf("%s: %q is not a valid header name", n, p.Key))
			}
			if !ValidHeaderValue(p.Value) {
				// The value is not quoted: it may be a credential.
				return fail(fmt.Errorf("%s: the value of header %q has a control character", n, p.Key))
			}
			if o.Protocol == ProtocolGRPC && !GRPCHeaderValue(p.Key, p.Value) {
				return fail(fmt.Errorf("%s: the value of header %q is not one gRPC can send: printable ASCII only (or a key ending in -bin)", n, p.Key))
			}
			if by := reservedHeader(o.Protocol, p.Key); by != "" {
				return fail(fmt.Errorf("%s: header %q is set by %s", n, p.Key, by))
			}
			k := http.CanonicalHeaderKey(p.Key)
			if _, inCode := o.Header[k]; inCode {
				continue
			}
			if _, inCode := o.Header[p.Key]; inCode {
				continue
			}
			h[k] = append(h[k], p.Value)
		}
		o.Header = h
	}
	if o.ExportTimeout == 0 {
		// The specification's TIMEOUT bounds a whole export (a batch),
		// retries included, not each attempt.
		n, _ := get(EnvTimeout)
		if o.ExportTimeout, err = env.Positive(n); err != nil {
			o.ExportTimeout = 0
			ignore(err)
		}
	}
	if n, v := get(EnvCompression); v != "" && o.Compression == NoCompression {
		switch strings.ToLower(v) {
		case "gzip":
			o.Compression = Gzip
		case "none":
		default:
			ignore(fmt.Errorf("%s=%q: want gzip or none", n, v))
		}
	}
	var tlsVars []string
	if n, v := get(EnvCertificate); v != "" && o.TLS.CAFile == "" {
		o.TLS.CAFile, tlsVars = v, append(tlsVars, n)
	}
	if o.TLS.CertFile == "" && o.TLS.KeyFile == "" {
		if n, v := get(EnvClientCertificate); v != "" {
			o.TLS.CertFile, tlsVars = v, append(tlsVars, n)
		}
		if n, v := get(EnvClientKey); v != "" {
			o.TLS.KeyFile, tlsVars = v, append(tlsVars, n)
		}
	}
	if len(tlsVars) > 0 {
		if _, err := o.TLS.Config(); err != nil {
			return fail(fmt.Errorf("%s: %w", strings.Join(tlsVars, ", "), err))
		}
	}
	if n, v := get(EnvInsecure); v != "" && !o.TLS.Insecure {
		if o.TLS.Insecure, err = otelenv.Bool(n, v); err != nil {
			ignore(err)
		}
	}
	if len(tlsVars) > 0 && o.Protocol != ProtocolGRPC {
		// TLS files with a plain http URL, which New refuses: name the
		// variables.
		if target, err := metricsURL(o.Endpoint, o.URL); err == nil && strings.HasPrefix(target, "http:") {
			en, _ := get(EnvEndpoint)
			if en == "" {
				en = "the default endpoint"
			}
			return fail(fmt.Errorf("%s set, but %s (%s) is plain http: TLS files need https", strings.Join(tlsVars, ", "), target, en))
		}
	}
	if len(tlsVars) > 0 && o.Protocol == ProtocolGRPC {
		// TLS files with a plaintext target: name the variables that
		// made each.
		if _, useTLS, err := GRPCTarget(o.Endpoint, o.TLS.Insecure); err == nil && !useTLS {
			_, en := get(EnvEndpoint)
			ins, _ := get(EnvInsecure)
			if ins == "" {
				ins = EnvInsecure
			}
			return fail(fmt.Errorf("%s set, but the endpoint %q is plaintext (an http:// URL, or host:port with %s true): TLS files need TLS", strings.Join(tlsVars, ", "), en, ins))
		}
	}
	if v := env.Get(EnvTemporality); v != "" && o.Temporality == Cumulative && o.TemporalityPreference == exporter.PreferCumulative {
		if o.TemporalityPreference, err = exporter.ParseTemporalityPreference(v); err != nil {
			ignore(fmt.Errorf("%s: %w", EnvTemporality, err))
		}
	}
	if o.Interval == 0 {
		if o.Interval, err = env.Positive(EnvMetricExportPeriod); err != nil {
			o.Interval = 0
			ignore(err)
		}
	}
	if _, err := env.Base2Exponential(); err != nil {
		ignore(err)
	}
	if o.Resource, err = o.Resource.FromEnv(); err != nil {
		return fail(err)
	}
	o.FromEnv = false
	return o, nil
}

// protocolVar returns the protocol variable set (the metrics-specific
// one first), "" when neither is.
func protocolVar() string {
	n, _ := otelenv.Env{}.First(metricsVar(EnvProtocol), EnvProtocol)
	return n
}

// reservedHeader returns who sets header k of a request of protocol
// itself ("the exporter", "gRPC"), so that New refuses it; "" when it may
// be set.
func reservedHeader(protocol, k string) string {
	if protocol == ProtocolGRPC {
		if GRPCReservedHeader(k) {
			return "gRPC"
		}
		return ""
	}
	switch http.CanonicalHeaderKey(k) {
	case "Content-Type", "Content-Encoding", "Content-Length":
		return "the exporter"
	}
	return ""
}

// GRPCReservedHeader reports whether gRPC sets header key itself, so a
// request's metadata cannot: content-type, te, user-agent, grpc-* and
// pseudo-headers. For package otlpgrpc.
func GRPCReservedHeader(key string) bool {
	lk := strings.ToLower(key)
	return lk == "content-type" || lk == "te" || lk == "user-agent" || strings.HasPrefix(lk, "grpc-") || strings.HasPrefix(lk, ":")
}

// validPort reports whether p is a port number, 1 to 65535.
func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535 && strconv.Itoa(n) == p
}

// GRPCHeaderValue reports whether gRPC can send v as the value of header
// key: printable ASCII, unless the key ends in -bin (gRPC fails every
// call otherwise).
func GRPCHeaderValue(key, v string) bool {
	if strings.HasSuffix(strings.ToLower(key), "-bin") {
		return true
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// GRPCTarget returns the gRPC target (host:port) of endpoint and whether
// to connect with TLS: an http:// endpoint without, https:// with, one
// without a scheme with TLS unless insecure (the OTLP specification's
// rules for OTLP/gRPC; a URL's path is ignored). For package otlpgrpc.
func GRPCTarget(endpoint string, insecure bool) (target string, useTLS bool, err error) {
	if endpoint == "" {
		endpoint = DefaultGRPCEndpoint
	}
	if !strings.Contains(endpoint, "://") {
		if strings.ContainsAny(endpoint, "/?# ") {
			return "", false, fmt.Errorf("endpoint %q is not host:port or an http or https URL", endpoint)
		}
		// A target gRPC can dial: host:port (accepted before, "::x::"
		// made every export fail).
		if _, port, err := net.SplitHostPort(endpoint); err != nil || !validPort(port) {
			return "", false, fmt.Errorf("endpoint %q is not host:port (a port of 1 to 65535) or an http or https URL", endpoint)
		}
		return endpoint, !insecure, nil
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", false, fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", false, fmt.Errorf("endpoint %q is not host:port or an http or https URL", endpoint)
	}
	target = u.Host
	if u.Port() == "" {
		target += ":4317"
	}
	return target, u.Scheme == "https", nil
}
