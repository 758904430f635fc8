package wire

import "fmt"

// A Summary view (aggregation 8, docs/wire-format.md "Summary rows"):
// its bounds are its quantiles (each in 0..1, strictly increasing), a
// version-1 row is [values..., count, sum, quantile_values] with one
// float per quantile in quantile_values, and version 2's data columns are
// [counts, sums, quantile_0, ..., quantile_Q-1]. Decode keeps the rows'
// count and sum in Row and their quantile values in View.QuantileValues.

// RowQuantiles returns the quantile values of a Summary view's row i
// (one per quantile, Bounds[j]'s at j), nil for another aggregation. The
// caller must not modify them.
func (v *View) RowQuantiles(i int) []float64 {
	q := len(v.Bounds)
	if v.Aggregation != Summary || (i+1)*q > len(v.QuantileValues) {
		return nil
	}
	return v.QuantileValues[i*q : (i+1)*q : (i+1)*q]
}

// summaryRow decodes a version-1 Summary row's data (the row d.row).
func (d *decoder) summaryRow(v *View, r *Row) error {
	for c := range 2 {
		if err := d.summaryField(v, r, d.row, c); err != nil {
			return err
		}
	}
	d.path = ".quantile_values"
	if err := d.array(len(v.Bounds)); err != nil {
		return err
	}
	for j := range v.Bounds {
		if err := d.summaryField(v, r, d.row, 2+j); err != nil {
			return err
		}
	}
	return nil
}

// summaryField decodes field c of a Summary row i (count, sum, then the
// value of each quantile): the same code for a version-1 row's data and
// version 2's columns. A quantile's value may be any float (NaN: the
// source has none); the sum is always a float.
func (d *decoder) summaryField(v *View, r *Row, i, c int) error {
	d.path = summaryColumnName(c)
	var err error
	switch c {
	case 0:
		r.Count, err = d.uint()
	case 1:
		r.Sum, err = d.float()
	default:
		v.QuantileValues[i*len(v.Bounds)+c-2], err = d.float()
	}
	return err
}

// summaryColumnName names a Summary row's field c for errors.
func summaryColumnName(c int) string {
	switch c {
	case 0:
		return ".count"
	case 1:
		return ".sum"
	}
	return fmt.Sprintf(".quantile_values[%d]", c-2)
}

// jsonQuantile is one quantile of a summary row in JSON.
type jsonQuantile struct {
	Quantile jsonFloat `json:"quantile"`
	Value    jsonFloat `json:"value"`
}

// jsonSummaryOf adds a Summary view's row i's count, sum and quantiles
// to jr (nothing for another aggregation).
func jsonSummaryOf(v *View, i int, jr *jsonRow) {
	if v.Aggregation != Summary {
		return
	}
	r := &v.Rows[i]
	jr.Count, jr.Sum = &r.Count, fp(r.Sum)
	jr.Quantiles = []jsonQuantile{}
	for j, x := range v.RowQuantiles(i) {
		jr.Quantiles = append(jr.Quantiles, jsonQuantile{jsonFloat(v.Bounds[j]), jsonFloat(x)})
	}
}
