package tag

import (
	"context"
	"testing"
)

var sinkMut Mutator

func BenchmarkUpsert(b *testing.B) {
	k := MustNewKey("method")
	b.ReportAllocs()
	for b.Loop() {
		sinkMut = Upsert(k, "GET")
	}
}

var sinkCtx context.Context

func BenchmarkNew2(b *testing.B) {
	k1, k2 := MustNewKey("method"), MustNewKey("route")
	muts := []Mutator{Upsert(k1, "GET"), Upsert(k2, "/users")}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sinkCtx, _ = New(ctx, muts...)
	}
}
