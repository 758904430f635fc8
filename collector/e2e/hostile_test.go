package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/otlp/otlpgrpc"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/hostile"
	"github.com/zerostat/zerostat/internal/testbackend"
)

func TestCollectorHostile(t *testing.T) {
	bin := collectorBinary(t)
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{RemoteWriteReceiver: true})
	dir := t.TempDir()
	zsAddr, httpAddr, grpcAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	cfg := fmt.Sprintf(`
receivers:
  zerostat: {endpoint: %q}
  otlp: {protocols: {http: {endpoint: %q}, grpc: {endpoint: %q}}}
exporters:
  file: {path: %q}
  prometheusremotewrite:
    endpoint: %q
    target_info: {enabled: false}
    resource_to_telemetry_conversion: {enabled: true}
service:
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
  pipelines:
    metrics: {receivers: [zerostat, otlp], exporters: [file, prometheusremotewrite]}
`, zsAddr, httpAddr, grpcAddr, filepath.Join(dir, "pdata.json"), prom.URL+"/api/v1/write")
	col := startCollector(t, bin, cfg, zsAddr, httpAddr, grpcAddr)
	w := hostile.Register(t, "hostile")
	res := func(service string) exporter.Resource {
		return exporter.Resource{ServiceName: service, Host: "h", PID: 1, Attributes: []wire.Attribute{{Key: "env", Value: w.Consts["env"]}}}
	}
	ms, err := exporter.New(&exporter.HTTPSink{URL: "http://" + zsAddr + "/"}, exporter.Options{Timeout: 5 * time.Second, Resource: res("msgpack")})
	if err != nil {
		t.Fatal(err)
	}
	oh, err := otlp.New(otlp.Options{Endpoint: "http://" + httpAddr, Timeout: 5 * time.Second, Resource: res("otlphttp")})
	if err != nil {
		t.Fatal(err)
	}
	og, err := otlpgrpc.New(otlp.Options{Protocol: otlp.ProtocolGRPC, Endpoint: grpcAddr, TLS: otlp.TLS{Insecure: true}, Timeout: 5 * time.Second, Resource: res("otlpgrpc")})
	if err != nil {
		t.Fatal(err)
	}
	defer og.Stop(context.Background())
	for _, e := range []interface{ Export(context.Context) error }{ms, oh, og} {
		if err := e.Export(context.Background()); err != nil {
			t.Errorf("%T: %v", e, err)
		}
	}
	for _, job := range []string{"msgpack", "otlphttp", "otlpgrpc"} {
		var lines []string
		for _, s := range prom.WaitQuery(t, `{job="`+job+`"}`, 30, 30*time.Second) {
			lines = append(lines, hostile.Key(s.Metric["__name__"], s.Metric)+" "+s.Value)
		}
		slices.Sort(lines)
		t.Logf("job %s:\n%s", job, strings.Join(lines, "\n"))
	}
	col.stop(t)
	t.Logf("collector log:\n%s", col.log.String())
	for _, md := range readFile(t, filepath.Join(dir, "pdata.json")) {
		b, _ := (&pmetricJSON{}).marshal(md)
		t.Logf("pdata: %s", b)
	}
}

type pmetricJSON struct{}

func (pmetricJSON) marshal(md pmetric.Metrics) ([]byte, error) { return (&pmetric.JSONMarshaler{}).MarshalMetrics(md) }
