package otel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/otelenv"
	"github.com/zerostat/zerostat/view"
)

// DefaultCardinalityLimit is the OTel SDK's default cardinality limit: an
// instrument keeps up to 1999 attribute sets and aggregates the records of
// any further set into one overflow point tagged otel.metric.overflow=true
// (the limit counts that point, as the SDK's does).
const DefaultCardinalityLimit = 2000

// MaxAttributeKeys bounds the attribute keys an instrument's view groups
// by (128, OpenTelemetry's default attribute count limit): each key costs
// every later series 4 bytes and every exported point a look, so a key
// that varies (an id used as a key name) must not grow them without
// bound. A measurement's attribute with a key past the bound is left out
// of its point's grouping (the measurement still counts) and reported once
// through otel.Handle.
const MaxAttributeKeys = 128

// DefaultBoundaries are the OTel SDK's explicit bucket boundaries for a
// histogram without advisory boundaries.
var DefaultBoundaries = []float64{0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000}

// Option configures a MeterProvider. Options are read once, by
// NewMeterProvider.
type Option func(*config)

type config struct {
	limit      int
	prefix     string
	keys       map[string][]attribute.Key
	filter     ExemplarFilter // as WithExemplarFilter set it (see exemplarFilter)
	filterSet  bool
	expAll     *expSpec            // the last valid WithExponentialHistograms
	expAllErr  error               // the invalid WithExponentialHistograms, ignored
	expByName  map[string]*expSpec // the last valid WithExponentialHistogram, by lower-cased name
	expNameErr map[string]error    // the invalid WithExponentialHistogram, ignored, by lower-cased name
	exp        *expSpec            // every histogram's, unless expByName names it: expAll, else the environment's (nil: explicit buckets)
}

// WithCardinalityLimit sets the cardinality limit of every instrument, the
// overflow point included (the SDK's WithCardinalityLimit); n <= 0 means no
// limit.
func WithCardinalityLimit(n int) Option { return func(c *config) { c.limit = n } }

// WithViewPrefix puts prefix before each instrument's name to name its
// zerostat view. View names are process-wide, OTel instrument names per
// provider: two providers in one process need different prefixes (or
// different instrument names), or the second's instrument fails to
// register its view, or, defined identically, shares the first's (which
// then lives until the last provider using it is shut down). The default
// is no prefix.
func WithViewPrefix(prefix string) Option { return func(c *config) { c.prefix = prefix } }

// WithAttributeKeys declares the attribute keys of the instrument named
// instrument (its name without the view prefix). Without it an
// instrument's view starts with the keys of its first measurement and
// adds each key a later one brings (see Attributes in the package
// documentation); declared keys are there from the start, which spares
// the view those additions. Keys may be declared for instruments that do
// not exist yet. instrument is matched as instrument names are, whatever
// its case.
func WithAttributeKeys(instrument string, keys ...attribute.Key) Option {
	return func(c *config) {
		if c.keys == nil {
			c.keys = map[string][]attribute.Key{}
		}
		k := strings.ToLower(instrument)
		c.keys[k] = append(c.keys[k], keys...)
	}
}

// MeterProvider is an OpenTelemetry metric.MeterProvider whose instruments
// record into zerostat views, read by every zerostat exporter (OTLP,
// Prometheus, remote write, msgpack) and by view.RetrieveData. Safe for
// concurrent use.
type MeterProvider struct {
	embedded.MeterProvider

	cfg config

	mu       sync.Mutex
	insts    map[string]*inst // by instrument name, lower-cased (names are case-insensitive)
	order    []*inst          // in creation order
	meters   map[meterKey]*Meter
	cbs      []*callbackReg
	shutdown bool

	// collectMu serialises the applies of observations (observe's
	// state), held for one apply at a time, never while a callback runs:
	// a snapshot that applies a callback's values waits for another
	// apply, not for another caller's slow callback. runMu serialises
	// Collect calls.
	collectMu sync.Mutex
	runMu     sync.Mutex
	down      atomic.Bool // shutdown, for lock-free readers
}

// isShutdown reports whether Shutdown was called. Cost: one atomic load
// (Enabled calls it).
func (p *MeterProvider) isShutdown() bool { return p.down.Load() }

var (
	noopI64Counter = noop.Int64Counter{}
	noopI64UpDown  = noop.Int64UpDownCounter{}
	noopI64Hist    = noop.Int64Histogram{}
	noopI64Gauge   = noop.Int64Gauge{}
	noopF64Counter = noop.Float64Counter{}
	noopF64UpDown  = noop.Float64UpDownCounter{}
	noopF64Hist    = noop.Float64Histogram{}
	noopF64Gauge   = noop.Float64Gauge{}
)

var _ metric.MeterProvider = (*MeterProvider)(nil)

type meterKey struct{ name, version, schema string }

// NewMeterProvider returns a provider configured by opts, and by
// OTEL_METRICS_EXEMPLAR_FILTER (EnvExemplarFilter) unless
// WithExemplarFilter is among them, and by
// OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION
// (EnvHistogramAggregation) unless WithExponentialHistograms is among
// them. Set-up cost.
func NewMeterProvider(opts ...Option) *MeterProvider {
	p := &MeterProvider{
		cfg:    config{limit: DefaultCardinalityLimit},
		insts:  map[string]*inst{},
		meters: map[meterKey]*Meter{},
	}
	for _, o := range opts {
		o(&p.cfg)
	}
	p.cfg.filter = exemplarFilter(&p.cfg, otelenv.Env{})
	expDefaults(&p.cfg, otelenv.Env{})
	return p
}

// Meter returns the Meter of the instrumentation scope name. zerostat's
// exporters have no scopes: instruments of every meter of one provider
// share its view namespace, and asking two meters for one instrument name
// returns the same instrument (an error if they differ in kind, unit,
// description or boundaries). Safe for concurrent use.
func (p *MeterProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	cfg := metric.NewMeterConfig(opts...)
	k := meterKey{name, cfg.InstrumentationVersion(), cfg.SchemaURL()}
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.meters[k]; ok {
		return m
	}
	m := &Meter{p: p, scope: name}
	p.meters[k] = m
	return m
}

// ViewName returns the name of the zerostat view of instrument name: the
// name the instrument was first created with, in whatever case name is
// given (instrument names are case-insensitive).
func (p *MeterProvider) ViewName(name string) string {
	p.mu.Lock()
	if i, ok := p.insts[strings.ToLower(name)]; ok {
		name = i.spec.name
	}
	p.mu.Unlock()
	return p.cfg.prefix + name
}

// numberName names an instrument's number type.
func numberName(isInt bool) string {
	if isInt {
		return "int64"
	}
	return "float64"
}

// ErrShutdown is returned by instrument creation after Shutdown.
var ErrShutdown = errors.New("otel: the MeterProvider is shut down")

// Shutdown unregisters the provider's views (each goes to the view
// exporters a last time) and its callbacks; instruments then drop their
// measurements. Safe for concurrent use; later calls do nothing.
func (p *MeterProvider) Shutdown(context.Context) error {
	p.mu.Lock()
	if p.shutdown {
		p.mu.Unlock()
		return nil
	}
	p.shutdown = true
	p.down.Store(true)
	insts := slices.Clone(p.order)
	for _, r := range p.cbs {
		core.RemoveCallback(&r.cb)
	}
	p.cbs = nil
	p.mu.Unlock()
	for _, i := range insts {
		i.close()
	}
	return nil
}

// instrument returns the instrument named name, creating it as spec says.
//
// A name outside OTel's syntax is an error, but, as the OTel SDK does, the
// instrument is made and records anyway when a view can carry the name
// (1 to 255 printable ASCII bytes: a leading digit, a space, '$'); an
// empty name, one with a byte outside printable ASCII or one over 255
// bytes makes no instrument (a deliberate difference: no view, and no
// backend, can hold it).
func (p *MeterProvider) instrument(spec instSpec) (*inst, error) {
	nameErr := validName(spec.name)
	if nameErr != nil && !viewName(p.cfg.prefix+spec.name) {
		return nil, nameErr
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shutdown {
		return nil, ErrShutdown
	}
	key := strings.ToLower(spec.name) // names are ASCII (validName)
	if i, ok := p.insts[key]; ok {
		switch {
		case i.spec.kind != spec.kind || i.spec.isInt != spec.isInt:
			return nil, fmt.Errorf("otel: instrument %q: already created as %s (%s) %q; cannot create it as %s (%s) under the name %q: one view per name",
				i.spec.name, i.spec.kind, numberName(i.spec.isInt), i.spec.name, spec.kind, numberName(spec.isInt), spec.name)
		case !i.spec.same(&spec):
			// The specification's duplicate registration: a functional
			// instrument, the first-seen name, unit, description and
			// advisory boundaries, and a warning.
			otel.Handle(fmt.Errorf("otel: instrument %q: created again as %q with unit %q, description %q, boundaries %v; it keeps its first name %q, unit %q, description %q, boundaries %v",
				i.spec.name, spec.name, spec.unit, spec.desc, spec.bounds, i.spec.name, i.spec.unit, i.spec.desc, i.spec.bounds))
		}
		return i, nameErr
	}
	i := newInst(p, spec)
	p.insts[key] = i
	p.order = append(p.order, i)
	return i, nameErr
}

// viewName reports whether name can name a view: 1 to 255 printable ASCII
// bytes.
func viewName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < 0x20 || name[i] > 0x7e {
			return false
		}
	}
	return true
}

// validName applies OTel's instrument name syntax: an ASCII letter, then
// up to 254 ASCII letters, digits, '_', '.', '-' or '/'.
func validName(name string) error {
	if name == "" {
		return errors.New("otel: instrument name is empty")
	}
	if len(name) > 255 {
		return fmt.Errorf("otel: instrument name %.40q... is %d bytes, longer than 255", name, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if i == 0 && !letter {
			return fmt.Errorf("otel: instrument name %q must start with an ASCII letter", name)
		}
		if !letter && !(c >= '0' && c <= '9') && c != '_' && c != '.' && c != '-' && c != '/' {
			return fmt.Errorf("otel: instrument name %q: byte %q at %d is not a letter, digit, '_', '.', '-' or '/'", name, c, i)
		}
	}
	return nil
}

// Views returns the zerostat views the provider's instruments registered
// so far (an instrument registers its view with its first measurement), in
// instrument creation order. A view's TagKeys are those it was registered
// with: the keys its instrument added since (see Attributes in the package
// documentation) are in its rows (view.RetrieveData) and in what
// exporters send. Safe for concurrent use.
func (p *MeterProvider) Views() []*view.View {
	p.mu.Lock()
	insts := slices.Clone(p.order)
	p.mu.Unlock()
	var vs []*view.View
	for _, i := range insts {
		if v := i.registered(); v != nil {
			vs = append(vs, v)
		}
	}
	return vs
}
