// Package sample stands for any Go project with benchmarks, for the
// commands the README gives under "benchgate, on this repository or any
// Go project": bench.rules checks them, new.txt is one run of them
// (go test -run '^$' -bench . -benchmem -count 6 ./... > new.txt).
package sample

import (
	"fmt"
	"testing"
)

var sink int

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func BenchmarkSum(b *testing.B) {
	for _, n := range []int{10, 10000} {
		xs := make([]int, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink = sum(xs)
			}
		})
	}
}
