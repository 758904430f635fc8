package benchmarks

// BenchmarkScale: the cost of each SDK as the number of live series grows
// from 1,000 to 1,000,000 (issue 18). See README.md ("Scale").
//
// One counter keyed by 2 tags; series i has the tag values vals.at(i).
// op=lifecycle builds a fresh SDK instance per run (every series created
// and recorded once, timed), measures its heap and removes it (timed).
// Then one more instance serves the record ops, which visit the series in
// a fixed random permutation (scattered, as requests with many tag
// combinations are), and the collect op, which reads them all. Names are
// BenchmarkScale/series=<n>/sdk=<sdk>/op=<op>/impl=<impl>; impls that
// share an instance (zerostat's natural path and its handles;
// Prometheus's kept child and WithLabelValues) are one sdk.
//
// Heavy: at 1M series each instance takes seconds to build. make bench
// runs it with a small -benchtime; the gate does not.

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"
	octag "go.opencensus.io/tag"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var scaleSizes = []int{1_000, 10_000, 100_000, 1_000_000}

// scaleValues are the tag values of one instance: series i has a[i%1000]
// and b[i/1000], unique per series up to 1M. Each instance has values of
// its own (newScaleValues), made before its build and outside what
// op=lifecycle measures, as constants would be in a program: an instance
// built with the tag sets of an earlier one would find their maps in
// zerostat's process-wide cache of recently built tag maps
// (internal/core/context.go), which serves a tag set seen twice with a
// 24-byte context on a shared map instead of a 224-byte context of its
// own. With one value set for every build, up to 4,096 of each later
// build's contexts could be served so (up to 4 in 10 at 10k series, 0.4%
// at 1M), and make bench read 509 bytes per series at 10k against 568 at
// 1M: a measure of the benchmark's reruns, not of the series count.
type scaleValues struct{ a, b []string }

// scaleGen numbers the value sets.
var scaleGen atomic.Int32

func newScaleValues() *scaleValues {
	g := scaleGen.Add(1)
	v := &scaleValues{make([]string, 1000), make([]string, 1000)}
	for i := range v.a {
		v.a[i] = fmt.Sprintf("a%d.%d", i, g)
		v.b[i] = fmt.Sprintf("b%d.%d", i, g)
	}
	return v
}

// at returns the tag values of series i.
func (v *scaleValues) at(i int) (string, string) { return v.a[i%1000], v.b[i/1000] }

// scalePerm returns a fixed random permutation of 0..n-1: the order the
// record ops visit the series in.
func scalePerm(n int) []int32 {
	r := rand.New(rand.NewPCG(18, uint64(n)))
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	r.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// scaleRecorder is one impl's record loops over an instance. Each impl
// writes its two loops out rather than passing a func(i) to a shared one:
// that call, indirect and not inlined, would add a few ns to every record
// of every impl and flatten the ratios at 1k series. record runs
// b.Loop visiting perm in order (wrapping), parallel runs b.RunParallel,
// each goroutine from its own offset of perm. total returns how many
// records the instance holds, for the check after the loops.
type scaleRecorder struct {
	impl     string
	record   func(b *testing.B, perm []int32)
	parallel func(b *testing.B, perm []int32)
}

// scaleInstance is one SDK instance holding n live series, each recorded
// once.
type scaleInstance struct {
	recorders []scaleRecorder
	// base is the number of records the build made (n, or 2n where two
	// impls each recorded every series once).
	base int64
	// total returns the sum of the recorded values (each record adds 1).
	total func() int64
	// collect reads every series (snapshot/scrape/collect) and returns
	// how many it saw; nil for a record-only instance (the floors).
	collect func() int
	// warm, when set, records through what the benchmark keeps before
	// the record ops, untimed, as a service records through what it keeps
	// (zerostat: a kept context's map attaches a cell of its own on its
	// third record, internal/core/mapcell.go), and returns how many
	// records it made.
	warm func(perm []int32) int64
	// drop releases what the benchmark itself keeps (contexts, handles,
	// children), so that only the SDK holds its series.
	drop func()
	// remove unregisters the metric (or drops the SDK instance).
	remove func()
}

type scaleSDK struct {
	name  string
	build func(b *testing.B, n int, vals *scaleValues) *scaleInstance
	// recordOnly: no SDK, no op=lifecycle or op=collect, no collect
	// func (the floors).
	recordOnly bool
}

var scaleSDKs = []scaleSDK{
	{"zerostat", scaleZerostat, false},
	{"opencensus", scaleOpenCensus, false},
	{"otel", scaleOtel, false},
	{"prometheus", scalePrometheus, false},
	{"victoriametrics", scaleVictoriaMetrics, false},
	{"floor", scaleFloor, true},
}

// parStart hands each RunParallel goroutine its own starting offset.
var parStart atomic.Uint32

func parOffset(n int) int { return int(parStart.Add(1)*7919) % n }

func BenchmarkScale(b *testing.B) {
	for _, n := range scaleSizes {
		b.Run(fmt.Sprintf("series=%d", n), func(b *testing.B) {
			perm := scalePerm(n)
			for _, sdk := range scaleSDKs {
				b.Run("sdk="+sdk.name, func(b *testing.B) { scaleRun(b, sdk, n, perm) })
			}
		})
	}
}

func gc2() {
	// Twice: the first cycle may leave objects with finalizers and
	// cleanups for the second.
	runtime.GC()
	runtime.GC()
}

// runOp runs f as BenchmarkScale/.../op=<op>/impl=<impl>.
//
//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func runOp(b *testing.B, op, impl string, f func(b *testing.B)) {
	b.Run("op="+op, func(b *testing.B) { b.Run("impl="+impl, f) })
}

// scaleRun runs the ops of one SDK at n series.
func scaleRun(b *testing.B, sdk scaleSDK, n int, perm []int32) {
	if !sdk.recordOnly {
		runLifecycle(b, sdk, n)
	}

	// The record and collect ops share one instance.
	inst := sdk.build(b, n, newScaleValues())
	defer func() { inst.drop(); inst.remove() }()
	if !sdk.recordOnly {
		if got := inst.collect(); got != n {
			b.Fatalf("%s: collect saw %d series; want %d", sdk.name, got, n)
		}
	}
	var records int64
	if inst.warm != nil {
		records += inst.warm(perm)
	}
	for _, op := range []string{"record", "record_parallel"} {
		b.Run("op="+op, func(b *testing.B) {
			for _, r := range inst.recorders {
				b.Run("impl="+r.impl, func(b *testing.B) {
					// The garbage of the SDK measured before (its instance
					// was just dropped) and of this one's build is collected
					// now, not by a GC cycle running beside the timed loop:
					// this workload is memory-bound, and a concurrent mark
					// of a large heap doubled a record's time at 100k
					// series in some runs and not others. Every SDK alike.
					gc2()
					b.ResetTimer() // RunParallel's loop does not reset it
					b.ReportAllocs()
					if op == "record" {
						r.record(b, perm)
					} else {
						r.parallel(b, perm)
					}
					records += int64(b.N)
				})
			}
		})
	}
	if got, want := inst.total(), inst.base+records; got != want {
		b.Fatalf("%s: the instance holds %d records; want %d", sdk.name, got, want)
	}
	if sdk.recordOnly {
		return
	}
	runOp(b, "collect", sdk.name, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			inst.collect()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/series")
	})
}

// runLifecycle runs op=lifecycle: each run (one per -count: b.Loop calls
// the function once) builds a fresh instance, measures it and removes it.
// ns/op is the time to create and record one series; B/series the live
// heap per series after GC, the benchmark's own recorders (contexts,
// handles, children) included; unregister-ns/series the removal, from
// the call's start to the end of the garbage collection after it, per
// series; unregister-call-ns/series the call alone.
//
//go:noinline // see TestBenchmarkClosuresNotBuiltByInlining
func runLifecycle(b *testing.B, sdk scaleSDK, n int) {
	runOp(b, "lifecycle", sdk.name, func(b *testing.B) {
		var before, after runtime.MemStats
		vals := newScaleValues()
		gc2()
		runtime.ReadMemStats(&before)
		start := time.Now()
		inst := sdk.build(b, n, vals)
		create := time.Since(start)
		gc2()
		runtime.ReadMemStats(&after)
		if got := inst.collect(); got != n {
			b.Fatalf("%s: collect saw %d series; want %d", sdk.name, got, n)
		}
		inst.drop()
		gc2()
		start = time.Now()
		inst.remove()
		call := time.Since(start)
		runtime.GC()
		removed := time.Since(start)
		for b.Loop() {
			// Nothing: the measurements are above (b.Loop's first call
			// resets the timer and the metrics: report after it).
		}
		b.ReportMetric(float64(create.Nanoseconds())/float64(n), "ns/op")
		b.ReportMetric((float64(after.HeapAlloc)-float64(before.HeapAlloc))/float64(n), "B/series")
		b.ReportMetric(float64(removed.Nanoseconds())/float64(n), "unregister-ns/series")
		b.ReportMetric(float64(call.Nanoseconds())/float64(n), "unregister-call-ns/series")
	})
}

// zerostat: a view (no cardinality limit) over an Int64 measure, Sum.
// impl=zerostat records with stats.Record and a context per series built
// by tag.New; impl=zerostat_handle with a stats.Int64Handle per series.
// Both reach the same series. collect is Exporter.Export (snapshot and
// msgpack encode of the view) to a sink that drops the payload.
func scaleZerostat(b *testing.B, n int, vals *scaleValues) *scaleInstance {
	name := uniq("scale")
	m := stats.Int64(name, "", stats.UnitDimensionless)
	keys := zsKeys(keys2...)
	v := &view.View{Name: name, Measure: m, Aggregation: view.Sum(), TagKeys: keys, CardinalityLimit: -1}
	if err := view.Register(v); err != nil {
		b.Fatalf("zerostat Register: got error %v; want nil", err)
	}
	ctxs := make([]context.Context, n)
	hs := make([]*stats.Int64Handle, n)
	for i := range n {
		va, vb := vals.at(i)
		ctx, err := tag.New(context.Background(), tag.Upsert(keys[0], va), tag.Upsert(keys[1], vb))
		if err != nil {
			b.Fatalf("zerostat tag.New: got error %v; want nil", err)
		}
		stats.Record(ctx, m.M(1))
		ctxs[i] = ctx
		hs[i] = m.Bind(tag.FromContext(ctx))
		hs[i].Record(1) // a handle resolves its series on first use
	}
	rows := 0
	check := true
	sink := exporter.FuncSink(func(_ context.Context, p exporter.Payload) error {
		if !check {
			return nil
		}
		w, err := wire.Decode(p.Data)
		if err != nil {
			return err
		}
		for _, wv := range w.Views { // a large view spans several payloads
			if wv.Name == name {
				rows += len(wv.Rows)
			}
		}
		return nil
	})
	ex, err := exporter.New(sink, exporter.Options{Timeout: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	ectx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	return &scaleInstance{
		base: 2 * int64(n),
		// Two more records through each context, in the scattered order of
		// the record ops: what a service does with a context it keeps
		// before many records (its map's cell attaches on the third).
		warm: func(perm []int32) int64 {
			one := m.M(1)
			for range 2 {
				for _, i := range perm {
					stats.Record(ctxs[i], one)
				}
			}
			return 2 * int64(len(perm))
		},
		recorders: []scaleRecorder{
			{"zerostat", func(b *testing.B, perm []int32) {
				one := m.M(1)
				i := 0
				for b.Loop() {
					stats.Record(ctxs[perm[i]], one)
					if i++; i == len(perm) {
						i = 0
					}
				}
			}, func(b *testing.B, perm []int32) {
				one := m.M(1)
				b.RunParallel(func(pb *testing.PB) {
					i := parOffset(len(perm))
					for pb.Next() {
						stats.Record(ctxs[perm[i]], one)
						if i++; i == len(perm) {
							i = 0
						}
					}
				})
			}},
			{"zerostat_handle", func(b *testing.B, perm []int32) {
				i := 0
				for b.Loop() {
					hs[perm[i]].Record(1)
					if i++; i == len(perm) {
						i = 0
					}
				}
			}, func(b *testing.B, perm []int32) {
				b.RunParallel(func(pb *testing.PB) {
					i := parOffset(len(perm))
					for pb.Next() {
						hs[perm[i]].Record(1)
						if i++; i == len(perm) {
							i = 0
						}
					}
				})
			}},
		},
		total: func() int64 {
			rs, err := view.RetrieveData(name)
			if err != nil {
				b.Fatalf("zerostat RetrieveData: got error %v; want nil", err)
			}
			var t int64
			for _, r := range rs {
				t += int64(r.Data.(*view.SumData).Value)
			}
			return t
		},
		collect: func() int {
			rows = 0
			if err := ex.Export(ectx); err != nil {
				b.Fatalf("zerostat Export: got error %v; want nil", err)
			}
			if !check {
				return n
			}
			check = false
			return rows
		},
		drop:   func() { ctxs, hs = nil, nil },
		remove: func() { view.Unregister(v); cancel() },
	}
}

// OpenCensus: the same view; stats.Record with a context per series.
// collect is view.RetrieveData. Records reach the view through its
// worker goroutine: total reads through the same queue, so it sees them.
func scaleOpenCensus(b *testing.B, n int, vals *scaleValues) *scaleInstance {
	name := uniq("scale")
	m := ocstats.Int64(name, "", ocstats.UnitDimensionless)
	keys := ocKeys(keys2...)
	v := &ocview.View{Name: name, Measure: m, Aggregation: ocview.Sum(), TagKeys: keys}
	if err := ocview.Register(v); err != nil {
		b.Fatalf("opencensus Register: got error %v; want nil", err)
	}
	ctxs := make([]context.Context, n)
	for i := range n {
		va, vb := vals.at(i)
		ctx, err := octag.New(context.Background(), octag.Upsert(keys[0], va), octag.Upsert(keys[1], vb))
		if err != nil {
			b.Fatalf("opencensus tag.New: got error %v; want nil", err)
		}
		ocstats.Record(ctx, m.M(1))
		ctxs[i] = ctx
	}
	retrieve := func() []*ocview.Row {
		rs, err := ocview.RetrieveData(name)
		if err != nil {
			b.Fatalf("opencensus RetrieveData: got error %v; want nil", err)
		}
		return rs
	}
	return &scaleInstance{
		base: int64(n),
		recorders: []scaleRecorder{{"opencensus", func(b *testing.B, perm []int32) {
			one := m.M(1)
			i := 0
			for b.Loop() {
				ocstats.Record(ctxs[perm[i]], one)
				if i++; i == len(perm) {
					i = 0
				}
			}
		}, func(b *testing.B, perm []int32) {
			one := m.M(1)
			b.RunParallel(func(pb *testing.PB) {
				i := parOffset(len(perm))
				for pb.Next() {
					ocstats.Record(ctxs[perm[i]], one)
					if i++; i == len(perm) {
						i = 0
					}
				}
			})
		}}},
		total: func() int64 {
			var t int64
			for _, r := range retrieve() {
				t += int64(r.Data.(*ocview.SumData).Value)
			}
			return t
		},
		collect: func() int { return len(retrieve()) },
		drop:    func() { ctxs = nil },
		remove:  func() { ocview.Unregister(v) },
	}
}

// OpenTelemetry: an Int64Counter of a MeterProvider with a ManualReader
// and no cardinality limit; Add(ctx, 1, metric.WithAttributeSet(set)) with
// the attribute set of each series built once (its fastest form). collect
// is ManualReader.Collect into a reused ResourceMetrics; remove is
// MeterProvider.Shutdown.
func scaleOtel(b *testing.B, n int, vals *scaleValues) *scaleInstance {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r), sdkmetric.WithCardinalityLimit(0))
	c, err := mp.Meter("bench").Int64Counter("scale")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	opts := make([]metric.AddOption, n)
	for i := range n {
		va, vb := vals.at(i)
		opts[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String(keys2[0], va), attribute.String(keys2[1], vb)))
		c.Add(ctx, 1, opts[i])
	}
	var rm metricdata.ResourceMetrics
	collect := func() {
		if err := r.Collect(ctx, &rm); err != nil {
			b.Fatalf("otel Collect: got error %v; want nil", err)
		}
	}
	return &scaleInstance{
		base: int64(n),
		recorders: []scaleRecorder{{"otel", func(b *testing.B, perm []int32) {
			i := 0
			for b.Loop() {
				c.Add(ctx, 1, opts[perm[i]])
				if i++; i == len(perm) {
					i = 0
				}
			}
		}, func(b *testing.B, perm []int32) {
			b.RunParallel(func(pb *testing.PB) {
				i := parOffset(len(perm))
				for pb.Next() {
					c.Add(ctx, 1, opts[perm[i]])
					if i++; i == len(perm) {
						i = 0
					}
				}
			})
		}}},
		total: func() int64 {
			collect()
			var t int64
			for _, p := range rm.ScopeMetrics[0].Metrics[0].Data.(metricdata.Sum[int64]).DataPoints {
				t += p.Value
			}
			return t
		},
		collect: func() int {
			collect()
			return otelPoints(b, &rm, 0)
		},
		drop:   func() { opts = nil },
		remove: func() { _ = mp.Shutdown(ctx); rm = metricdata.ResourceMetrics{} },
	}
}

// Prometheus client_golang: a CounterVec in a fresh Registry.
// impl=prometheus records through the kept child of each series (its
// fastest form); impl=prometheus_labels through WithLabelValues per call.
// collect is Registry.Gather and the text encoding of every family to
// io.Discard, as a scrape does; remove is Registry.Unregister and
// CounterVec.Reset.
func scalePrometheus(b *testing.B, n int, vals *scaleValues) *scaleInstance {
	reg := prometheus.NewRegistry()
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "scale_total"}, keys2)
	reg.MustRegister(vec)
	kids := make([]prometheus.Counter, n)
	for i := range n {
		va, vb := vals.at(i)
		kids[i] = vec.WithLabelValues(va, vb)
		kids[i].Inc()
	}
	scrape := func(w io.Writer) {
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatalf("prometheus Gather: got error %v; want nil", err)
		}
		enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				b.Fatalf("prometheus text Encode: got error %v; want nil", err)
			}
		}
	}
	tally := func() *expoTally {
		var t expoTally
		scrape(&t)
		t.flush()
		return &t
	}
	checked := false
	return &scaleInstance{
		base: int64(n),
		recorders: []scaleRecorder{
			{"prometheus", func(b *testing.B, perm []int32) {
				i := 0
				for b.Loop() {
					kids[perm[i]].Inc()
					if i++; i == len(perm) {
						i = 0
					}
				}
			}, func(b *testing.B, perm []int32) {
				b.RunParallel(func(pb *testing.PB) {
					i := parOffset(len(perm))
					for pb.Next() {
						kids[perm[i]].Inc()
						if i++; i == len(perm) {
							i = 0
						}
					}
				})
			}},
			{"prometheus_labels", func(b *testing.B, perm []int32) {
				i := 0
				for b.Loop() {
					va, vb := vals.at(int(perm[i]))
					vec.WithLabelValues(va, vb).Inc()
					if i++; i == len(perm) {
						i = 0
					}
				}
			}, func(b *testing.B, perm []int32) {
				b.RunParallel(func(pb *testing.PB) {
					i := parOffset(len(perm))
					for pb.Next() {
						va, vb := vals.at(int(perm[i]))
						vec.WithLabelValues(va, vb).Inc()
						if i++; i == len(perm) {
							i = 0
						}
					}
				})
			}},
		},
		total: func() int64 { return int64(tally().total) },
		collect: func() int {
			if !checked {
				checked = true
				return tally().series
			}
			scrape(io.Discard)
			return n
		},
		drop:   func() { kids = nil },
		remove: func() { reg.Unregister(vec); vec.Reset() },
	}
}

// VictoriaMetrics/metrics: a fresh Set; the *Counter of each series,
// created with GetOrCreateCounter(name{labels}), kept and incremented.
// collect is Set.WritePrometheus to io.Discard; remove drops the Set (its
// Set.UnregisterAllMetrics is quadratic: 20 µs per series at 100k, 263 µs
// at 1M, measured once; 6 runs of it at 1M would take 26 minutes).
func scaleVictoriaMetrics(b *testing.B, n int, vals *scaleValues) *scaleInstance {
	s := vm.NewSet()
	cs := make([]*vm.Counter, n)
	for i := range n {
		va, vb := vals.at(i)
		cs[i] = s.GetOrCreateCounter(fmt.Sprintf(`scale_total{method=%q,status=%q}`, va, vb))
		cs[i].Inc()
	}
	tally := func() *expoTally {
		var t expoTally
		s.WritePrometheus(&t)
		t.flush()
		return &t
	}
	checked := false
	return &scaleInstance{
		base: int64(n),
		recorders: []scaleRecorder{{"victoriametrics", func(b *testing.B, perm []int32) {
			i := 0
			for b.Loop() {
				cs[perm[i]].Inc()
				if i++; i == len(perm) {
					i = 0
				}
			}
		}, func(b *testing.B, perm []int32) {
			b.RunParallel(func(pb *testing.PB) {
				i := parOffset(len(perm))
				for pb.Next() {
					cs[perm[i]].Inc()
					if i++; i == len(perm) {
						i = 0
					}
				}
			})
		}}},
		total: func() int64 { return int64(tally().total) },
		collect: func() int {
			if !checked {
				checked = true
				return tally().series
			}
			s.WritePrometheus(io.Discard)
			return n
		},
		drop:   func() { cs = nil },
		remove: func() { s = nil },
	}
}

// The floors: what the machine itself charges for the two shapes a record
// at scale takes, with no SDK around them, in the same scattered order.
// Every series is a 64-byte cell of its own (a separate allocation, as a
// child or a series is), holding a counter.
//
//   - floor_direct: the cell's address is in a slice, as a kept child's
//     or a handle's is: load it, then one atomic add to the cell. A
//     record's cache miss is the add's, and the CPU overlaps the misses
//     of successive records: their addresses are known ahead.
//   - floor_dependent: the slice holds a 224-byte object per series (the
//     size of tag.New's context with 2 tags, allocated in turn with its
//     cell, as that context is with its series), which holds the cell's address: load
//     the object's pointer, then one atomic add to the cell. The add's
//     address comes from a load that misses, as a record through a context
//     reads its series from the context's cache slot. On the project's VM
//     (AMD EPYC, Zen 1) such a record costs about one full memory latency:
//     a scratch loop over 1M cells took 26 ns a record in the first shape,
//     165 in this one, 162 with a plain increment instead of the atomic
//     add, 51 with a load instead of either, and 160 for a chain of
//     dependent loads. So it is the write to an address that a missing
//     load supplies that stops successive records from overlapping; why,
//     no hardware counter here could say (the VM exposes none).
//
// zerostat's stats.Record through a context was of the dependent shape
// (the context's cache slot, then the series); through a kept context whose
// map has its own cell (internal/core/mapcell.go, attached by the warm-up
// records) it is of the direct one, as its handles and Prometheus's kept
// child are: the rows say what each record costs above its shape's floor.
type scaleCell struct {
	v atomic.Int64
	_ [7]int64
}

type scaleRef struct {
	c *scaleCell
	_ [27]uint64 // 224 bytes
}

func scaleFloor(b *testing.B, n int, vals *scaleValues) *scaleInstance {
	cells := make([]*scaleCell, n)
	refs := make([]*scaleRef, n)
	for i := range n {
		cells[i] = new(scaleCell)
		refs[i] = &scaleRef{c: cells[i]}
		cells[i].v.Add(1)
	}
	return &scaleInstance{
		base: int64(n),
		recorders: []scaleRecorder{
			{"floor_direct", func(b *testing.B, perm []int32) {
				i := 0
				for b.Loop() {
					cells[perm[i]].v.Add(1)
					if i++; i == len(perm) {
						i = 0
					}
				}
			}, func(b *testing.B, perm []int32) {
				b.RunParallel(func(pb *testing.PB) {
					i := parOffset(len(perm))
					for pb.Next() {
						cells[perm[i]].v.Add(1)
						if i++; i == len(perm) {
							i = 0
						}
					}
				})
			}},
			{"floor_dependent", func(b *testing.B, perm []int32) {
				i := 0
				for b.Loop() {
					refs[perm[i]].c.v.Add(1)
					if i++; i == len(perm) {
						i = 0
					}
				}
			}, func(b *testing.B, perm []int32) {
				b.RunParallel(func(pb *testing.PB) {
					i := parOffset(len(perm))
					for pb.Next() {
						refs[perm[i]].c.v.Add(1)
						if i++; i == len(perm) {
							i = 0
						}
					}
				})
			}},
		},
		total: func() int64 {
			var t int64
			for _, c := range cells {
				t += c.v.Load()
			}
			return t
		},
		drop:   func() {},
		remove: func() { cells, refs = nil, nil },
	}
}
