package otlp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLS configures the connection to the receiver from PEM files, as the
// OTLP exporter's variables do
// (https://opentelemetry.io/docs/specs/otel/protocol/exporter/#configuration-options).
// The zero value verifies the receiver against the system's certificate
// authorities, without a client certificate.
type TLS struct {
	// CAFile holds the certificates (PEM) of the authorities that verify
	// the receiver's certificate, instead of the system's
	// (OTEL_EXPORTER_OTLP_CERTIFICATE).
	CAFile string
	// CertFile and KeyFile hold the client's certificate chain and its
	// private key (PEM), for mutual TLS
	// (OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE, OTEL_EXPORTER_OTLP_CLIENT_KEY).
	// Set both or neither.
	CertFile, KeyFile string
	// Insecure, with the grpc Protocol, connects without TLS to an
	// Endpoint that has no scheme (OTEL_EXPORTER_OTLP_INSECURE); an
	// http:// or https:// Endpoint says which itself. OTLP/HTTP reads
	// the URL's scheme only.
	Insecure bool
}

// files reports whether a file is set.
func (t TLS) files() bool { return t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" }

// Config returns the client TLS configuration the files describe (at
// least TLS 1.2; the system's authorities when CAFile is empty). It reads
// the files, once per call: an error names the option and the file.
func (t TLS) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("otlp: TLS.CAFile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("otlp: TLS.CAFile %s: no PEM certificate in it", t.CAFile)
		}
		cfg.RootCAs = pool
	}
	switch {
	case t.CertFile != "" && t.KeyFile != "":
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("otlp: TLS.CertFile %s, TLS.KeyFile %s: %w", t.CertFile, t.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case t.CertFile != "" || t.KeyFile != "":
		return nil, errors.New("otlp: TLS.CertFile and TLS.KeyFile: set both (mutual TLS) or neither")
	}
	return cfg, nil
}
