package otel_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	otelglobal "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/zerostat/zerostat/internal/otelenv"
	zotel "github.com/zerostat/zerostat/otel"
	"github.com/zerostat/zerostat/view"
)

// aggOf returns the aggregation of the view of instrument name, as
// "explicit", "exp size/scale" or the type's name.
func aggOf(t *testing.T, p *zotel.MeterProvider, name string) string {
	t.Helper()
	v := view.Find(p.ViewName(name))
	if v == nil {
		t.Fatalf("no view for %q", name)
	}
	switch a := v.Aggregation; a.Type {
	case view.AggTypeDistribution:
		return fmt.Sprintf("explicit %v", a.Buckets)
	case view.AggTypeExponentialDistribution:
		return fmt.Sprintf("exp %d/%d", a.MaxSize, a.MaxScale)
	default:
		return a.Type.String()
	}
}

// TestExponentialSelection: a histogram is exponential when
// OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION says
// base2_exponential_bucket_histogram (any case; with the SDK's 160 and
// 20), or WithExponentialHistograms (over the variable), or
// WithExponentialHistogram for its name (over both, whatever the case);
// explicit otherwise, or when the variable says explicit_bucket_histogram.
// An unknown value of the variable is reported (an otelenv.Ignored naming
// it) and ignored. Invalid option arguments are reported naming the
// argument, the option is ignored, and the creation of each histogram it
// would have selected returns that error. Counters are never affected.
func TestExponentialSelection(t *testing.T) {
	for _, tc := range []struct {
		name       string
		env        string
		opts       []zotel.Option
		lat, size  string // the aggregations of histograms "lat" and "Size"
		warn       string // what the one reported error says
		latErr     string // what lat's creation error says
		sizeErr    string
		advisory   []float64 // lat's advisory boundaries
		latAdvised string
	}{
		{name: "default", lat: "explicit [0 5 10 25 50 75 100 250 500 750 1000 2500 5000 7500 10000]", size: "explicit"},
		{name: "env", env: "base2_exponential_bucket_histogram", lat: "exp 160/20", size: "exp 160/20"},
		{name: "env_case", env: " Base2_Exponential_Bucket_Histogram ", lat: "exp 160/20", size: "exp 160/20"},
		{name: "env_explicit", env: "explicit_bucket_histogram", lat: "explicit", size: "explicit"},
		{name: "env_unknown", env: "exponential", lat: "explicit", size: "explicit", warn: zotel.EnvHistogramAggregation + `="exponential"`},
		{name: "all", env: "explicit_bucket_histogram", opts: []zotel.Option{zotel.WithExponentialHistograms(40, 10)}, lat: "exp 40/10", size: "exp 40/10"},
		{name: "all_over_env", env: "base2_exponential_bucket_histogram", opts: []zotel.Option{zotel.WithExponentialHistograms(2, -10)}, lat: "exp 2/-10", size: "exp 2/-10"},
		{name: "last_all_wins", opts: []zotel.Option{zotel.WithExponentialHistograms(40, 10), zotel.WithExponentialHistograms(50, 0)}, lat: "exp 50/0", size: "exp 50/0"},
		{name: "one", opts: []zotel.Option{zotel.WithExponentialHistogram("LAT", 8, 3)}, lat: "exp 8/3", size: "explicit"},
		{name: "one_over_env", env: "base2_exponential_bucket_histogram", opts: []zotel.Option{zotel.WithExponentialHistogram("lat", 8, 3)}, lat: "exp 8/3", size: "exp 160/20"},
		{name: "one_over_all", opts: []zotel.Option{zotel.WithExponentialHistogram("lat", 8, 3), zotel.WithExponentialHistograms(40, 10)}, lat: "exp 8/3", size: "exp 40/10"},
		{name: "last_one_wins", opts: []zotel.Option{zotel.WithExponentialHistogram("lat", 8, 3), zotel.WithExponentialHistogram("Lat", 9, 4)}, lat: "exp 9/4", size: "explicit"},
		{name: "bad_size", env: "base2_exponential_bucket_histogram", opts: []zotel.Option{zotel.WithExponentialHistograms(1, 20)},
			lat: "exp 160/20", size: "exp 160/20", warn: "maxSize 1 is below 2", latErr: "maxSize 1", sizeErr: "maxSize 1"},
		{name: "bad_scale_high", opts: []zotel.Option{zotel.WithExponentialHistograms(160, 21)},
			lat: "explicit", size: "explicit", warn: "maxScale 21 is outside -10..20", latErr: "maxScale 21", sizeErr: "maxScale 21"},
		{name: "bad_scale_low", opts: []zotel.Option{zotel.WithExponentialHistogram("lat", 160, -11), zotel.WithExponentialHistograms(10, 5)},
			lat: "exp 10/5", size: "exp 10/5", warn: `WithExponentialHistogram("lat"): maxScale -11`, latErr: "maxScale -11"},
		{name: "invalid_after_valid", opts: []zotel.Option{zotel.WithExponentialHistograms(40, 10), zotel.WithExponentialHistograms(0, 5)},
			lat: "exp 40/10", size: "exp 40/10", warn: "maxSize 0 is below 2", latErr: "maxSize 0", sizeErr: "maxSize 0"},
		{name: "advisory_ignored", opts: []zotel.Option{zotel.WithExponentialHistograms(40, 10)}, lat: "exp 40/10", size: "exp 40/10",
			advisory: []float64{1, 2, 3}},
		{name: "bad_advisory_ignored", opts: []zotel.Option{zotel.WithExponentialHistograms(40, 10)}, lat: "exp 40/10", size: "exp 40/10",
			advisory: []float64{3, 2}, latErr: "ignored (the histogram is exponential)"},
		{name: "advisory_explicit", lat: "explicit [1 2 3]", size: "explicit", advisory: []float64{1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(zotel.EnvHistogramAggregation, tc.env)
			h := &handler{}
			otelglobal.SetErrorHandler(h)
			defer otelglobal.SetErrorHandler(&handler{})
			p := newProvider(t, tc.opts...)
			h.mu.Lock()
			errs := h.errs
			h.mu.Unlock()
			switch {
			case tc.warn == "" && len(errs) > 0:
				t.Errorf("reported %v", errs)
			case tc.warn != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.warn)):
				t.Errorf("reported %v; want one error saying %q", errs, tc.warn)
			case tc.env == "exponential":
				var ignored otelenv.Ignored
				if !errors.As(errs[0], &ignored) {
					t.Errorf("reported %v; want an otelenv.Ignored", errs[0])
				}
			}
			m := p.Meter("m")
			var latOpts []metric.Float64HistogramOption
			if tc.advisory != nil {
				latOpts = append(latOpts, metric.WithExplicitBucketBoundaries(tc.advisory...))
			}
			lat, err := m.Float64Histogram("lat", latOpts...)
			if tc.latErr == "" && err != nil || tc.latErr != "" && (err == nil || !strings.Contains(err.Error(), tc.latErr)) {
				t.Errorf("lat: error %v; want %q", err, tc.latErr)
			}
			size, err := m.Int64Histogram("Size")
			if tc.sizeErr == "" && err != nil || tc.sizeErr != "" && (err == nil || !strings.Contains(err.Error(), tc.sizeErr)) {
				t.Errorf("Size: error %v; want %q", err, tc.sizeErr)
			}
			c, _ := m.Float64Counter("c")
			set := metric.WithAttributes(attribute.String("k", "v"))
			lat.Record(ctx, 3, set)
			size.Record(ctx, 1024, set)
			c.Add(ctx, 1, set)
			if got := aggOf(t, p, "lat"); !strings.HasPrefix(got, tc.lat) {
				t.Errorf("lat: %s; want %s", got, tc.lat)
			}
			if got := aggOf(t, p, "Size"); !strings.HasPrefix(got, tc.size) {
				t.Errorf("Size: %s; want %s", got, tc.size)
			}
			if got := aggOf(t, p, "c"); got != "Sum" {
				t.Errorf("c: %s; want Sum", got)
			}
			rows := rowsOf(t, p, "Size")
			if wantData := "*view.ExponentialDistributionData"; strings.HasPrefix(tc.size, "exp ") && (len(rows) != 1 || rows[0] != "k=v: "+wantData) {
				t.Errorf("Size rows %q; want one %s", rows, wantData)
			}
		})
	}
}

// TestExponentialRecordAllocs: a measurement through the OTel API into
// an exponential histogram allocates nothing, Float64 and Int64, with an
// attribute set or none, in a context with a sampled span under every
// exemplar filter (an exponential series keeps no exemplars: the
// measurement does not look at its context).
func TestExponentialRecordAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations differ under -race")
	}
	for _, f := range []zotel.ExemplarFilter{zotel.ExemplarsTraceBased, zotel.ExemplarsAlwaysOn, zotel.ExemplarsAlwaysOff} {
		t.Run(f.String(), func(t *testing.T) {
			p := newProvider(t, zotel.WithExponentialHistograms(160, 20), zotel.WithExemplarFilter(f))
			m := p.Meter("m")
			fh, _ := m.Float64Histogram("f")
			ih, _ := m.Int64Histogram("i")
			set := attribute.NewSet(attribute.String("method", "GET"), attribute.Int("code", 200))
			ropt := []metric.RecordOption{metric.WithAttributeSet(set)}
			sampled := trace.ContextWithSpanContext(ctx, sampledSpans[0])
			i := 0
			for name, fn := range map[string]func(){
				"Float64Histogram.Record":         func() { i++; fh.Record(ctx, float64(i%5000)*0.37, ropt...) },
				"Int64Histogram.Record":           func() { i++; ih.Record(ctx, int64(i%5000)-100, ropt...) },
				"Float64Histogram.Record no attr": func() { i++; fh.Record(ctx, float64(i%100)+0.5) },
				"Float64Histogram.Record sampled": func() { i++; fh.Record(sampled, float64(i%7), ropt...) },
			} {
				for range 6000 { // every bucket the values reach exists
					fn()
				}
				if n := testing.AllocsPerRun(1000, fn); n != 0 {
					t.Errorf("%s: %v allocs/op; want 0", name, n)
				}
			}
			if aggOf(t, p, "f") != "exp 160/20" {
				t.Errorf("f: %s", aggOf(t, p, "f"))
			}
		})
	}
}

// TestExponentialConcurrent: goroutines record through the OTel API into
// exponential histograms (a shared attribute set and one of their own)
// while another goroutine collects them, cumulative and delta, through
// zerostat's OTLP encoder; run with -race. The counts are exact: each
// delta interval's points added up (merged as exphist merges) and the
// final cumulative point both equal a single histogram fed every value,
// bucket for bucket, with the scale that histogram has (the scale is a
// function of the set of values, not of their order), and the sums are
// exact (small integers: every partial sum is exact, in any order).
func TestExponentialConcurrent(t *testing.T) {
	p := newProvider(t, zotel.WithExponentialHistogram("h", 20, 20))
	h, _ := p.Meter("m").Int64Histogram("h")
	const workers, per = 4, 3000
	shared := metric.WithAttributeSet(attribute.NewSet(attribute.String("set", "shared")))
	values := func(w, i int) int64 { // a range that forces downscales as it widens
		v := int64(1 + (i*7919+w*104729)%(1+i*3))
		if i%17 == 0 {
			v = -v
		}
		if i%23 == 0 {
			v = 0
		}
		return v
	}
	c := newExpCollector(t, p)
	var wg sync.WaitGroup
	done := make(chan struct{})
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for {
			select {
			case <-done:
				return
			default:
				c.collect(t)
			}
		}
	}()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := metric.WithAttributeSet(attribute.NewSet(attribute.String("set", fmt.Sprint("own", w))))
			for i := range per {
				h.Record(ctx, values(w, i), shared)
				h.Record(ctx, values(w, i)*3, own)
			}
		}()
	}
	wg.Wait()
	close(done)
	<-collected
	c.collect(t) // the rest
	want := map[string]*refHist{}
	ref := func(k string) *refHist {
		if want[k] == nil {
			want[k] = newRefHist(20, 20)
		}
		return want[k]
	}
	for w := range workers {
		for i := range per {
			ref("set=shared").record(float64(values(w, i)))
			ref(fmt.Sprint("set=own", w)).record(float64(values(w, i) * 3))
		}
	}
	c.check(t, want)
	t.Logf("%d collections while recording", c.n)
}
