package exporter_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/viewtest"
	"github.com/zerostat/zerostat/internal/wiretest"
)

// TestGrownViewExports: rows of a view whose keys grew, recorded before
// and after, reach every exporter with their own labels: the msgpack
// payload (both versions) has a value per key in every row, Prometheus
// one label per present key, RetrieveData one tag per present key.
func TestGrownViewExports(t *testing.T) {
	grow, record := viewtest.Growable(t, "grow/exports")
	record("k", "a")
	// An export before the keys grow: its caches (names, families) are
	// the first view's.
	prom := prometheus.NewHandler(prometheus.Options{})
	prom.AppendFormat(nil, prometheus.FormatText)
	grow("late", "b")
	record("k", "a")
	record("k", "a", "late", "x")
	record("b", "y")
	want := []string{"b=y: 1", "k=a,late=x: 1", "k=a: 2"}

	for _, version := range []int{wire.Version, wire.Version2} {
		var got []string
		for _, b := range wiretest.ExportVersion(t, version) {
			p, err := wire.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range p.Views {
				if v.Name != "grow/exports" {
					continue
				}
				if !slices.Equal(v.Keys, []string{"k", "b", "late"}) && !slices.Equal(v.Keys, []string{"k", "late", "b"}) {
					t.Errorf("version %d: keys %v", version, v.Keys)
				}
				for _, r := range v.Rows {
					var tags []string
					for i, val := range r.Values {
						if val != "" {
							tags = append(tags, v.Keys[i]+"="+val)
						}
					}
					slices.Sort(tags)
					got = append(got, fmt.Sprintf("%s: %d", strings.Join(tags, ","), r.Count))
				}
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("version %d: rows %q; want %q", version, got, want)
		}
	}

	var got []string
	for _, line := range strings.Split(string(prom.AppendFormat(nil, prometheus.FormatText)), "\n") {
		if strings.HasPrefix(line, "grow_exports_total") {
			got = append(got, line)
		}
	}
	wantProm := []string{`grow_exports_total{b="y"} 1`, `grow_exports_total{k="a",late="x"} 1`, `grow_exports_total{k="a"} 2`}
	slices.Sort(got)
	if !slices.Equal(got, wantProm) {
		t.Errorf("Prometheus: %q; want %q", got, wantProm)
	}

	viewtest.Equal(t, "grow/exports", map[string]float64{"b=y": 1, "k=a,late=x": 1, "k=a": 2})
}
