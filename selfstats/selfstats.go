// Package selfstats is zerostat's own health, as views: register them and
// every exporter ships them with the application's views.
//
//	selfstats.Register() // zerostat/exports, zerostat/live_series, ...
//
// The exporters record into the measures below whether or not the views
// are registered (a measure without views costs one atomic load), and
// call RecordViews before each snapshot for the per-view gauges.
//
// # Views
//
//   - zerostat/exports: export cycles by sink and result (ok, error).
//   - zerostat/payload_bytes: bytes per payload sent, by sink (distribution).
//   - zerostat/export_duration: time per export cycle in ms, by sink.
//   - zerostat/dropped_payloads: payloads given up, by sink.
//   - zerostat/retries: send attempts beyond the first, by sink.
//   - zerostat/live_series: live rows per view (last value).
//   - zerostat/overflowed_recordings: recordings aggregated into a view's
//     overflow row since it was registered (last value of the count).
//   - zerostat/evicted_series: series of a view freed after being idle
//     (exporter.Options.EvictIdleAfter) since it was registered (last
//     value of the count).
//   - zerostat/refused_views: views left out of an output because their
//     metric name is an earlier view's (a Prometheus handler, remote
//     write), by sink.
//   - zerostat/callback_failures: snapshots that went out without a
//     callback gauge's or counter's values (package metric, runtime), by
//     callback and reason (panic, timeout, error), since it was registered
//     (last value of the count).
//
// All functions are safe for concurrent use.
package selfstats

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// Tag keys.
var (
	KeySink   = tag.MustNewKey("sink")
	KeyResult = tag.MustNewKey("result")
	KeyView   = tag.MustNewKey("view")
	// KeyCallback and KeyReason tag zerostat/callback_failures.
	KeyCallback = tag.MustNewKey("callback")
	KeyReason   = tag.MustNewKey("reason")
)

// Measures.
var (
	Exports          = stats.Int64("zerostat/exports", "Export cycles, by sink and result", stats.UnitDimensionless)
	PayloadBytes     = stats.Int64("zerostat/payload_bytes", "Bytes per payload sent", stats.UnitBytes)
	ExportDuration   = stats.Float64("zerostat/export_duration", "Time per export cycle", stats.UnitMilliseconds)
	Dropped          = stats.Int64("zerostat/dropped_payloads", "Payloads given up", stats.UnitDimensionless)
	Retries          = stats.Int64("zerostat/retries", "Send attempts beyond the first", stats.UnitDimensionless)
	LiveSeries       = stats.Int64("zerostat/live_series", "Live rows per view", stats.UnitDimensionless)
	Overflowed       = stats.Int64("zerostat/overflowed_recordings", "Recordings aggregated into a view's overflow row", stats.UnitDimensionless)
	Evicted          = stats.Int64("zerostat/evicted_series", "Series freed after being idle", stats.UnitDimensionless)
	RefusedViews     = stats.Int64("zerostat/refused_views", "Views left out of an output because their metric name is another view's", stats.UnitDimensionless)
	CallbackFailures = stats.Int64("zerostat/callback_failures", "Snapshots without a callback's values, by callback and reason", stats.UnitDimensionless)
)

var views = []*view.View{
	{Name: "zerostat/exports", Measure: Exports, Aggregation: view.Count(), TagKeys: []tag.Key{KeySink, KeyResult}},
	{Name: "zerostat/payload_bytes", Measure: PayloadBytes,
		Aggregation: view.Distribution(1<<10, 4<<10, 16<<10, 64<<10, 256<<10, 1<<20, 4<<20), TagKeys: []tag.Key{KeySink}},
	{Name: "zerostat/export_duration", Measure: ExportDuration,
		Aggregation: view.Distribution(0.1, 0.5, 1, 5, 10, 50, 100, 500, 1000, 5000), TagKeys: []tag.Key{KeySink}},
	{Name: "zerostat/dropped_payloads", Measure: Dropped, Aggregation: view.Sum(), TagKeys: []tag.Key{KeySink}},
	{Name: "zerostat/retries", Measure: Retries, Aggregation: view.Sum(), TagKeys: []tag.Key{KeySink}},
	{Name: "zerostat/live_series", Measure: LiveSeries, Aggregation: view.LastValue(), TagKeys: []tag.Key{KeyView}},
	{Name: "zerostat/overflowed_recordings", Measure: Overflowed, Aggregation: view.LastValue(), TagKeys: []tag.Key{KeyView}},
	{Name: "zerostat/evicted_series", Measure: Evicted, Aggregation: view.LastValue(), TagKeys: []tag.Key{KeyView}},
	{Name: "zerostat/refused_views", Measure: RefusedViews, Aggregation: view.Sum(), TagKeys: []tag.Key{KeySink}},
	{Name: "zerostat/callback_failures", Measure: CallbackFailures, Aggregation: view.LastValue(), TagKeys: []tag.Key{KeyCallback, KeyReason}},
}

// Views returns the self-observability views.
func Views() []*view.View { return views }

// Register registers the views.
func Register() error { return view.Register(views...) }

// Unregister unregisters them.
func Unregister() { view.Unregister(views...) }

// Sink records one exporter's events. Build it once per exporter: its
// tagged contexts are built then, so recording allocates nothing.
type Sink struct {
	ok, failed context.Context
}

// NewSink returns the recorder of the sink named name ("http", "otlp").
// An invalid name (not printable ASCII, over 255 bytes) records untagged.
func NewSink(name string) *Sink {
	ok, err1 := tag.New(context.Background(), tag.Upsert(KeySink, name), tag.Upsert(KeyResult, "ok"))
	failed, err2 := tag.New(context.Background(), tag.Upsert(KeySink, name), tag.Upsert(KeyResult, "error"))
	if err1 != nil || err2 != nil {
		ok, failed = context.Background(), context.Background()
	}
	return &Sink{ok: ok, failed: failed}
}

// Export records one export cycle: its outcome and duration, the payloads
// sent, retries made and payloads dropped during it.
func (s *Sink) Export(err error, d time.Duration, retries, dropped int) {
	ctx := s.ok
	if err != nil {
		ctx = s.failed
	}
	stats.Record(ctx, Exports.M(1), ExportDuration.M(float64(d)/float64(time.Millisecond)),
		Retries.M(int64(retries)), Dropped.M(int64(dropped)))
}

// Refused records n views newly left out of the sink's output because
// their metric names collide with other views' (n 0 records nothing).
func (s *Sink) Refused(n int) {
	if n > 0 {
		stats.Record(s.ok, RefusedViews.M(int64(n)))
	}
}

// Payload records one payload sent.
func (s *Sink) Payload(bytes int) { stats.Record(s.ok, PayloadBytes.M(int64(bytes))) }

// viewCtx caches a tagged context per registered view (by its core
// identity), so RecordViews allocates only for views it has not seen.
var (
	viewMu   sync.Mutex
	viewCtxs = map[*core.View]context.Context{}
)

// RecordViews records, for every registered view, its live rows, its
// overflowed recordings and its evicted series, and for every registered
// callback its failures. Exporters call it before each snapshot, after
// core.Collect.
func RecordViews() {
	vs := core.Views()
	viewMu.Lock()
	defer viewMu.Unlock()
	recordCallbacks()
	seen := 0
	for _, v := range vs {
		ctx, ok := viewCtxs[v]
		if !ok {
			c, err := tag.New(context.Background(), tag.Upsert(KeyView, v.Name))
			if err != nil {
				continue
			}
			ctx = c
			viewCtxs[v] = ctx
		}
		seen++
		stats.Record(ctx, LiveSeries.M(int64(v.Agg.Len())), Overflowed.M(int64(v.Agg.Overflowed())),
			Evicted.M(int64(v.Agg.Evicted())))
	}
	if len(viewCtxs) > seen { // forget unregistered views
		live := make(map[*core.View]bool, len(vs))
		for _, v := range vs {
			live[v] = true
		}
		for v := range viewCtxs {
			if !live[v] {
				delete(viewCtxs, v)
			}
		}
	}
}

// cbCtxs caches the tagged contexts of each callback's reasons (panic,
// timeout, error); guarded by viewMu.
var cbCtxs = map[*core.Callback]*[3]context.Context{}

func recordCallbacks() {
	cbs := core.Callbacks()
	for _, c := range cbs {
		ctxs, ok := cbCtxs[c]
		if !ok {
			ctxs = new([3]context.Context)
			for i, r := range [3]string{"panic", "timeout", "error"} {
				ctx, err := tag.New(context.Background(), tag.Upsert(KeyCallback, c.Name), tag.Upsert(KeyReason, r))
				if err != nil {
					ctx = context.Background()
				}
				ctxs[i] = ctx
			}
			cbCtxs[c] = ctxs
		}
		stats.Record(ctxs[0], CallbackFailures.M(int64(c.Panics())))
		stats.Record(ctxs[1], CallbackFailures.M(int64(c.Timeouts())))
		stats.Record(ctxs[2], CallbackFailures.M(int64(c.Errors())))
	}
	if len(cbCtxs) > len(cbs) { // forget unregistered callbacks
		for c := range cbCtxs {
			if !slices.Contains(cbs, c) {
				delete(cbCtxs, c)
			}
		}
	}
}
