package wire_test

import (
	"testing"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/wiretest"
)

// BenchmarkDecode decodes a real payload of 5,000 count rows (two keys).
func BenchmarkDecode(b *testing.B) {
	p := wiretest.DenseCounts(b, 5000)
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		if _, err := wire.DecodeLimit(p, 1<<30); err != nil {
			b.Fatal(err)
		}
	}
}
