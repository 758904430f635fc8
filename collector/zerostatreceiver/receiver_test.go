package zerostatreceiver

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/receiver"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/wiretest"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func TestFactory(t *testing.T) {
	f := NewFactory()
	if f.Type().String() != "zerostat" || f.MetricsStability() != component.StabilityLevelAlpha {
		t.Fatalf("type %s, stability %v; want zerostat, alpha", f.Type(), f.MetricsStability())
	}
	cfg := f.CreateDefaultConfig().(*Config)
	if err := componenttest.CheckConfigStruct(cfg); err != nil {
		t.Error(err)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Errorf("default config: %v", err)
	}
	if cfg.NetAddr.Endpoint != DefaultEndpoint || cfg.Path != "/" || cfg.MaxRequestBodySize != receiver.DefaultMaxBodyBytes ||
		cfg.MaxDecompressedBytes != receiver.DefaultMaxDecompressedBytes || cfg.MaxDecodedBytes != receiver.DefaultMaxDecodedBytes ||
		cfg.MaxInflightBytes != DefaultMaxInflightBytes {
		t.Errorf("defaults: %+v", cfg)
	}
	if _, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(Type), cfg, consumertest.NewNop()); err == nil {
		t.Error("a traces receiver was created; want metrics only")
	}
}

// TestConfigUnmarshal: a configuration as a Collector's YAML gives it.
func TestConfigUnmarshal(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cm := confmap.NewFromStringMap(map[string]any{
		"endpoint":               "0.0.0.0:9999",
		"path":                   "/zerostat",
		"max_request_body_size":  1 << 20,
		"max_decompressed_bytes": 2 << 20,
		"max_decoded_bytes":      4 << 20,
		"max_inflight_bytes":     64 << 20,
	})
	if err := cm.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.NetAddr.Endpoint != "0.0.0.0:9999" || cfg.Path != "/zerostat" || cfg.MaxRequestBodySize != 1<<20 ||
		cfg.MaxDecompressedBytes != 2<<20 || cfg.MaxDecodedBytes != 4<<20 || cfg.MaxInflightBytes != 64<<20 {
		t.Errorf("got %+v", cfg)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Error(err)
	}
	if err := confmap.NewFromStringMap(map[string]any{"max_decoded": 1}).Unmarshal(cfg); err == nil {
		t.Error("an unknown key was accepted")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no endpoint", func(c *Config) { c.NetAddr.Endpoint = "" }, "endpoint: must be set"},
		{"relative path", func(c *Config) { c.Path = "v1" }, `path: "v1" must start with /`},
		{"body", func(c *Config) { c.MaxRequestBodySize = 0 }, "max_request_body_size: 0 must be positive"},
		{"decompressed", func(c *Config) { c.MaxDecompressedBytes = -1 }, "max_decompressed_bytes: -1 must be positive"},
		{"decoded", func(c *Config) { c.MaxDecodedBytes = 0 }, "max_decoded_bytes: 0 must be positive"},
		{"inflight", func(c *Config) { c.MaxInflightBytes = 0 }, "max_inflight_bytes: 0 must be positive"},
		{"inflight below one request", func(c *Config) { c.MaxInflightBytes = 1 << 20 },
			"max_inflight_bytes: 1048576 is less than one request's caps together"},
		{"compression", func(c *Config) { c.CompressionAlgorithms = []string{"zstd"} }, "compression_algorithms: must be left unset"},
	} {
		cfg := NewFactory().CreateDefaultConfig().(*Config)
		c.edit(cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error containing %q", c.name, err, c.want)
		}
	}
	// Every fault is named, not only the first.
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Path, cfg.MaxDecodedBytes = "x", 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "path") || !strings.Contains(err.Error(), "max_decoded_bytes") {
		t.Errorf("two faults: %v; want both named", err)
	}
}

// freeAddr returns a loopback address nothing listens on (for the moment).
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start starts a receiver with cfg's edits, consuming into next; it
// returns its URL.
func start(t testing.TB, next consumer.Metrics, edit func(*Config)) string {
	t.Helper()
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.NetAddr.Endpoint = freeAddr(t)
	if edit != nil {
		edit(cfg)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	r, err := NewFactory().CreateMetrics(context.Background(), receivertest.NewNopSettings(Type), cfg, next)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return "http://" + cfg.NetAddr.Endpoint + cfg.Path
}

// snapshot registers a Count view, records n, and returns one payload.
func snapshot(t testing.TB, name string, n int) []byte {
	t.Helper()
	m := stats.Int64(name, "things", stats.UnitDimensionless)
	v := &view.View{Name: name, Description: "counted", Measure: m, Aggregation: view.Count()}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	for range n {
		stats.Record(context.Background(), m.M(1))
	}
	return export(t)
}

func post(t testing.TB, url, ctype, encoding string, body io.Reader) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, body)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func gz(b []byte) []byte {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(b)
	w.Close()
	return z.Bytes()
}

// TestStatuses: the receiver answers as `zerostat receive` does, through
// the Collector's HTTP server (confighttp), and stores only what it
// answered 204.
func TestStatuses(t *testing.T) {
	good := snapshot(t, "zr/statuses", 3)
	sink := new(consumertest.MetricsSink)
	url := start(t, sink, func(c *Config) { c.MaxRequestBodySize, c.MaxDecompressedBytes = 1<<20, 1<<20 })
	stored := 0
	for _, c := range []struct {
		name, ctype, encoding string
		body                  []byte
		chunked               bool
		status                int
		want                  string
	}{
		{"good", wire.ContentType, "", good, false, 204, ""},
		{"good gzip", wire.ContentType, "gzip", gz(good), false, 204, ""},
		{"good chunked", wire.ContentType, "", good, true, 204, ""},
		{"malformed", wire.ContentType, "", good[:len(good)/2], false, 400, "malformed payload"},
		{"wrong type", "application/x-protobuf", "", good, false, 415, "Content-Type must be application/msgpack"},
		{"wrong encoding", wire.ContentType, "zstd", good, false, 415, `unsupported Content-Encoding "zstd"`},
		{"too large", wire.ContentType, "", make([]byte, 1<<20+1), false, 413, "body over 1048576 bytes"},
		{"too large chunked", wire.ContentType, "", make([]byte, 1<<20+1), true, 413, "body over 1048576 bytes"},
		{"gzip bomb", wire.ContentType, "gzip", gz(make([]byte, 4<<20)), false, 413, "decompresses to more than 1048576 bytes"},
	} {
		var body io.Reader = bytes.NewReader(c.body)
		if c.chunked {
			body = io.MultiReader(body)
		}
		status, _, msg := post(t, url, c.ctype, c.encoding, body)
		if status != c.status || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %q; want %d containing %q", c.name, status, msg, c.status, c.want)
		}
		if status == 204 {
			stored++
		}
		if got := len(sink.AllMetrics()); got != stored {
			t.Errorf("%s: %d batches stored; want %d", c.name, got, stored)
		}
	}
	for _, md := range sink.AllMetrics() {
		if n := countTotal(md, "zr/statuses"); n != 3 {
			t.Errorf("stored count %d; want 3", n)
		}
	}
}

// countTotal returns the value of the Count metric name's only point.
func countTotal(md pmetric.Metrics, name string) int64 {
	var n int64 = -1
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				if m := ms.At(k); m.Name() == name {
					n = m.Sum().DataPoints().At(0).IntValue()
				}
			}
		}
	}
	return n
}

// TestBackPressure: a pipeline that refuses is answered 503 with
// Retry-After (a permanent refusal 400), and zerostat's exporter, which
// retries on 503, delivers the payload once the pipeline accepts again.
func TestBackPressure(t *testing.T) {
	good := snapshot(t, "zr/backpressure", 5)
	errFull := errors.New("sending queue is full")
	for _, c := range []struct {
		name       string
		err        error
		status     int
		retryAfter string
	}{
		{"retryable", errFull, 503, "1"},
		{"permanent", consumererror.NewPermanent(errors.New("bad data")), 400, ""},
	} {
		url := start(t, consumertest.NewErr(c.err), nil)
		status, h, msg := post(t, url, wire.ContentType, "", bytes.NewReader(good))
		if status != c.status || h.Get("Retry-After") != c.retryAfter || !strings.Contains(msg, c.err.Error()) {
			t.Errorf("%s: %d, Retry-After %q, %q; want %d, %q, naming %q", c.name, status, h.Get("Retry-After"), msg,
				c.status, c.retryAfter, c.err)
		}
	}

	// The exporter against a pipeline that refuses twice, then accepts.
	refusals := make(chan struct{}, 2)
	refusals <- struct{}{}
	refusals <- struct{}{}
	sink := new(consumertest.MetricsSink)
	next, err := consumer.NewMetrics(func(ctx context.Context, md pmetric.Metrics) error {
		select {
		case <-refusals:
			return errFull
		default:
			return sink.ConsumeMetrics(ctx, md)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	url := start(t, next, nil)
	e, err := exporter.New(&exporter.HTTPSink{URL: url}, exporter.Options{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatalf("export through two refusals: %v", err)
	}
	if len(refusals) != 0 || len(sink.AllMetrics()) != 1 || countTotal(sink.AllMetrics()[0], "zr/backpressure") != 5 {
		t.Errorf("%d refusals left, %d batches stored; want 0 and 1 with count 5", len(refusals), len(sink.AllMetrics()))
	}
}

// TestInflightBudget: concurrent requests beyond max_inflight_bytes are
// answered 503 with Retry-After while the pipeline holds the others'
// payloads (each reserved at its decoded size), and all those held are
// stored once it lets them go.
func TestInflightBudget(t *testing.T) {
	good := snapshotRows(t, "zr/budget", 2000)
	p, err := wire.Decode(good)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	entered := make(chan struct{}, 64)
	sink := new(consumertest.MetricsSink)
	next, _ := consumer.NewMetrics(func(ctx context.Context, md pmetric.Metrics) error {
		entered <- struct{}{}
		<-release
		return sink.ConsumeMetrics(ctx, md)
	})
	// The smallest budget allowed: one request's caps together.
	capBytes := 2 * p.MemSize()
	budget := 3 * capBytes
	url := start(t, next, func(c *Config) {
		c.MaxRequestBodySize, c.MaxDecompressedBytes, c.MaxDecodedBytes = int64(capBytes), capBytes, capBytes
		c.MaxInflightBytes = int64(budget)
	})
	type answer struct {
		status int
		retry  string
	}
	answers := make(chan answer, 64)
	held := 0
	for held < 64 {
		go func() {
			s, h, _ := post(t, url, wire.ContentType, "", bytes.NewReader(good))
			answers <- answer{s, h.Get("Retry-After")}
		}()
		select {
		case <-entered:
			held++
			continue
		case a := <-answers:
			if a.status != 503 || a.retry != "1" {
				t.Fatalf("a request over the budget: %d, Retry-After %q; want 503, 1", a.status, a.retry)
			}
		}
		break
	}
	close(release)
	t.Logf("%d requests held payloads of %d bytes within a budget of %d", held, p.MemSize(), budget)
	// Each holds its decoded payload and the pdata made from it.
	per := p.MemSize() + int(convertBytes(p))
	if held < 1 || held > budget/per {
		t.Errorf("%d requests held payloads of %d bytes (and %d of pdata) at once within a budget of %d; want 1 to %d",
			held, p.MemSize(), convertBytes(p), budget, budget/per)
	}
	for range held {
		if a := <-answers; a.status != 204 {
			t.Errorf("a held request: %d; want 204", a.status)
		}
	}
	if got := len(sink.AllMetrics()); got != held {
		t.Errorf("stored %d; want %d", got, held)
	}
}

// snapshotRows registers a Count view with one tag key and records one
// row per value 0..rows-1; it returns one payload.
func snapshotRows(t testing.TB, name string, rows int) []byte {
	t.Helper()
	k := tag.MustNewKey("row")
	m := stats.Int64(name, "things", stats.UnitDimensionless)
	v := &view.View{Name: name, Measure: m, TagKeys: []tag.Key{k}, Aggregation: view.Count()}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(v) })
	for i := range rows {
		ctx, err := tag.New(context.Background(), tag.Upsert(k, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		stats.Record(ctx, m.M(1))
	}
	return export(t)
}

// export returns one payload of every registered view.
func export(t testing.TB) []byte {
	t.Helper()
	return wiretest.Export(t)[0]
}
