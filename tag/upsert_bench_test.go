package tag

import "testing"

var sinkMut Mutator

// BenchmarkUpsert builds a mutator per call, as a request handler does:
// the value's hash and printable check are most of the cost. Values of 3,
// 12 and 28 bytes (a method, a short route, a templated API route).
func BenchmarkUpsert(b *testing.B) {
	k := MustNewKey("method")
	for _, v := range []string{"GET", "/users/{id}/", "/api/v2/orders/{id}/payments"} {
		b.Run("len="+itoa(len(v)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkMut = Upsert(k, v)
			}
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
