package otlp_test

import (
	"fmt"
	"os"
	"time"

	"github.com/zerostat/zerostat/exporter/otlp"
)

// What a platform's variables make of the options: the metrics-specific
// variable over the generic one, code over both.
func ExampleOptions_WithEnv() {
	for k, v := range map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":                       "http://collector:4318",
		"OTEL_EXPORTER_OTLP_HEADERS":                        "api-key=generic",
		"OTEL_EXPORTER_OTLP_METRICS_HEADERS":                "api-key=s%3Dcret",
		"OTEL_EXPORTER_OTLP_TIMEOUT":                        "2000",
		"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "delta",
		"OTEL_SERVICE_NAME":                                 "checkout",
	} {
		os.Setenv(k, v)
		defer os.Unsetenv(k)
	}
	o, err := otlp.Options{Interval: 30 * time.Second}.WithEnv()
	if err != nil {
		panic(err)
	}
	fmt.Println(o.Endpoint, o.Header.Get("Api-Key"), o.ExportTimeout, o.TemporalityPreference, o.Interval, o.Resource.ServiceName)
	// Output:
	// http://collector:4318 s=cret 2s delta 30s checkout
}
