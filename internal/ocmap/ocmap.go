// Package ocmap maps a view row's tags onto the view's keys the way
// OpenCensus-era exporters do, for the tests that check zerostat's rows
// survive them (the overflow row in particular). Not for production use;
// safe for concurrent use.
package ocmap

import "github.com/zerostat/zerostat/tag"

// TagValues maps tags onto keys the way OpenCensus's Prometheus exporter
// does (contrib.go.opencensus.io/exporter/prometheus, tagValues; same
// algorithm, written here): it walks the keys in order as it matches each
// tag, giving "" to the keys it skips, and indexes the keys without a
// bound check, so a tag that is not one of the keys indexes past them and
// panics, as the exporter does. Cost: one allocation.
func TagValues(tags []tag.Tag, keys []tag.Key) []string {
	out := make([]string, 0, len(keys))
	k := 0
	for _, tg := range tags {
		for ; keys[k] != tg.Key; k++ {
			out = append(out, "")
		}
		out = append(out, tg.Value)
		k++
	}
	for ; k < len(keys); k++ {
		out = append(out, "")
	}
	return out
}
