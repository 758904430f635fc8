package promcheck

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/golang/snappy"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	zsprom "github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/exporter/remotewrite"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/internal/race"
	zsnappy "github.com/zerostat/zerostat/internal/snappy"
)

// writeRequestDesc describes prometheus.WriteRequest as prompb's
// remote.proto and types.proto define the fields remote write 1.0 uses,
// for the official protobuf runtime (dynamicpb) to decode zerostat's
// hand-written bytes.
var writeRequestDesc = sync.OnceValue(func() protoreflect.MessageDescriptor {
	field := func(name string, n int32, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label, msg string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(n), Type: typ.Enum(), Label: label.Enum(), JsonName: proto.String(name)}
		if msg != "" {
			f.TypeName = proto.String(".prometheus." + msg)
		}
		return f
	}
	const (
		rep = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
		opt = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	)
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String("zerostat/remote_write_test.proto"), Package: proto.String("prometheus"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("WriteRequest"), Field: []*descriptorpb.FieldDescriptorProto{
				field("timeseries", 1, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, rep, "TimeSeries")}},
			{Name: proto.String("TimeSeries"), Field: []*descriptorpb.FieldDescriptorProto{
				field("labels", 1, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, rep, "Label"),
				field("samples", 2, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, rep, "Sample")}},
			{Name: proto.String("Label"), Field: []*descriptorpb.FieldDescriptorProto{
				field("name", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
				field("value", 2, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, "")}},
			{Name: proto.String("Sample"), Field: []*descriptorpb.FieldDescriptorProto{
				field("value", 1, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, opt, ""),
				field("timestamp", 2, descriptorpb.FieldDescriptorProto_TYPE_INT64, opt, "")}},
		},
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		panic(err)
	}
	return fd.Messages().ByName("WriteRequest")
})

type rwSample struct {
	key   string // name{sorted labels}
	value float64
	ts    int64
}

// decodeOfficial decodes a WriteRequest with the protobuf runtime, checks
// that re-marshalling it (deterministically) gives back exactly raw, that
// no field was unknown and that labels are sorted, and flattens it.
func decodeOfficial(t testing.TB, raw []byte) []rwSample {
	t.Helper()
	msg := dynamicpb.NewMessage(writeRequestDesc())
	if err := proto.Unmarshal(raw, msg); err != nil {
		t.Fatalf("proto.Unmarshal: %v", err)
	}
	again, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, raw) {
		t.Fatalf("proto.Marshal of the decoded request differs from zerostat's bytes (%d vs %d bytes)", len(again), len(raw))
	}
	md := writeRequestDesc()
	tsd := md.Fields().ByName("timeseries").Message()
	fLabels, fSamples := tsd.Fields().ByName("labels"), tsd.Fields().ByName("samples")
	ld := fLabels.Message()
	sd := fSamples.Message()
	list := msg.Get(md.Fields().ByName("timeseries")).List()
	out := make([]rwSample, 0, list.Len())
	for i := range list.Len() {
		ts := list.Get(i).Message()
		if len(ts.GetUnknown()) != 0 {
			t.Fatalf("time series %d has unknown fields", i)
		}
		var name string
		var ls []string
		prev := ""
		labels := ts.Get(fLabels).List()
		for j := range labels.Len() {
			l := labels.Get(j).Message()
			n, v := l.Get(ld.Fields().ByName("name")).String(), l.Get(ld.Fields().ByName("value")).String()
			if n <= prev {
				t.Fatalf("time series %d: label %q after %q: not sorted", i, n, prev)
			}
			if v == "" {
				t.Fatalf("time series %d: empty value for %q", i, n)
			}
			prev = n
			switch n {
			case "__name__":
				name = v
			case "le":
				// Spelled as in every other output (OpenMetrics's "1.0"),
				// compared by value with the parsed exposition.
				f, err := strconv.ParseFloat(v, 64)
				if err != nil || v != string(promname.AppendOpenMetricsFloat(nil, f)) {
					t.Fatalf("time series %d: le=%q is not a canonical number", i, v)
				}
				ls = append(ls, "le="+strconv.FormatFloat(f, 'g', -1, 64))
			default:
				ls = append(ls, n+"="+v)
			}
		}
		samples := ts.Get(fSamples).List()
		if samples.Len() != 1 || name == "" {
			t.Fatalf("time series %d: %d samples, name %q", i, samples.Len(), name)
		}
		s := samples.Get(0).Message()
		sort.Strings(ls)
		out = append(out, rwSample{
			key:   name + "{" + strings.Join(ls, ",") + "}",
			value: s.Get(sd.Fields().ByName("value")).Float(),
			ts:    s.Get(sd.Fields().ByName("timestamp")).Int(),
		})
	}
	return out
}

func newWriter(tb testing.TB, url string) *remotewrite.Writer {
	if url == "" {
		url = "http://127.0.0.1:1/"
	}
	w, err := remotewrite.New(remotewrite.Options{URL: url, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// The official protobuf runtime decodes zerostat's WriteRequest, and
// re-encodes it to the same bytes; its series are exactly the samples of
// the text exposition as client_golang's parser reads it.
func TestWriteRequestOfficialDecoder(t *testing.T) {
	zerostatFixture(t)
	raw := newWriter(t, "").AppendWriteRequest(nil, 1_700_000_000_123)
	got := map[string]float64{}
	for _, s := range decodeOfficial(t, raw) {
		if s.ts != 1_700_000_000_123 {
			t.Fatalf("%s: timestamp %d", s.key, s.ts)
		}
		if strings.HasPrefix(s.key, namePrefix) {
			got[s.key] = s.value
		}
	}
	want := samples(t, only(zsprom.NewHandler(zsprom.Options{}).AppendFormat(nil, zsprom.FormatText)))
	if len(got) != len(want) {
		t.Errorf("%d remote-write samples; the exposition has %d", len(got), len(want))
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Fatalf("%s: remote write %v (present %v); exposition %v", k, g, ok, v)
		}
	}
	t.Logf("%d time series, %d bytes", len(got), len(raw))
}

// A push reaches an HTTP server as snappy (decoded by
// github.com/golang/snappy) protobuf (decoded by the protobuf runtime),
// with the remote-write headers.
func TestPushDecodesWithReferenceLibraries(t *testing.T) {
	zerostatFixture(t)
	var mu sync.Mutex
	var total int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		for k, v := range map[string]string{"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf", "X-Prometheus-Remote-Write-Version": "0.1.0"} {
			if r.Header.Get(k) != v {
				t.Errorf("%s: %q", k, r.Header.Get(k))
			}
		}
		raw, err := snappy.Decode(nil, body)
		if err != nil {
			t.Errorf("golang/snappy: %v", err)
			http.Error(w, err.Error(), 400)
			return
		}
		n := len(decodeOfficial(t, raw))
		mu.Lock()
		total += n
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	w := newWriter(t, srv.URL)
	if err := w.Push(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if st.Points != uint64(total) || total < nSeries || st.DroppedPoints != 0 {
		t.Errorf("stats %+v; server decoded %d", st, total)
	}
}

func snappyInputs(t testing.TB) map[string][]byte {
	zerostatFixture(t)
	r := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 100_000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	low := make([]byte, 100_000)
	for i := range low {
		low[i] = "abcd"[r.IntN(4)]
	}
	return map[string][]byte{
		"writerequest": newWriter(t, "").AppendWriteRequest(nil, 1_700_000_000_123),
		"exposition":   zsprom.NewHandler(zsprom.Options{}).AppendFormat(nil, zsprom.FormatText),
		"random":       random,
		"lowentropy":   low,
		"zeros":        make([]byte, 200_000),
		"empty":        {},
		"short":        []byte("abcabcabcabcabcabc"),
	}
}

// zerostat's Snappy encoder against github.com/golang/snappy: its
// decoder reads what zerostat writes, and its encoder compresses no
// better.
func TestSnappyAgainstGolang(t *testing.T) {
	var e zsnappy.Encoder
	for name, in := range snappyInputs(t) {
		enc := e.Append(nil, in)
		dec, err := snappy.Decode(nil, enc)
		if err != nil {
			t.Fatalf("%s: golang/snappy cannot decode: %v", name, err)
		}
		if !bytes.Equal(dec, in) {
			t.Fatalf("%s: round trip differs", name)
		}
		if n, err := snappy.DecodedLen(enc); err != nil || n != len(in) {
			t.Errorf("%s: DecodedLen %d, %v", name, n, err)
		}
		// The same scheme as golang/snappy's encoder (64 KiB blocks, the
		// same hash and skipping), so about the same size; not always the
		// same bytes (its assembly finds some matches a byte later).
		ref := snappy.Encode(nil, in)
		if len(enc) > len(ref)+len(ref)/100+2 {
			t.Errorf("%s: %d bytes; golang/snappy %d", name, len(enc), len(ref))
		}
		t.Logf("%s: %d -> %d bytes (golang/snappy %d)", name, len(in), len(enc), len(ref))
	}
}

func FuzzSnappyAgainstGolang(f *testing.F) {
	f.Add([]byte("abcabcabcabcabcabcabcabcXabc"))
	f.Add(bytes.Repeat([]byte{0}, 70_000))
	f.Add([]byte{})
	var e zsnappy.Encoder
	f.Fuzz(func(t *testing.T, in []byte) {
		enc := e.Append(nil, in)
		dec, err := snappy.Decode(nil, enc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dec, in) {
			t.Fatal("round trip differs")
		}

	})
}

func TestRemoteWriteEncodeAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	zerostatFixture(t)
	w := newWriter(t, "")
	var e zsnappy.Encoder
	buf := w.AppendWriteRequest(nil, 1)
	zb := e.Append(nil, buf)
	if n := testing.AllocsPerRun(5, func() {
		buf = w.AppendWriteRequest(buf[:0], 1)
		zb = e.Append(zb[:0], buf)
	}); n != 0 {
		t.Errorf("%v allocs; want 0", n)
	}
}

// discardTransport answers every request 204 without a network.
type discardTransport struct{}

func (discardTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return &http.Response{StatusCode: 204, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

// BenchmarkRemoteWrite10k: one remote write of the 10,000-series fixture
// (100,000 time series: each histogram row is 16 buckets, +Inf, _sum and
// _count). encode: the protobuf WriteRequest and its Snappy compression
// (AppendWriteRequest + internal/snappy). push: Writer.Push through an
// http.Client whose transport discards the requests (2,000 series each).
func BenchmarkRemoteWrite10k(b *testing.B) {
	zerostatFixture(b)
	w := newWriter(b, "")
	var e zsnappy.Encoder
	buf := w.AppendWriteRequest(nil, 1)
	zb := e.Append(nil, buf)
	b.Run("op=encode/impl=zerostat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf = w.AppendWriteRequest(buf[:0], 1)
			zb = e.Append(zb[:0], buf)
		}
		b.ReportMetric(float64(len(buf)), "proto-bytes")
		b.ReportMetric(float64(len(zb)), "snappy-bytes")
	})
	pw, err := remotewrite.New(remotewrite.Options{URL: "http://127.0.0.1:1/", Client: &http.Client{Transport: discardTransport{}}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	if err := pw.Push(context.Background()); err != nil { // warm up: grow the buffers
		b.Fatal(err)
	}
	b.Run("op=push/impl=zerostat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := pw.Push(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSnappy: compressing the fixture's WriteRequest and exposition.
func BenchmarkSnappy(b *testing.B) {
	ins := snappyInputs(b)
	for _, name := range []string{"writerequest", "exposition"} {
		in := ins[name]
		var e zsnappy.Encoder
		dst := make([]byte, 0, snappy.MaxEncodedLen(len(in)))
		for _, impl := range []struct {
			name string
			fn   func() []byte
		}{
			{"zerostat", func() []byte { dst = e.Append(dst[:0], in); return dst }},
			{"golang_snappy", func() []byte { dst = snappy.Encode(dst[:cap(dst)], in); return dst }},
		} {
			b.Run(fmt.Sprintf("input=%s/impl=%s", name, impl.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(in)))
				var out []byte
				for b.Loop() {
					out = impl.fn()
				}
				b.ReportMetric(float64(len(out))/float64(len(in)), "ratio")
			})
		}
	}
}
