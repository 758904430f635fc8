package exporter_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/view"
)

// TestInvalidUTF8Replaced: zerostat never writes invalid UTF-8. A
// description, unit or resource attribute with invalid bytes (read from a
// file, say) reaches the payload with each run of bad bytes replaced by
// U+FFFD, so
// the payload decodes in Go and in Python's msgpack (raw=False), which
// refuse invalid UTF-8 anywhere in a payload.
func TestInvalidUTF8Replaced(t *testing.T) {
	m := stats.Int64("exporter/utf8", "latency \xff\xfe of caf\xc3", "By\xff")
	v := &view.View{Measure: m, Aggregation: view.Count()}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	stats.Record(context.Background(), m.M(1))
	var out []byte
	e, err := exporter.New(exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
		out = bytes.Clone(p.Data)
		return nil
	}), exporter.Options{Resource: exporter.Resource{ServiceName: "svc\x80",
		Attributes: []wire.Attribute{{Key: "region\xc0", Value: "eu\xed\xa0\x80"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, err := wire.Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	var got *wire.View
	for i := range p.Views {
		if p.Views[i].Name == "exporter/utf8" {
			got = &p.Views[i]
		}
	}
	if got == nil {
		t.Fatal("view not in the payload")
	}
	if want := "Count of exporter/utf8 recordings: latency \uFFFD of caf\uFFFD"; got.Description != want { // the mapping's, see promname
		t.Errorf("description %q; want %q", got.Description, want)
	}
	if got.Unit != "By\uFFFD" {
		t.Errorf("unit %q", got.Unit)
	}
	if p.Resource[0].Value != "svc\uFFFD" {
		t.Errorf("service.name %q", p.Resource[0].Value)
	}
	if a := p.Resource[len(p.Resource)-4]; a != (wire.Attribute{Key: "region\uFFFD", Value: "eu\uFFFD"}) { // before telemetry.sdk.*
		t.Errorf("attribute %+v", a)
	}
}
