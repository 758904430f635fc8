package otel

import (
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel"

	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/otelenv"
)

// EnvHistogramAggregation is the variable NewMeterProvider reads the
// default aggregation of its histograms from, as the OTel SDK's OTLP
// exporters read it: explicit_bucket_histogram (the default: advisory
// boundaries, else DefaultBoundaries) or base2_exponential_bucket_histogram
// (view.ExponentialDistribution with the SDK's MaxSize 160 and MaxScale
// 20), in any case. Another value is reported through otel.Handle and
// ignored (the specification: an unknown enum value "MUST produce a
// warning and be ignored"; the SDK logs it and keeps its default).
// WithExponentialHistograms and WithExponentialHistogram take precedence.
//
// zerostat reads it in the provider because a zerostat view's aggregation
// is chosen when the view is registered, for every exporter at once; the
// SDK reads it in its OTLP exporters (their default aggregation), so a
// Prometheus reader of the same SDK provider keeps explicit buckets while
// zerostat's Prometheus output gets the same exponential histograms as its
// OTLP output (native histograms).
const EnvHistogramAggregation = otelenv.HistogramAggregation

// The SDK's defaults for AggregationBase2ExponentialHistogram, which
// EnvHistogramAggregation's base2_exponential_bucket_histogram uses.
const (
	DefaultExponentialMaxSize  = exphist.DefaultMaxSize
	DefaultExponentialMaxScale = exphist.DefaultMaxScale
)

// expSpec is the exponential aggregation a histogram is given.
type expSpec struct {
	maxSize, maxScale int32
}

// WithExponentialHistograms makes every histogram of the provider
// (Float64Histogram, Int64Histogram) a base-2 exponential histogram
// (view.ExponentialDistribution(maxSize, maxScale)): at most maxSize
// buckets per sign, scale at most maxScale, the SDK's
// AggregationBase2ExponentialHistogram{MaxSize: maxSize, MaxScale:
// maxScale} (DefaultExponentialMaxSize and DefaultExponentialMaxScale are
// its defaults). Advisory boundaries are then ignored, as the SDK ignores
// them for this aggregation. It takes precedence over
// EnvHistogramAggregation; WithExponentialHistogram over it, for the
// instrument it names. The last valid WithExponentialHistograms wins.
//
// A maxSize below 2 or a maxScale outside -10..20 is an error naming the
// argument: NewMeterProvider reports it through otel.Handle, the option is
// ignored (as if not given), and each histogram it would have selected
// returns the error from its creation (an instrument that works, with the
// aggregation it has without the option), as the SDK returns an invalid
// view's error from the instrument's creation.
func WithExponentialHistograms(maxSize, maxScale int32) Option {
	spec, err := checkExp("WithExponentialHistograms", maxSize, maxScale)
	return func(c *config) {
		if err != nil {
			c.expAllErr = errors.Join(c.expAllErr, err)
			return
		}
		c.expAll = &spec
	}
}

// WithExponentialHistogram makes the histogram named instrument (its name
// without the view prefix, matched as instrument names are, whatever its
// case) a base-2 exponential histogram of at most maxSize buckets per sign
// and scale at most maxScale, as WithExponentialHistograms does for every
// histogram: the per-instrument selection the SDK makes with a view
// (sdkmetric.NewView(sdkmetric.Instrument{Name: instrument},
// sdkmetric.Stream{Aggregation: AggregationBase2ExponentialHistogram{...}})),
// by exact name, as WithAttributeKeys selects. It takes precedence over
// WithExponentialHistograms and EnvHistogramAggregation; the last valid one
// given for a name wins. Instruments that are not histograms are not affected.
// Invalid arguments are handled as WithExponentialHistograms's.
func WithExponentialHistogram(instrument string, maxSize, maxScale int32) Option {
	spec, err := checkExp(fmt.Sprintf("WithExponentialHistogram(%q)", instrument), maxSize, maxScale)
	key := strings.ToLower(instrument)
	return func(c *config) {
		if err != nil {
			if c.expNameErr == nil {
				c.expNameErr = map[string]error{}
			}
			c.expNameErr[key] = errors.Join(c.expNameErr[key], err)
			return
		}
		if c.expByName == nil {
			c.expByName = map[string]*expSpec{}
		}
		c.expByName[key] = &spec
	}
}

// checkExp checks an option's arguments, naming the option and the
// argument in its error.
func checkExp(option string, maxSize, maxScale int32) (expSpec, error) {
	switch exphist.Check(maxSize, maxScale) {
	case exphist.ErrMaxSize:
		return expSpec{}, fmt.Errorf("otel: %s: maxSize %d is below 2: ignored", option, maxSize)
	case exphist.ErrMaxScale:
		return expSpec{}, fmt.Errorf("otel: %s: maxScale %d is outside %d..%d: ignored", option, maxScale, exphist.MinScale, exphist.MaxScale)
	}
	return expSpec{maxSize, maxScale}, nil
}

// expDefaults sets the provider-wide exponential choice (the option, else
// the environment's) and reports the invalid options and an unrecognised
// variable value through otel.Handle. Called by NewMeterProvider.
func expDefaults(c *config, env otelenv.Env) {
	for _, err := range c.expNameErr {
		otel.Handle(err)
	}
	if c.expAllErr != nil {
		otel.Handle(c.expAllErr)
	}
	if c.expAll != nil {
		c.exp = c.expAll
		return
	}
	on, err := env.Base2Exponential()
	if err != nil {
		otel.Handle(otelenv.Ignored{Err: fmt.Errorf("otel: %w", err)})
	}
	if on {
		c.exp = &expSpec{DefaultExponentialMaxSize, DefaultExponentialMaxScale}
	}
}

// expOf returns the exponential aggregation of the histogram named name
// (nil: explicit buckets), and the errors of the invalid options that
// would have chosen it.
func (c *config) expOf(name string) (*expSpec, error) {
	key := strings.ToLower(name)
	if spec := c.expByName[key]; spec != nil {
		return spec, c.expNameErr[key]
	}
	return c.exp, errors.Join(c.expNameErr[key], c.expAllErr)
}
