package encode

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/tinylib/msgp/msgp"
	vm "github.com/vmihailenco/msgpack/v5"
	"google.golang.org/protobuf/proto"

	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
)

// encoders are the implementations of BenchmarkEncode. Each writes the
// fixture's snapshot; run returns the bytes written (valid until the next
// call). check decodes one output and checks it holds the 10,000 rows.
type encoder struct {
	name  string
	setup func(tb testing.TB, f *fixture) (run func() []byte)
	check func(f *fixture, out []byte) error
}

var encoders = []encoder{
	{"zerostat", setupZerostat, checkZerostat},
	{"packer", setupPacker, checkZerostat},
	{"msgp", func(tb testing.TB, f *fixture) func() []byte {
		var buf []byte
		return func() []byte {
			var err error
			if buf, err = f.snap.MarshalMsg(buf[:0]); err != nil {
				tb.Fatalf("msgp MarshalMsg: %v", err)
			}
			return buf
		}
	}, checkMsgp},
	{"vmihailenco", func(tb testing.TB, f *fixture) func() []byte {
		return func() []byte {
			out, err := vm.Marshal(f.snap)
			if err != nil {
				tb.Fatalf("vmihailenco Marshal: %v", err)
			}
			return out
		}
	}, func(f *fixture, out []byte) error {
		var s Snapshot
		if err := vm.Unmarshal(out, &s); err != nil {
			return err
		}
		return sameRows(f, &s)
	}},
	{"json", func(tb testing.TB, f *fixture) func() []byte {
		return func() []byte {
			out, err := json.Marshal(f.snap)
			if err != nil {
				tb.Fatalf("json Marshal: %v", err)
			}
			return out
		}
	}, func(f *fixture, out []byte) error {
		var s Snapshot
		if err := json.Unmarshal(out, &s); err != nil {
			return err
		}
		return sameRows(f, &s)
	}},
	{"otlp", func(tb testing.TB, f *fixture) func() []byte {
		var buf []byte
		return func() []byte {
			var err error
			if buf, err = (proto.MarshalOptions{}).MarshalAppend(buf[:0], f.otlp); err != nil {
				tb.Fatalf("proto MarshalAppend: %v", err)
			}
			return buf
		}
	}, func(f *fixture, out []byte) error {
		var md metricspb.MetricsData
		if err := proto.Unmarshal(out, &md); err != nil {
			return err
		}
		if n := otlpPoints(&md); n != nRows {
			return fmt.Errorf("got %d data points; want %d", n, nRows)
		}
		if !proto.Equal(&md, f.otlp) {
			return fmt.Errorf("decoded MetricsData differs from the one encoded")
		}
		return nil
	}},
}

// setupZerostat exports the registered views (snapshot + encode: more
// work than the others, which encode ready-made structs) to a sink that
// keeps the last payload's bytes by reference.
func setupZerostat(tb testing.TB, f *fixture) func() []byte {
	var last []byte
	ex, err := newExporter(f.resource, func(p exporter.Payload) { last = p.Data })
	if err != nil {
		tb.Fatal(err)
	}
	// A deadline sooner than the send timeout: Export then needs no
	// context of its own per send (creating one allocates).
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	tb.Cleanup(cancel)
	return func() []byte {
		if err := ex.Export(ctx); err != nil {
			tb.Fatalf("Export: %v", err)
		}
		return last // valid until the next Export: the encoder reuses its buffer
	}
}

func checkZerostat(f *fixture, out []byte) error {
	p, err := wire.Decode(out)
	if err != nil {
		return err
	}
	return f.checkWire(p)
}

func checkMsgp(f *fixture, out []byte) error {
	var s Snapshot
	rest, err := s.UnmarshalMsg(out)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%d bytes after the snapshot", len(rest))
	}
	return sameRows(f, &s)
}

// sameRows checks a decoded Snapshot has the fixture's 10,000 rows, with
// the same tag values and numbers.
func sameRows(f *fixture, s *Snapshot) error {
	if n := s.rowCount(); n != nRows {
		return fmt.Errorf("got %d rows; want %d", n, nRows)
	}
	if len(s.Views) != len(f.snap.Views) {
		return fmt.Errorf("got %d views; want %d", len(s.Views), len(f.snap.Views))
	}
	for i, v := range s.Views {
		w := f.snap.Views[i]
		if v.Name != w.Name || len(v.Rows) != len(w.Rows) || !v.Start.Equal(w.Start) {
			return fmt.Errorf("view %d: got %q (%d rows); want %q (%d rows)", i, v.Name, len(v.Rows), w.Name, len(w.Rows))
		}
		for j, r := range v.Rows {
			wr := w.Rows[j]
			ok := fmt.Sprint(r.Values) == fmt.Sprint(wr.Values) && r.Count == wr.Count && r.Value == wr.Value &&
				(r.Dist == nil) == (wr.Dist == nil)
			if ok && r.Dist != nil {
				ok = r.Dist.Min == wr.Dist.Min && r.Dist.Max == wr.Dist.Max && r.Dist.SumSq == wr.Dist.SumSq &&
					fmt.Sprint(r.Dist.Buckets) == fmt.Sprint(wr.Dist.Buckets)
			}
			if !ok {
				return fmt.Errorf("view %q row %d: got %+v; want %+v", v.Name, j, r, wr)
			}
		}
	}
	return nil
}

// TestEncoders checks each encoder's output once (the benchmarks do too,
// on their own outputs) and logs the payload sizes.
func TestEncoders(t *testing.T) {
	f := getFixture(t)
	for _, e := range encoders {
		t.Run(e.name, func(t *testing.T) {
			out := e.setup(t, f)()
			if err := e.check(f, out); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d bytes", e.name, len(out))
		})
	}
}

// BenchmarkEncode encodes the 10,000-row snapshot; benchstat -col /impl
// gives one column per implementation. zerostat's is Exporter.Export:
// snapshot (atomic reads of every series) + encode + the sink call; the
// others encode structs built beforehand.
func BenchmarkEncode(b *testing.B) {
	f := getFixture(b)
	for _, e := range encoders {
		b.Run("impl="+e.name, func(b *testing.B) {
			run := e.setup(b, f)
			out := run()
			if err := e.check(f, out); err != nil {
				b.Fatalf("%s output: %v", e.name, err)
			}
			n := len(out)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				out = run()
			}
			b.StopTimer()
			if len(out) < n-16 || len(out) > n+16 { // zerostat's sequence number may grow a byte
				b.Fatalf("%s: payload of %d bytes; the first was %d", e.name, len(out), n)
			}
			b.ReportMetric(float64(n), "payload-bytes")
		})
	}
}

// BenchmarkGzip compresses our payload and msgp's at gzip levels 1
// (BestSpeed), 6 (DefaultCompression) and 9 (BestCompression), with a
// reused gzip.Writer.
func BenchmarkGzip(b *testing.B) {
	f := getFixture(b)
	payloads := []struct {
		name string
		data []byte
	}{{"zerostat", f.payload}, {"msgp", f.msgp}}
	for _, level := range []int{gzip.BestSpeed, gzip.DefaultCompression, gzip.BestCompression} {
		if level == gzip.DefaultCompression {
			level = 6 // the same as -1; named by number
		}
		for _, p := range payloads {
			b.Run(fmt.Sprintf("level=%d/impl=%s", level, p.name), func(b *testing.B) {
				var buf bytes.Buffer
				zw, err := gzip.NewWriterLevel(&buf, level)
				if err != nil {
					b.Fatal(err)
				}
				compress := func() {
					buf.Reset()
					zw.Reset(&buf)
					if _, err := zw.Write(p.data); err != nil {
						b.Fatal(err)
					}
					if err := zw.Close(); err != nil {
						b.Fatal(err)
					}
				}
				compress()
				zr, err := gzip.NewReader(bytes.NewReader(buf.Bytes()))
				if err != nil {
					b.Fatal(err)
				}
				back, err := io.ReadAll(zr)
				if err != nil || !bytes.Equal(back, p.data) {
					b.Fatalf("gunzip: %v (equal %v)", err, bytes.Equal(back, p.data))
				}
				b.SetBytes(int64(len(p.data)))
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					compress()
				}
				b.StopTimer()
				b.ReportMetric(float64(len(p.data)), "payload-bytes")
				b.ReportMetric(float64(buf.Len()), "gzip-bytes")
			})
		}
	}
}

var _ msgp.Marshaler = (*Snapshot)(nil)
