package exporter

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/view"
)

func TestResourceFromEnv(t *testing.T) {
	t.Setenv(EnvServiceName, "from-env")
	t.Setenv(EnvResourceAttributes, "service.name=attr,host.name=h%201,process.pid=42,deployment.environment=prod,team=a%2Cb,k=env")
	r, err := Resource{}.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.Attribute{{Key: "deployment.environment", Value: "prod"}, {Key: "team", Value: "a,b"}, {Key: "k", Value: "env"}}
	if r.ServiceName != "from-env" || r.Host != "h 1" || r.PID != 42 || len(r.Attributes) != len(want) {
		t.Fatalf("got %+v; want OTEL_SERVICE_NAME over service.name, decoded host, pid 42, %v", r, want)
	}
	for i := range want {
		if r.Attributes[i] != want[i] {
			t.Errorf("attribute %d: got %v; want %v", i, r.Attributes[i], want[i])
		}
	}

	// Code over environment.
	code := Resource{ServiceName: "code", Host: "ch", PID: 7, Attributes: []wire.Attribute{{Key: "k", Value: "code"}}}
	r, err = code.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if r.ServiceName != "code" || r.Host != "ch" || r.PID != 7 || len(r.Attributes) != 3 || r.Attributes[0].Value != "code" {
		t.Errorf("got %+v; want the code's fields and k=code, then the variable's other attributes", r)
	}
	if len(code.Attributes) != 1 {
		t.Errorf("FromEnv changed its receiver's attributes: %v", code.Attributes)
	}

	// Without OTEL_SERVICE_NAME, service.name from the attributes.
	t.Setenv(EnvServiceName, "")
	if r, _ = (Resource{}).FromEnv(); r.ServiceName != "attr" {
		t.Errorf("service name %q; want attr (from OTEL_RESOURCE_ATTRIBUTES)", r.ServiceName)
	}
}

func TestResourceFromEnvErrors(t *testing.T) {
	for _, v := range []string{"novalue", "a=%zz", "process.pid=x", "=v"} {
		t.Setenv(EnvResourceAttributes, v)
		if _, err := (Resource{}).FromEnv(); err == nil || !strings.Contains(err.Error(), EnvResourceAttributes) {
			t.Errorf("%s=%q: got %v; want an error naming the variable", EnvResourceAttributes, v, err)
		}
	}
}

// TestResourceFromEnvRepeatedKey: a key OTEL_RESOURCE_ATTRIBUTES lists
// twice takes its last value, as in OpenTelemetry's SDKs, and is written
// once (OTLP: attribute keys must be unique); before, both were kept.
func TestResourceFromEnvRepeatedKey(t *testing.T) {
	t.Setenv(EnvServiceName, "")
	t.Setenv(EnvResourceAttributes, "team=a,env=prod,team=b,service.name=x,service.name=y")
	r, err := Resource{}.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.Attribute{{Key: "env", Value: "prod"}, {Key: "team", Value: "b"}}
	if r.ServiceName != "y" || len(r.Attributes) != len(want) || r.Attributes[0] != want[0] || r.Attributes[1] != want[1] {
		t.Fatalf("got %+v; want service y and %v", r, want)
	}
	// A code attribute of a built-in key is the code's.
	t.Setenv(EnvResourceAttributes, "service.name=env")
	if r, err := (Resource{Attributes: []wire.Attribute{{Key: "service.name", Value: "code"}}}).FromEnv(); err != nil || r.ServiceName != "code" || len(r.Attributes) != 0 {
		t.Fatalf("service.name in code and in the variable: got %+v, %v; want code's, in the field", r, err)
	}
}

// TestResourceNormalize: every exporter describes the process with
// Normalize's result. Before, a service.name, host.name or process.pid in
// Attributes was written a second time after the built-in one, and a key
// listed twice or an empty one reached the payload (only the OTLP
// encoder refused the empty one).
func TestResourceNormalize(t *testing.T) {
	attrs := func(kv ...string) []wire.Attribute {
		var out []wire.Attribute
		for i := 0; i < len(kv); i += 2 {
			out = append(out, wire.Attribute{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	r, err := Resource{Attributes: attrs("a", "1", "service.name", "svc", "host.name", "h", "process.pid", "42", "b", "2")}.Normalize()
	if err != nil || r.ServiceName != "svc" || r.Host != "h" || r.PID != 42 || len(r.Attributes) != 2 || r.Attributes[0].Key != "a" || r.Attributes[1].Key != "b" {
		t.Fatalf("got %+v, %v; want the built-in keys in their fields, a and b after", r, err)
	}
	if r, err := (Resource{ServiceName: "svc", Attributes: attrs("service.name", "svc")}).Normalize(); err != nil || r.ServiceName != "svc" || len(r.Attributes) != 0 {
		t.Fatalf("service.name equal to the field: got %+v, %v; want it once", r, err)
	}
	if r, err := (Resource{}).Normalize(); err != nil || r.ServiceName == "" || r.Host == "" || r.PID == 0 {
		t.Fatalf("the zero Resource: got %+v, %v; want the defaults", r, err)
	}
	for _, tc := range []struct {
		r    Resource
		want string
	}{
		{Resource{Attributes: attrs("a", "1", "", "2")}, "Attributes[1] has an empty key"},
		{Resource{Attributes: attrs("a", "1", "a", "2")}, `lists "a" twice`},
		{Resource{Attributes: attrs("host.name", "x", "host.name", "x")}, `lists "host.name" twice`},
		{Resource{ServiceName: "code", Attributes: attrs("service.name", "attr")}, `service.name="attr", but the Resource's field holds "code"`},
		{Resource{PID: 7, Attributes: attrs("process.pid", "8")}, "process.pid=8, but Resource.PID is 7"},
		{Resource{Attributes: attrs("process.pid", "-1")}, `process.pid="-1" is not a positive integer`},
	} {
		if _, err := tc.r.Normalize(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v; want an error saying %q", tc.r, err, tc.want)
		}
		sink := FuncSink(func(context.Context, Payload) error { return nil })
		if _, err := New(sink, Options{Resource: tc.r}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New with %+v: got %v; want an error saying %q", tc.r, err, tc.want)
		}
	}
}

func TestOptionsFromEnv(t *testing.T) {
	sink := FuncSink(func(context.Context, Payload) error { return nil })
	t.Setenv(EnvMetricExportInterval, "1500")
	t.Setenv(EnvTemporalityPreference, "LowMemory")
	t.Setenv(EnvServiceName, "svc")
	e, err := New(sink, Options{FromEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	if e.opts.Interval != 1500*time.Millisecond || e.opts.TemporalityPreference != PreferLowMemory || e.opts.Resource.ServiceName != "svc" {
		t.Errorf("got interval %v, preference %v, service %q; want 1.5s, lowmemory, svc", e.opts.Interval, e.opts.TemporalityPreference, e.opts.Resource.ServiceName)
	}
	// Code over environment.
	e, err = New(sink, Options{FromEnv: true, Interval: time.Minute, Temporality: Delta})
	if err != nil {
		t.Fatal(err)
	}
	if e.opts.Interval != time.Minute || e.opts.TemporalityPreference != PreferCumulative {
		t.Errorf("got interval %v, preference %v; want the code's 1m and Delta", e.opts.Interval, e.opts.TemporalityPreference)
	}
	// Not read without FromEnv.
	e, err = New(sink, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.opts.Interval != DefaultInterval || e.opts.TemporalityPreference != PreferCumulative || e.opts.Resource.ServiceName != "" {
		t.Errorf("without FromEnv: got %v, %v, %q; want the defaults", e.opts.Interval, e.opts.TemporalityPreference, e.opts.Resource.ServiceName)
	}

	// A resource attribute that cannot be read fails New, naming it.
	t.Run(EnvResourceAttributes+"=x", func(t *testing.T) {
		t.Setenv(EnvResourceAttributes, "x")
		_, err := New(sink, Options{FromEnv: true})
		if err == nil || !strings.Contains(err.Error(), EnvResourceAttributes) || !strings.Contains(err.Error(), "exporter: ") {
			t.Errorf("got %v; want an error naming %s", err, EnvResourceAttributes)
		}
	})
	// A number or enum value not recognised is a warning naming the
	// variable and the value, and the default is used (issue 42, item 10;
	// before, New failed).
	for _, tc := range []struct{ name, value string }{
		{EnvMetricExportInterval, "10s"},
		{EnvMetricExportInterval, "0"},
		{EnvMetricExportInterval, "-5"},
		{EnvTemporalityPreference, "sometimes"},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			t.Setenv(EnvMetricExportInterval, "")
			t.Setenv(EnvTemporalityPreference, "")
			t.Setenv(tc.name, tc.value)
			var log bytes.Buffer
			e, err := New(sink, Options{FromEnv: true, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if err != nil {
				t.Fatalf("New: %v; want the value ignored", err)
			}
			if e.opts.Interval != DefaultInterval || e.opts.TemporalityPreference != PreferCumulative {
				t.Errorf("interval %v, preference %v; want the defaults", e.opts.Interval, e.opts.TemporalityPreference)
			}
			if l := log.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, tc.name) || !strings.Contains(l, tc.value) {
				t.Errorf("log %q; want a warning naming %s and %q", l, tc.name, tc.value)
			}
		})
	}
}

func TestTemporalityOf(t *testing.T) {
	kinds := []view.AggType{view.AggTypeCount, view.AggTypeSum, view.AggTypeDistribution, view.AggTypeLastValue}
	want := map[TemporalityPreference][]wire.Temporality{
		PreferCumulative: {Cumulative, Cumulative, Cumulative, Cumulative},
		PreferDelta:      {Delta, Delta, Delta, Cumulative},
		PreferLowMemory:  {Delta, Delta, Delta, Cumulative},
	}
	for p, ts := range want {
		for i, k := range kinds {
			if got := TemporalityOf(p, k); got != ts[i] {
				t.Errorf("TemporalityOf(%v, %v) = %v; want %v", p, k, got, ts[i])
			}
		}
		if q, err := ParseTemporalityPreference(strings.ToUpper(p.String())); err != nil || q != p {
			t.Errorf("ParseTemporalityPreference(%q) = %v, %v", strings.ToUpper(p.String()), q, err)
		}
	}
	if _, err := New(FuncSink(func(context.Context, Payload) error { return nil }),
		Options{Temporality: Delta, TemporalityPreference: PreferDelta}); err == nil || !strings.Contains(err.Error(), "TemporalityPreference") {
		t.Errorf("Delta with a preference: got %v; want an error", err)
	}
}

// TestTemporalityPreference checks the msgpack exporter under the delta
// preference: counters and histograms are deltas (they add up to the
// cumulative totals), gauges cumulative: sent each export, and not
// evicted as idle, as under Temporality Delta since issue 12 (item 3: a
// constant gauge was evicted there).
func TestTemporalityPreference(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		gaugeOK bool // the idle LastValue row is still sent in the last export
	}{
		{"preference", Options{TemporalityPreference: PreferDelta, EvictIdleAfter: 1}, true},
		{"delta", Options{Temporality: Delta, EvictIdleAfter: 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 4)
			var c collect
			e, err := New(c.sink(t), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for range 4 {
				if err := e.Export(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			for _, p := range c.payloads {
				if p.Temporality != wire.Delta {
					t.Errorf("payload %d: temporality %v; want delta", p.Sequence, p.Temporality)
				}
			}
			if n := len(c.rowsOf(t, f.names[0], 1)); n != 4 {
				t.Errorf("export 1 sent %d count rows; want 4", n)
			}
			if n := len(c.rowsOf(t, f.names[0], 2)); n != 0 {
				t.Errorf("export 2 sent %d unchanged count rows; want 0 (delta)", n)
			}
			last := c.rowsOf(t, f.names[3], 4)
			if got := len(last) == 1; got != tc.gaugeOK {
				t.Errorf("export 4 sent LastValue rows %v; want sent=%v", last, tc.gaugeOK)
			}
		})
	}
}
