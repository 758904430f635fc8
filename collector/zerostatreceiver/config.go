package zerostatreceiver

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"

	"github.com/zerostat/zerostat/exporter/receiver"
)

// Defaults of Config.
const (
	// DefaultEndpoint is where `zerostat receive` listens too.
	DefaultEndpoint = "localhost:4319"
	// DefaultPath is the URL path payloads are POSTed to.
	DefaultPath = "/"
	// DefaultMaxRequestBodySize caps a body as sent (receiver.Handler's
	// MaxBodyBytes default, not confighttp's 20 MiB).
	DefaultMaxRequestBodySize = receiver.DefaultMaxBodyBytes
)

// Config is the receiver's configuration. The HTTP server's settings are
// confighttp's (endpoint, tls, auth, cors, timeouts, ...), with
// max_request_body_size capping a body as sent; the other caps are
// receiver.Handler's (exporter/receiver), which bound the memory a request
// and all requests together may hold (see the package doc).
type Config struct {
	confighttp.ServerConfig `mapstructure:",squash"`

	// Path is the URL path payloads are POSTed to (default "/").
	Path string `mapstructure:"path"`
	// MaxDecompressedBytes caps a gzip body once decompressed (default
	// 8 MiB).
	MaxDecompressedBytes int `mapstructure:"max_decompressed_bytes"`
	// MaxDecodedBytes caps the memory of one decoded payload (default
	// 64 MiB: a 1 MiB payload, zerostat's exporter's default cap, decodes
	// to at most 56 MiB).
	MaxDecodedBytes int `mapstructure:"max_decoded_bytes"`
	// MaxInflightBytes caps what all requests being served hold together,
	// the pdata they are converted into included (default 256 MiB, never
	// less than one request's caps together); a request past it is
	// answered 503 with Retry-After, one that could never fit 413.
	MaxInflightBytes int64 `mapstructure:"max_inflight_bytes"`

	_ struct{} // no unkeyed literals
}

var _ component.Config = (*Config)(nil)

// DefaultMaxInflightBytes is max_inflight_bytes's default: twice
// exporter/receiver's, since a request here holds the pdata it is
// converted into beside its decoded payload (up to 2.5 times the decoded
// payload's size, for rows of many tags), so that one request at the
// default caps always fits: at most 64 MiB decoded and 160 MiB of pdata.
const DefaultMaxInflightBytes = 2 * receiver.DefaultMaxInflightBytes

func createDefaultConfig() component.Config {
	sc := confighttp.NewDefaultServerConfig()
	sc.NetAddr.Endpoint = DefaultEndpoint
	sc.MaxRequestBodySize = DefaultMaxRequestBodySize
	return &Config{
		ServerConfig:         sc,
		Path:                 DefaultPath,
		MaxDecompressedBytes: receiver.DefaultMaxDecompressedBytes,
		MaxDecodedBytes:      receiver.DefaultMaxDecodedBytes,
		MaxInflightBytes:     DefaultMaxInflightBytes,
	}
}

// Validate reports every setting that is wrong, each named. The Collector
// calls it when it loads the configuration; the confighttp fields are
// validated by confighttp.
func (c *Config) Validate() error {
	var errs []error
	if c.NetAddr.Endpoint == "" {
		errs = append(errs, errors.New("endpoint: must be set (host:port)"))
	}
	if !strings.HasPrefix(c.Path, "/") {
		errs = append(errs, fmt.Errorf("path: %q must start with /", c.Path))
	}
	if c.MaxRequestBodySize <= 0 {
		errs = append(errs, fmt.Errorf("max_request_body_size: %d must be positive", c.MaxRequestBodySize))
	}
	if c.MaxDecompressedBytes <= 0 {
		errs = append(errs, fmt.Errorf("max_decompressed_bytes: %d must be positive", c.MaxDecompressedBytes))
	}
	if c.MaxDecodedBytes <= 0 {
		errs = append(errs, fmt.Errorf("max_decoded_bytes: %d must be positive", c.MaxDecodedBytes))
	}
	if c.MaxInflightBytes <= 0 {
		errs = append(errs, fmt.Errorf("max_inflight_bytes: %d must be positive", c.MaxInflightBytes))
	} else if one := c.MaxRequestBodySize + int64(c.MaxDecompressedBytes) + int64(c.MaxDecodedBytes); c.MaxInflightBytes < one &&
		c.MaxRequestBodySize > 0 && c.MaxDecompressedBytes > 0 && c.MaxDecodedBytes > 0 {
		errs = append(errs, fmt.Errorf("max_inflight_bytes: %d is less than one request's caps together "+
			"(max_request_body_size + max_decompressed_bytes + max_decoded_bytes = %d)", c.MaxInflightBytes, one))
	}
	if len(c.CompressionAlgorithms) > 0 {
		errs = append(errs, errors.New("compression_algorithms: must be left unset: the receiver decompresses "+
			"gzip itself, within max_decompressed_bytes and its memory budget"))
	}
	return errors.Join(errs...)
}

// handler returns the receiver.Handler the configuration describes.
func (c *Config) handler() *receiver.Handler {
	return &receiver.Handler{
		MaxBodyBytes:         c.MaxRequestBodySize,
		MaxDecompressedBytes: c.MaxDecompressedBytes,
		MaxDecodedBytes:      c.MaxDecodedBytes,
		MaxInflightBytes:     c.MaxInflightBytes,
		ReadTimeout:          bodyTimeout(c.WriteTimeout),
	}
}

// bodyTimeout is how long the handler reads a body: its default (30 s),
// but ending before the server's write_timeout does (by a quarter of it,
// at most 5 s), so that the 408 it answers a stalled body with is
// written. With the Collector's defaults (write_timeout 30 s) that is
// 25 s; before, both were 30 s, and the server closed the connection with
// no answer.
func bodyTimeout(writeTimeout time.Duration) time.Duration {
	t := receiver.DefaultReadTimeout
	if writeTimeout > 0 {
		t = min(t, writeTimeout-min(5*time.Second, writeTimeout/4))
	}
	return t
}
