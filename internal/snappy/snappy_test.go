package snappy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/zerostat/zerostat/internal/race"
)

func inputs() map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 200_000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	var text bytes.Buffer
	for i := range 20_000 {
		fmt.Fprintf(&text, "http_requests_total{method=%q,route=\"/api/%d\"} %d\n", []string{"GET", "POST"}[i%2], i%97, i*7)
	}
	return map[string][]byte{
		"empty":      {},
		"one":        {'x'},
		"16":         []byte("0123456789abcdef"),
		"17":         []byte("0123456789abcdefg"),
		"zeros":      make([]byte, 300_000),
		"random":     random,
		"text":       text.Bytes(),
		"repeat3":    bytes.Repeat([]byte("abc"), 50_000),
		"longlit":    random[:70_000],
		"block-edge": append(bytes.Repeat([]byte("z"), maxBlockSize-3), random[:100]...),
	}
}

func TestRoundTrip(t *testing.T) {
	var e Encoder
	for name, in := range inputs() {
		enc := e.Append(nil, in)
		if len(enc) > MaxEncodedLen(len(in)) {
			t.Errorf("%s: %d bytes encoded; bound %d", name, len(enc), MaxEncodedLen(len(in)))
		}
		out, err := Decode(enc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(out, in) {
			t.Fatalf("%s: round trip differs", name)
		}
		t.Logf("%s: %d -> %d bytes", name, len(in), len(enc))
	}
	// Compression works: text and repetition shrink a lot.
	ins := inputs()
	for _, name := range []string{"text", "zeros", "repeat3"} {
		if n := len(e.Append(nil, ins[name])); n*4 > len(ins[name]) {
			t.Errorf("%s: %d -> %d bytes; want at least 4x smaller", name, len(ins[name]), n)
		}
	}
}

// Every copy form at its thresholds: a literal of 1, 60, 61, 256, 257,
// 65536 bytes, and matches of 4..200 bytes at offsets 1..3000.
func TestElementThresholds(t *testing.T) {
	for _, n := range []int{1, 59, 60, 61, 62, 255, 256, 257, 65535, 65536, 65537, 1 << 24, 1<<24 + 1} {
		lit := make([]byte, n)
		for i := range lit {
			lit[i] = byte(i * 7)
		}
		got, err := Decode(appendLiteral(binary.AppendUvarint(nil, uint64(n)), lit))
		if err != nil || !bytes.Equal(got, lit) {
			t.Fatalf("literal %d: %v", n, err)
		}
	}
	for _, off := range []int{1, 2, 255, 256, 2047, 2048, 3000, 65535} {
		for length := 4; length <= 200; length++ {
			src := make([]byte, off)
			for i := range src {
				src[i] = byte(i*13 + 1)
			}
			want := append([]byte(nil), src...)
			for range length {
				want = append(want, want[len(want)-off])
			}
			enc := binary.AppendUvarint(nil, uint64(len(want)))
			enc = appendLiteral(enc, src)
			enc = appendCopy(enc, off, length)
			got, err := Decode(enc)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("copy off %d len %d: %v", off, length, err)
			}
		}
	}
}

func TestAppendAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	var e Encoder
	in := inputs()["text"]
	buf := make([]byte, 0, MaxEncodedLen(len(in)))
	if n := testing.AllocsPerRun(10, func() { buf = e.Append(buf[:0], in) }); n != 0 {
		t.Errorf("got %v allocs; want 0", n)
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, in := range inputs() {
		if len(in) < 4096 {
			f.Add(in)
		}
	}
	f.Add(bytes.Repeat([]byte("abcdabcdabcdXabcd"), 100))
	var e Encoder
	f.Fuzz(func(t *testing.T, in []byte) {
		enc := e.Append(nil, in)
		if len(enc) > MaxEncodedLen(len(in)) {
			t.Fatalf("%d bytes encoded; bound %d", len(enc), MaxEncodedLen(len(in)))
		}
		out, err := Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, in) {
			t.Fatal("round trip differs")
		}
	})
}

func BenchmarkAppend(b *testing.B) {
	for _, name := range []string{"text", "random"} {
		in := inputs()[name]
		b.Run("input="+name, func(b *testing.B) {
			var e Encoder
			buf := make([]byte, 0, MaxEncodedLen(len(in)))
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				buf = e.Append(buf[:0], in)
			}
			b.ReportMetric(float64(len(buf))/float64(len(in)), "ratio")
		})
	}
}

func FuzzDecode(f *testing.F) {
	var e Encoder
	f.Add(e.Append(nil, []byte("abcabcabcabcabcabcabcabcabcabc")))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x00})
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _ = Decode(in) // must not panic or over-allocate
	})
}
