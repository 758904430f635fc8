package badinput

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// call runs fn, turning a panic into a test failure.
func call(t *testing.T, name string, fn func() error) (err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s panicked: %v", name, p)
			err = fmt.Errorf("panic")
		}
	}()
	return fn()
}

func TestBadInputEverywhere(t *testing.T) {
	key := tag.MustNewKey("k")
	m := stats.Float64("badinput/m", "", "")
	sink := exporter.FuncSink(func(context.Context, exporter.Payload) error { return nil })
	taken := &view.View{Name: "badinput/taken", Measure: m, Aggregation: view.Count()}
	if err := view.Register(taken); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(taken)
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zw.Write(make([]byte, 8<<20))
	zw.Close()

	for _, tc := range []struct {
		name string
		fn   func() error
		want string // the exact error text
	}{
		// tag
		{"NewKey empty", func() error { _, err := tag.NewKey(""); return err },
			`invalid tag key: want 1 to 255 printable ASCII characters (0x20-0x7e): got ""`},
		{"NewKey too long", func() error { _, err := tag.NewKey(strings.Repeat("k", 256)); return err },
			`invalid tag key: want 1 to 255 printable ASCII characters (0x20-0x7e): got "` + strings.Repeat("k", 256) + `"`},
		{"NewKey control", func() error { _, err := tag.NewKey("a\nb"); return err },
			`invalid tag key: want 1 to 255 printable ASCII characters (0x20-0x7e): got "a\nb"`},
		{"New bad value", func() error { _, err := tag.New(context.Background(), tag.Upsert(key, "caf\xc3\xa9")); return err },
			`invalid tag value: want 0 to 255 printable ASCII characters (0x20-0x7e): key "k" got "café"`},
		{"New zero key", func() error { _, err := tag.New(context.Background(), tag.Insert(tag.Key{}, "v")); return err },
			`invalid tag key: want 1 to 255 printable ASCII characters (0x20-0x7e): got ""`},
		{"New zero Mutator", func() error { _, err := tag.New(context.Background(), tag.Mutator{}); return err },
			`tag: zero Mutator (build one with tag.Insert, tag.Update, tag.Upsert or tag.Delete)`},
		{"Decode version", func() error { _, err := tag.Decode([]byte{7}); return err },
			`tag: malformed binary tag map: unsupported version 7 at offset 0 (supported: 0)`},
		{"Decode huge length", func() error {
			_, err := tag.Decode([]byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
			return err
		}, `tag: malformed binary tag map: key length 18446744073709551615 at offset 2 exceeds the 0 bytes left`},
		// stats
		{"RecordWithTags bad value", func() error {
			return stats.RecordWithTags(context.Background(), []tag.Mutator{tag.Upsert(key, "\x7f")}, m.M(1))
		}, `invalid tag value: want 0 to 255 printable ASCII characters (0x20-0x7e): key "k" got "\x7f"`},
		{"Record NaN and Inf", func() error {
			stats.Record(context.Background(), m.M(math.NaN()), m.M(math.Inf(-1))) // recorded, as OpenCensus does
			return nil
		}, ""},
		// view
		{"Register nil", func() error { return view.Register(nil) }, `view: cannot register: view 1 of 1 is nil`},
		{"Register no measure", func() error { return view.Register(&view.View{Name: "x", Aggregation: view.Sum()}) },
			`view "x": cannot register: Measure is nil`},
		{"Register no aggregation", func() error { return view.Register(&view.View{Name: "x", Measure: m}) },
			`view "x": cannot register: Aggregation is nil`},
		{"Register negative bound", func() error {
			return view.Register(&view.View{Name: "x", Measure: m, Aggregation: view.Distribution(1, -1)})
		}, `view "x": cannot register: bound -1: negative bucket bounds not supported`},
		{"Register NaN bound", func() error {
			return view.Register(&view.View{Name: "x", Measure: m, Aggregation: view.Distribution(math.NaN())})
		}, `view "x": cannot register: bucket bound NaN is not finite`},
		{"Register repeated bound", func() error {
			return view.Register(&view.View{Name: "x", Measure: m, Aggregation: view.Distribution(2, 1, 2)})
		}, `view "x": cannot register: bucket bound 2 is repeated`},
		{"Register exponential maxSize", func() error {
			return view.Register(&view.View{Name: "x", Measure: m, Aggregation: view.ExponentialDistribution(1, 20)})
		}, `view "x": cannot register: exponential distribution maxSize 1 is below 2`},
		{"Register exponential maxScale", func() error {
			return view.Register(&view.View{Name: "x", Measure: m, Aggregation: view.ExponentialDistribution(160, 21)})
		}, `view "x": cannot register: exponential distribution maxScale 21 is outside -10..20`},
		{"Register summary quantile above 1", func() error {
			return view.Register(&view.View{Name: "x", Measure: m, Aggregation: view.Summary(0.5, 1.5)})
		}, `view "x": cannot register: summary quantile 1.5 is outside 0..1`},
		{"Register summary NaN quantile", func() error {
			return view.Register(&view.View{Name: "x", Measure: m, Aggregation: view.Summary(math.NaN())})
		}, `view "x": cannot register: summary quantile 1 of 1 is NaN`},
		{"Register summary unsorted quantiles", func() error {
			return view.Register(&view.View{Name: "x", Measure: m, Aggregation: view.Summary(0.9, 0.5)})
		}, `view "x": cannot register: summary quantiles are not increasing: 0.5 after 0.9`},
		{"Register summary repeated quantile", func() error {
			return view.Register(&view.View{Name: "x", Measure: m, Aggregation: view.Summary(0.5, 0.5)})
		}, `view "x": cannot register: summary quantile 0.5 is repeated`},
		{"metric.NewSummary bad quantile", func() error {
			_, err := metric.NewSummary("x", "", "1", []float64{-0.1}, nil, func(*metric.SummaryObserver) {})
			return err
		}, `metric "x": view "x": cannot register: summary quantile -0.1 is outside 0..1`},
		{"metric.NewSummary nil callback", func() error {
			_, err := metric.NewSummary("x", "", "1", []float64{0.5}, nil, nil)
			return err
		}, `metric "x": cannot register: nil callback`},
		{"Register bad name", func() error { return view.Register(&view.View{Name: "a\tb", Measure: m, Aggregation: view.Sum()}) },
			`view "a\tb": cannot register: name must be printable ASCII`},
		{"Register repeated key", func() error {
			return view.Register(&view.View{Name: "x", Measure: m, Aggregation: view.Sum(), TagKeys: []tag.Key{key, key}})
		}, `view "x": cannot register: tag key "k" is listed twice`},
		{"Register taken name", func() error {
			return view.Register(&view.View{Name: "badinput/taken", Measure: m, Aggregation: view.Sum()})
		}, `view "badinput/taken": cannot register: a different view with the same name is already registered`},
		{"RetrieveData unknown", func() error { _, err := view.RetrieveData("nope"); return err },
			`view "nope": cannot retrieve data: not registered`},
		// exporter
		{"exporter nil sink", func() error { _, err := exporter.New(nil, exporter.Options{}); return err }, `exporter: nil sink`},
		{"exporter small cap", func() error { _, err := exporter.New(sink, exporter.Options{MaxPayloadBytes: 10}); return err },
			`exporter: MaxPayloadBytes 10 is below the minimum of 1024`},
		{"exporter gzip level", func() error {
			_, err := exporter.New(sink, exporter.Options{Compression: exporter.Gzip, GzipLevel: 10})
			return err
		}, `exporter: GzipLevel 10: gzip: invalid compression level: 10`},
		{"exporter eviction with cumulative", func() error {
			_, err := exporter.New(sink, exporter.Options{EvictIdleAfter: 3})
			return err
		}, `exporter: EvictIdleAfter 3 needs Delta temporality: a cumulative reader must keep every series' running total`},
		{"exporter negative eviction", func() error {
			_, err := exporter.New(sink, exporter.Options{Temporality: exporter.Delta, EvictIdleAfter: -1})
			return err
		}, `exporter: EvictIdleAfter -1 is negative`},
		{"otlp eviction with cumulative", func() error { _, err := otlp.New(otlp.Options{EvictIdleAfter: 1}); return err },
			`otlp: EvictIdleAfter 1 needs Delta temporality: a cumulative reader must keep every series' running total`},
		{"otlp bad endpoint", func() error { _, err := otlp.New(otlp.Options{Endpoint: "::nope"}); return err },
			`otlp: Endpoint: parse "::nope": missing protocol scheme`},
		// wire
		{"Decode empty", func() error { _, err := wire.Decode(nil); return err },
			`wire: malformed payload: envelope: msgpack: at offset 0: unexpected end of input: need 1 bytes, have 0`},
		{"Decode version 9", func() error { _, err := wire.Decode([]byte{0x95, 9}); return err },
			`wire: unsupported version 9 (this decoder reads versions 1 and 2)`},
		{"Decode not a payload", func() error { _, err := wire.Decode([]byte("<html>")); return err },
			`wire: malformed payload: envelope: msgpack: at offset 0: want array, got integer (0x3c)`},
		{"ReadFrame over cap", func() error {
			_, err := wire.ReadFrame(bytes.NewReader([]byte{0x10, 0, 0, 0}), nil, 1<<20)
			return err
		}, `wire: payload too large: frame of 268435456 bytes over the cap of 1048576`},
		{"Gunzip bomb", func() error { _, err := wire.Gunzip(bomb.Bytes(), 1<<20); return err },
			`wire: payload too large: decompresses to more than 1048576 bytes`},
	} {
		err := call(t, tc.name, tc.fn)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: unexpected error %q", tc.name, err)
		case tc.want != "" && err == nil:
			t.Errorf("%s: no error; want %q", tc.name, tc.want)
		case err != nil && err.Error() != tc.want:
			t.Errorf("%s:\n got  %q\n want %q", tc.name, err, tc.want)
		}
	}
}
