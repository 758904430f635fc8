package wire_test

import (
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
)

// TestDocExample decodes the worked example of docs/wire-format.md, so the
// specification's bytes stay true.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/wire-format.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "<!-- example-hex")
	j := strings.Index(s, "<!-- end example-hex -->")
	if i < 0 || j < i {
		t.Fatal("no example-hex block in docs/wire-format.md")
	}
	block := s[i:j]
	block = block[strings.Index(block, "```")+3:]
	block = strings.TrimSpace(block[:strings.Index(block, "```")])
	b, err := hex.DecodeString(block)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, "The "+strconv.Itoa(len(b))+"-byte payload") {
		t.Errorf("the document does not say the payload is %d bytes", len(b))
	}
	p, err := wire.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != 1 || p.Temporality != wire.Cumulative || p.Sequence != 1 || !p.Last || len(p.Views) != 2 {
		t.Fatalf("header %+v", p)
	}
	if got := p.End.Sub(p.Start); got <= 0 || got > time.Second {
		t.Errorf("interval %v", got)
	}
	l, r := p.Views[0], p.Views[1]
	if l.Name != "latency" || l.Unit != "ms" || l.Aggregation != wire.Distribution || l.Keys[0] != "route" || len(l.Bounds) != 2 {
		t.Errorf("view 0 %+v", l)
	}
	row := l.Rows[0]
	if row.Values[0] != "/a" || row.Count != 3 || row.Sum != 55.25 || row.Min != 0.25 || row.Max != 50 ||
		row.SumOfSquaredDev != 1507.5416666666665 || len(row.Buckets) != 3 || row.Buckets[0] != 2 || row.Buckets[1] != 1 {
		t.Errorf("distribution row %+v", row)
	}
	if r.Name != "requests" || r.Aggregation != wire.Count || r.Rows[0].Count != 3 ||
		r.Description != "Count of latency recordings: Request latency" {
		t.Errorf("view 1 %+v", r)
	}
	if p.Resource[0] != (wire.Attribute{Key: "service.name", Value: "svc"}) || p.Resource[2].Value != "7" {
		t.Errorf("resource %+v", p.Resource)
	}
}
