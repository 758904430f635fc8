// Package statsdgolden reads exporter/statsd's golden file of what
// Datadog's OpenCensus exporter sends (testdata/opencensus-datadog.golden),
// for the test that checks zerostat's OpenCensusDatadog mode against it
// and the one that checks it against that exporter's own code.
package statsdgolden

import (
	"fmt"
	"os"
	"strings"
)

// Read returns the lines of each export of the golden file at path:
// "# ..." lines are comments, "== export ..." starts an export.
func Read(path string) ([][]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][]string
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		switch {
		case strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "== export"):
			out = append(out, nil)
		case len(out) == 0:
			return nil, fmt.Errorf("%s:%d: a line before the first \"== export\"", path, i+1)
		default:
			out[len(out)-1] = append(out[len(out)-1], l)
		}
	}
	return out, nil
}
