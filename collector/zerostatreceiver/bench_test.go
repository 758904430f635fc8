package zerostatreceiver

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/zerostat/zerostat/collector/internal/ingesttest"
	"github.com/zerostat/zerostat/exporter/wire"
)

// BenchmarkDecode is the receivers' own work on a 10,000-series
// snapshot, in process: msgpack decoded and converted to pdata, against
// OTLP unmarshalled to pdata (what the otlp receiver does with a body).
// collector/e2e's BenchmarkCollectorIngest measures a whole Collector.
func BenchmarkDecode(b *testing.B) {
	ingesttest.Register(b, ingesttest.Series)
	bodies := ingesttest.Bodies(b)
	for _, name := range []string{"msgpack", "msgpack2"} {
		b.Run(name, func(b *testing.B) {
			body := bodies[name+"/plain"]
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := wire.Decode(body)
				if err != nil {
					b.Fatal(err)
				}
				Convert(p, pmetric.NewMetrics())
			}
		})
	}
	b.Run("otlp", func(b *testing.B) {
		body := bodies["otlp/plain"]
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
