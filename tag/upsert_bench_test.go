package tag

import "testing"

var sinkMut Mutator

func BenchmarkUpsert(b *testing.B) {
	k := MustNewKey("method")
	b.ReportAllocs()
	for b.Loop() {
		sinkMut = Upsert(k, "GET")
	}
}
