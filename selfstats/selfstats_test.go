package selfstats_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/otlp"
	"github.com/zerostat/zerostat/exporter/remotewrite"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/selfstats"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

func TestHealthViewsShipped(t *testing.T) {
	if err := selfstats.Register(); err != nil {
		t.Fatal(err)
	}
	defer selfstats.Unregister()
	k := tag.MustNewKey("k")
	m := stats.Int64("self/app", "", "")
	v := &view.View{Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{k}, CardinalityLimit: 5}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	for i := range 12 {
		ctx, _ := tag.New(context.Background(), tag.Upsert(k, fmt.Sprint(i)))
		stats.Record(ctx, m.M(1))
	}

	var last *wire.Payload
	fail := false
	sink := exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
		if fail {
			return errors.New("down")
		}
		var err error
		last, err = wire.Decode(p.Data)
		return err
	})
	e, err := exporter.New(sink, exporter.Options{Name: "test-sink", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = e.Export(ctx) // ok
	fail = true
	_ = e.Export(ctx) // error
	fail = false
	if err := e.Export(ctx); err != nil { // ok: carries the two before it
		t.Fatal(err)
	}
	find := func(name string) *wire.View {
		for i := range last.Views {
			if last.Views[i].Name == name {
				return &last.Views[i]
			}
		}
		t.Fatalf("view %s not exported", name)
		return nil
	}
	counts := map[string]uint64{}
	ex := find("zerostat/exports")
	for _, r := range ex.Rows {
		counts[fmt.Sprint(r.Values)] = r.Count
	}
	// Keys sorted by name: result, sink.
	if counts["[ok test-sink]"] != 1 || counts["[error test-sink]"] != 1 {
		t.Errorf("zerostat/exports rows %v; want 1 ok and 1 error so far (the current export records after it is sent)", counts)
	}
	live := find("zerostat/live_series")
	gotLive, gotOverflow := -1.0, -1.0
	for _, r := range live.Rows {
		if r.Values[0] == v.Name {
			gotLive = r.Value
		}
	}
	for _, r := range find("zerostat/overflowed_recordings").Rows {
		if r.Values[0] == v.Name {
			gotOverflow = r.Value
		}
	}
	if gotLive != 5 || gotOverflow != 7 {
		t.Errorf("live_series %v, overflowed_recordings %v for %s; want 5 and 7", gotLive, gotOverflow, v.Name)
	}
	if pb := find("zerostat/payload_bytes"); len(pb.Rows) != 1 || pb.Rows[0].Count < 1 {
		t.Errorf("payload_bytes rows %+v", pb.Rows)
	}
}

// TestEverySinkReports: the OTLP and remote-write exporters report to the
// same views as the msgpack exporter, tagged with their sink.
func TestEverySinkReports(t *testing.T) {
	if err := selfstats.Register(); err != nil {
		t.Fatal(err)
	}
	defer selfstats.Unregister()
	m := stats.Int64("self/sinks", "", "")
	v := &view.View{Measure: m, Aggregation: view.Sum()}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	stats.Record(context.Background(), m.M(3))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	o, err := otlp.New(otlp.Options{Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	rw, err := remotewrite.New(remotewrite.Options{URL: srv.URL + "/api/v1/write"})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Export(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rw.Push(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := view.RetrieveData("zerostat/exports")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, r := range rows {
		got[fmt.Sprint(r.Tags)] = r.Data.(*view.CountData).Value
	}
	for _, sink := range []string{"otlp", "remotewrite"} {
		if got[fmt.Sprintf("[{result ok} {sink %s}]", sink)] != 1 {
			t.Errorf("zerostat/exports rows %v; want one ok export from %s", got, sink)
		}
	}
}

// TestEvictedSeriesReported: a delta exporter that evicts idle series
// reports how many per view in zerostat/evicted_series, and live_series
// drops back once they are freed.
func TestEvictedSeriesReported(t *testing.T) {
	if err := selfstats.Register(); err != nil {
		t.Fatal(err)
	}
	defer selfstats.Unregister()
	k := tag.MustNewKey("k")
	m := stats.Int64("self/evict", "", "")
	v := &view.View{Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{k}}
	if err := view.Register(v); err != nil {
		t.Fatal(err)
	}
	defer view.Unregister(v)
	for i := range 3 {
		ctx, _ := tag.New(context.Background(), tag.Upsert(k, fmt.Sprint(i)))
		stats.Record(ctx, m.M(1))
	}
	latest := map[string]float64{} // view name/row -> last value seen
	sink := exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
		pl, err := wire.Decode(p.Data)
		if err != nil {
			return err
		}
		for _, pv := range pl.Views {
			for _, r := range pv.Rows {
				if len(r.Values) == 1 && r.Values[0] == v.Name {
					latest[pv.Name] = r.Value
				}
			}
		}
		return nil
	})
	e, err := exporter.New(sink, exporter.Options{Temporality: exporter.Delta, EvictIdleAfter: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	// Reads the rows, finds them idle and seals them, reads them sealed and
	// frees them; the fourth export reports what the third freed.
	for range 4 {
		if err := e.Export(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if latest["zerostat/evicted_series"] != 3 || latest["zerostat/live_series"] != 0 {
		t.Errorf("evicted_series %v, live_series %v for %s; want 3 and 0", latest["zerostat/evicted_series"], latest["zerostat/live_series"], v.Name)
	}
}
