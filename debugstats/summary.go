package debugstats

import (
	"strconv"
	"strings"

	"github.com/zerostat/zerostat/view"
)

// summaryValue renders a summary row (view.SummaryData) in the value
// column: its count, sum and each quantile's value, as its source
// computed them ("count 12, sum 0.0431; q0: 0.00012, q0.5: 0.0031, q1:
// 0.012"; NaN for a quantile the source has no value of).
func summaryValue(d *view.SummaryData) string {
	var b strings.Builder
	b.WriteString("count ")
	b.WriteString(strconv.FormatInt(d.Count, 10))
	b.WriteString(", sum ")
	b.WriteString(formatFloat(d.Sum))
	for i, q := range d.Quantiles {
		if i == 0 {
			b.WriteString("; ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString("q" + strconv.FormatFloat(q, 'g', -1, 64) + ": ")
		if i < len(d.Values) {
			b.WriteString(formatFloat(d.Values[i]))
		}
	}
	return b.String()
}
