package wire

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/zerostat/zerostat/internal/attrval"
	"github.com/zerostat/zerostat/internal/msgpack"
)

type decoder struct {
	r    msgpack.Reader
	strs []string
	// Where the decoder is, for errors: path alone, or sect[idx] (then
	// .rows[row] or .overflow when row says so) followed by path. Kept
	// as parts and joined only on error: a path string built per row
	// would double what decoding allocates.
	path    string
	sect    string // "views", "resource" or "" (path alone)
	idx     int
	row     int // a row index, noRow or overflowRow
	version int
	size    int // of the payload
	limit   int // bytes the decoded payload may take
	budget  int // bytes it may still take
}

// The decoded form of a payload takes more memory than its bytes: a row
// of a count view is a 96-byte Row (plus 16 bytes per tag value) for as
// little as 2 bytes on the wire. Measured on payloads zerostat writes:
// about 10x for distributions, up to 32x for count views with small
// indices (version 2's columns: up to 56x); 96x is the most the format's
// structures allow (a count row of no keys: 2 bytes in version 1, 1 in
// version 2). DecodeBudget is therefore 96 times the payload's size, plus
// budgetSlack for the fixed parts: it refuses nothing well-formed and
// stops only an allocation that the bytes present cannot back (a views
// header announcing a million views, each a 216-byte View, backed by one
// byte each). A receiver wanting a tighter bound passes its own limit to
// DecodeLimit.
const (
	budgetFactor = 96
	budgetSlack  = 64 << 10
)

// DecodeBudget returns the memory Decode lets the decoded form of an
// n-byte payload take: 96 times n plus 64 KiB, the most a well-formed
// payload can need. Safe for concurrent use; no allocation.
func DecodeBudget(n int) int {
	if n > (maxInt-budgetSlack)/budgetFactor {
		return maxInt
	}
	return budgetFactor*n + budgetSlack
}

const maxInt = int(^uint(0) >> 1)

const (
	noRow       = -1
	overflowRow = -2
)

// where returns the field being decoded: "header.start",
// "views[3].rows[7].count".
func (d *decoder) where() string {
	if d.sect == "" {
		return d.path
	}
	s := d.sect + "[" + strconv.Itoa(d.idx) + "]"
	switch {
	case d.row >= 0:
		s += ".rows[" + strconv.Itoa(d.row) + "]"
	case d.row == overflowRow:
		s += ".overflow"
	}
	return s + d.path
}

// alloc charges n elements of size bytes to the budget.
func (d *decoder) alloc(n, size int) error {
	if n < 0 || size > 0 && n > d.budget/size {
		return fmt.Errorf("%w: %s: the decoded payload would take more than its limit of %d bytes (the payload is %d bytes)", ErrTooLarge, d.where(), d.limit, d.size)
	}
	d.budget -= n * size
	return nil
}

// allocSlice charges n elements of T to the budget (alloc) and makes them:
// the charge is computed from the type made, so the two cannot disagree.
func allocSlice[T any](d *decoder, n int) ([]T, error) {
	var z T
	if err := d.alloc(n, int(unsafe.Sizeof(z))); err != nil {
		return nil, err
	}
	return make([]T, n), nil
}

func (d *decoder) fail(err error) error {
	return fmt.Errorf("%w: %s: %w", ErrMalformed, d.where(), err)
}

func (d *decoder) failf(format string, args ...any) error {
	return d.failAt(d.r.Offset(), format, args...)
}

func (d *decoder) failAt(off int, format string, args ...any) error {
	return fmt.Errorf("%w: %s: at offset %d: %s", ErrMalformed, d.where(), off, fmt.Sprintf(format, args...))
}

func (d *decoder) array(want int) error {
	n, err := d.r.ReadArrayHeader()
	if err != nil {
		return d.fail(err)
	}
	if want >= 0 && n != want {
		return d.failf("array of %d elements; want %d", n, want)
	}
	return nil
}

func (d *decoder) uint() (uint64, error) {
	v, err := d.r.ReadUint()
	if err != nil {
		return 0, d.fail(err)
	}
	return v, nil
}

// int reads a signed integer (an exponential histogram's scale or offset).
func (d *decoder) int() (int64, error) {
	v, err := d.r.ReadInt()
	if err != nil {
		return 0, d.fail(err)
	}
	return v, nil
}

func (d *decoder) float() (float64, error) {
	v, err := d.r.ReadFloat()
	if err != nil {
		return 0, d.fail(err)
	}
	return v, nil
}

// number reads a float, or an integer (converted), a Sum's or LastValue's
// value of v; an integer (an Int64 measure's integral value) sets v.Int.
func (d *decoder) number(v *View) (float64, error) {
	t, err := d.r.NextType()
	if err != nil {
		return 0, d.fail(err)
	}
	if t == msgpack.IntType {
		v.Int = true
	}
	return d.float()
}

func (d *decoder) str() (string, error) {
	id, err := d.r.ReadUint()
	if err != nil {
		return "", d.fail(err)
	}
	if id >= uint64(len(d.strs)) {
		return "", d.failf("dangling string index %d (the table has %d strings)", id, len(d.strs))
	}
	return d.strs[id], nil
}

// Decode parses a payload, taking at most DecodeBudget(len(b)) bytes of
// memory for its decoded form. Errors wrap ErrMalformed (or ErrVersion,
// or ErrTooLarge) and name the field and offset at fault. The payload
// does not alias b. Safe for concurrent use.
func Decode(b []byte) (*Payload, error) { return DecodeLimit(b, DecodeBudget(len(b))) }

// DecodeLimit is Decode with the decoded form's memory (its slices and
// strings, as Payload.MemSize counts them) capped at maxBytes: past it,
// it returns an error wrapping ErrTooLarge before allocating more.
// Cost: one pass to find the string table, one to decode; time linear in
// len(b). Safe for concurrent use.
func DecodeLimit(b []byte, maxBytes int) (*Payload, error) {
	d := &decoder{path: "envelope", size: len(b), limit: maxBytes, budget: maxBytes}
	d.r.Reset(b)
	if err := d.array(EnvelopeLen); err != nil {
		return nil, err
	}
	d.path = "version"
	v, err := d.uint()
	if err != nil {
		return nil, err
	}
	if v != Version && v != Version2 {
		return nil, fmt.Errorf("%w %d (this decoder reads versions %d and %d)", ErrVersion, v, Version, Version2)
	}
	d.version = int(v)
	// The string table is the envelope's last element: find it first.
	for _, f := range []string{"header", "resource", "views"} {
		d.path = f
		if err := d.r.Skip(); err != nil {
			return nil, d.fail(err)
		}
	}
	d.path = "strings"
	n, err := d.r.ReadArrayHeader()
	if err != nil {
		return nil, d.fail(err)
	}
	if err := d.alloc(n, int(unsafe.Sizeof(""))); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, d.failf("empty string table; strings[0] must be \"\"")
	}
	d.strs = make([]string, n)
	for i := range d.strs {
		off := d.r.Offset()
		s, err := d.r.ReadStringBytes()
		if err != nil {
			d.path = fmt.Sprintf("strings[%d]", i)
			return nil, d.fail(err)
		}
		if i == 0 && len(s) != 0 {
			d.path = "strings[0]"
			return nil, d.failAt(off, "strings[0] is %q; it must be \"\"", s)
		}
		if !utf8.Valid(s) {
			d.path = fmt.Sprintf("strings[%d]", i)
			return nil, d.failAt(off, "invalid UTF-8 in %q", s)
		}
		if err := d.alloc(len(s), 1); err != nil {
			return nil, err
		}
		d.strs[i] = string(s)
	}
	if d.r.Len() != 0 {
		return nil, d.failf("%d bytes after the payload", d.r.Len())
	}
	// Read again from the start (the envelope and version were checked
	// above) and decode the body in order.
	d.r.Reset(b)
	_, _ = d.r.ReadArrayHeader()
	_, _ = d.r.ReadUint()
	p := &Payload{Version: int(v)}
	if err := d.header(p); err != nil {
		return nil, err
	}
	if err := d.resource(p); err != nil {
		return nil, err
	}
	if err := d.views(p); err != nil {
		return nil, err
	}
	p.memSize = d.limit - d.budget
	return p, nil
}

func (d *decoder) header(p *Payload) error {
	d.path = "header"
	if err := d.array(HeaderLen); err != nil {
		return err
	}
	var err error
	d.path = "header.start"
	if p.Start, err = d.time(); err != nil {
		return err
	}
	d.path = "header.end"
	if p.End, err = d.time(); err != nil {
		return err
	}
	d.path = "header.temporality"
	t, err := d.uint()
	if err != nil {
		return err
	}
	if t > uint64(Delta) {
		return d.failf("temporality %d; want 0 (cumulative) or 1 (delta)", t)
	}
	p.Temporality = Temporality(t)
	d.path = "header.sequence"
	if p.Sequence, err = d.uint(); err != nil {
		return err
	}
	d.path = "header.part"
	if p.Part, err = d.uint(); err != nil {
		return err
	}
	d.path = "header.last"
	if p.Last, err = d.r.ReadBool(); err != nil {
		return d.fail(err)
	}
	return nil
}

func (d *decoder) resource(p *Payload) error {
	d.path = "resource"
	n, err := d.r.ReadArrayHeader()
	if err != nil {
		return d.fail(err)
	}
	if p.Resource, err = allocSlice[Attribute](d, n); err != nil {
		return err
	}
	for i := range p.Resource {
		d.sect, d.idx, d.row, d.path = "resource", i, noRow, ""
		if err := d.array(AttrLen); err != nil {
			return err
		}
		if p.Resource[i].Key, err = d.str(); err != nil {
			return err
		}
		if p.Resource[i].Value, err = d.str(); err != nil {
			return err
		}
	}
	d.sect = ""
	return nil
}

func (d *decoder) views(p *Payload) error {
	d.path = "views"
	n, err := d.r.ReadArrayHeader()
	if err != nil {
		return d.fail(err)
	}
	if p.Views, err = allocSlice[View](d, n); err != nil {
		return err
	}
	for i := range p.Views {
		if err := d.view(&p.Views[i], i); err != nil {
			return err
		}
	}
	d.sect = ""
	return nil
}

func (d *decoder) view(v *View, i int) error {
	d.sect, d.idx, d.row, d.path = "views", i, noRow, ""
	if err := d.array(ViewLen); err != nil {
		return err
	}
	var err error
	d.path = ".name"
	if v.Name, err = d.str(); err != nil {
		return err
	}
	if v.Name == "" {
		return d.failf("the empty string")
	}
	d.path = ".description"
	if v.Description, err = d.str(); err != nil {
		return err
	}
	d.path = ".unit"
	if v.Unit, err = d.str(); err != nil {
		return err
	}
	d.path = ".aggregation"
	a, err := d.uint()
	if err != nil {
		return err
	}
	if a < uint64(Count) || a > uint64(Summary) {
		return d.failf("aggregation %d; want 1 to 8", a)
	}
	v.Aggregation = Aggregation(a)
	if v.Aggregation == DistributionUpperInclusive {
		v.Aggregation, v.UpperInclusive = Distribution, true
	}
	d.path = ".keys"
	nk, err := d.r.ReadArrayHeader()
	if err != nil {
		return d.fail(err)
	}
	if v.Keys, err = allocSlice[string](d, nk); err != nil {
		return err
	}
	for i := range v.Keys {
		// A typed key is [ref, type] (see KeyTypes).
		typed := false
		if t, err := d.r.NextType(); err == nil && t == msgpack.ArrayType {
			n, err := d.r.ReadArrayHeader()
			if err != nil {
				return d.fail(err)
			}
			if n != 2 {
				return d.failf("key %d is an array of %d elements; want [string ref, type]", i, n)
			}
			typed = true
		}
		if v.Keys[i], err = d.str(); err != nil {
			return err
		}
		if v.Keys[i] == "" {
			return d.failf("key %d is the empty string", i)
		}
		if typed {
			t, err := d.r.ReadUint()
			if err != nil {
				return d.fail(err)
			}
			if t == uint64(attrval.String) || t > 255 || !attrval.Type(t).Valid() {
				return d.failf("key %q: value type %d; want 1, 2, 3 or 5 to 8", v.Keys[i], t)
			}
			if v.KeyTypes == nil {
				if v.KeyTypes, err = allocSlice[AttrType](d, len(v.Keys)); err != nil {
					return err
				}
			}
			v.KeyTypes[i] = attrval.Type(t)
		}
	}
	if k, ok := repeatedKey(v.Keys); ok {
		// A reader maps a row's values to keys by name: one of the two
		// values would be lost.
		return d.failf("key %q is listed twice", k)
	}
	d.path = ".bounds"
	nb, err := d.r.ReadArrayHeader()
	if err != nil {
		return d.fail(err)
	}
	if nb > 0 && v.Aggregation != Distribution && v.Aggregation != Summary {
		return d.failf("%d bounds on a %v view", nb, v.Aggregation)
	}
	if v.Bounds, err = allocSlice[float64](d, nb); err != nil {
		return err
	}
	for i := range v.Bounds {
		if v.Bounds[i], err = d.float(); err != nil {
			return err
		}
		if math.IsNaN(v.Bounds[i]) || math.IsInf(v.Bounds[i], 0) {
			return d.failf("bound %d is %v; want a finite number", i, v.Bounds[i])
		}
		if i > 0 && !(v.Bounds[i] > v.Bounds[i-1]) {
			return d.failf("bounds not increasing: %v after %v", v.Bounds[i], v.Bounds[i-1])
		}
		if v.Aggregation == Summary && (v.Bounds[i] < 0 || v.Bounds[i] > 1) {
			return d.failf("quantile %v outside 0..1", v.Bounds[i])
		}
	}
	d.path = ".start"
	if v.Start, err = d.time(); err != nil {
		return err
	}
	d.path = ".rows"
	if d.version == Version2 {
		if err := d.columns(v); err != nil {
			return err
		}
	} else {
		nr, err := d.r.ReadArrayHeader()
		if err != nil {
			return d.fail(err)
		}
		if v.Rows, err = allocSlice[Row](d, nr); err != nil {
			return err
		}
		if v.Aggregation == ExponentialDistribution {
			if v.Exp, err = allocSlice[ExpHistogram](d, nr); err != nil {
				return err
			}
		}
		if v.Aggregation == Summary {
			if v.QuantileValues, err = allocSlice[float64](d, nr*len(v.Bounds)); err != nil {
				return err
			}
		}
		for i := range v.Rows {
			var e *ExpHistogram
			if v.Exp != nil {
				e = &v.Exp[i]
			}
			if err := d.decodeRow(v, &v.Rows[i], e, len(v.Keys), i); err != nil {
				return err
			}
		}
	}
	d.row, d.path = noRow, ".overflow"
	if t, err := d.r.NextType(); err != nil {
		return d.fail(err)
	} else if t == msgpack.NilType {
		_ = d.r.ReadNil()
		return nil
	}
	if v.Aggregation == Summary {
		return d.failf("a summary view has no overflow row; want nil")
	}
	v.Overflow = &Row{}
	if v.Aggregation == ExponentialDistribution {
		if err := d.alloc(1, int(unsafe.Sizeof(ExpHistogram{}))); err != nil {
			return err
		}
		v.OverflowExp = &ExpHistogram{}
	}
	return d.decodeRow(v, v.Overflow, v.OverflowExp, 0, overflowRow)
}

// decodeRow decodes row ri (or overflowRow) with nKeys tag values:
// len(v.Keys) for a row, 0 for the overflow row (whose Values are then all
// ""); e receives an ExponentialDistribution row's buckets.
//
// A row may carry one more element, its start (see View.RowStart), which
// is appended to v.RowStarts (the overflow row's goes to
// v.OverflowStart).
func (d *decoder) decodeRow(v *View, r *Row, e *ExpHistogram, nKeys int, ri int) error {
	d.row, d.path = ri, ""
	want := RowLen(v.Aggregation, nKeys)
	n, err := d.r.ReadArrayHeader()
	if err != nil {
		return d.fail(err)
	}
	withStart := n == want+1
	if n != want && !withStart {
		return d.failf("array of %d elements; want %d, or %d with a start", n, want, want+1)
	}
	if err := d.decodeRowData(v, r, e, nKeys); err != nil {
		return err
	}
	if !withStart {
		return nil
	}
	d.path = ".start"
	if err := d.alloc(1, int(unsafe.Sizeof(RowStart{}))); err != nil {
		return err
	}
	t, err := d.time()
	if err != nil {
		return err
	}
	if ri == overflowRow {
		v.OverflowStart = t
		return nil
	}
	v.RowStarts = append(v.RowStarts, RowStart{Row: ri, Start: t})
	return nil
}

// Timestamps must lie within int64 nanoseconds of the Unix epoch (years
// 1677 to 2262), the range every reader of them works in: OTLP and pdata,
// Prometheus, time.Time's UnixNano and its JSON form.
var (
	minTime = time.Unix(0, math.MinInt64).UTC()
	maxTime = time.Unix(0, math.MaxInt64).UTC()
)

// time reads a timestamp and checks its range.
func (d *decoder) time() (time.Time, error) {
	t, err := d.r.ReadTime()
	if err != nil {
		return t, d.fail(err)
	}
	if t.Before(minTime) || t.After(maxTime) {
		return time.Time{}, d.failf("timestamp %d s outside int64 nanoseconds of the Unix epoch (years 1677 to 2262)", t.Unix())
	}
	return t, nil
}

// decodeRowData decodes a row's tag values and data.
func (d *decoder) decodeRowData(v *View, r *Row, e *ExpHistogram, nKeys int) error {
	d.path = ".values"
	var err error
	if r.Values, err = allocSlice[string](d, len(v.Keys)); err != nil {
		return err
	}
	for i := range nKeys {
		if r.Values[i], err = d.str(); err != nil {
			return err
		}
	}
	switch v.Aggregation {
	case Count:
		d.path = ".count"
		r.Count, err = d.uint()
		return err
	case Sum, UpDownSum:
		d.path = ".sum"
		r.Sum, err = d.number(v)
		return err
	case LastValue:
		d.path = ".value"
		r.Value, err = d.number(v)
		return err
	case ExponentialDistribution:
		for c := range ExpDataLen {
			if err := d.expField(v, r, e, c); err != nil {
				return err
			}
		}
		return d.checkExp(v, r, e)
	case Summary:
		return d.summaryRow(v, r) // summary.go
	}
	d.path = ".count"
	if r.Count, err = d.uint(); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		p    *float64
	}{{".sum", &r.Sum}, {".min", &r.Min}, {".max", &r.Max}, {".sum_sq_dev", &r.SumOfSquaredDev}} {
		d.path = f.name
		if *f.p, err = d.float(); err != nil {
			return err
		}
	}
	d.path = ".buckets"
	if err := d.array(len(v.Bounds) + 1); err != nil {
		return err
	}
	if r.Buckets, err = allocSlice[uint64](d, len(v.Bounds)+1); err != nil {
		return err
	}
	for i := range r.Buckets {
		if r.Buckets[i], err = d.uint(); err != nil {
			return err
		}
	}
	return d.checkBuckets(v, r)
}

// checkBuckets reports a distribution row whose bucket counts do not add
// up to its count (or overflow a uint64 on the way).
func (d *decoder) checkBuckets(v *View, r *Row) error {
	var total, carry uint64
	for _, c := range r.Buckets {
		if total, carry = bits.Add64(total, c, 0); carry != 0 {
			return d.failf("view %q: bucket counts overflow a uint64; count is %d", v.Name, r.Count)
		}
	}
	if total != r.Count {
		return d.failf("view %q: bucket counts add up to %d; count is %d", v.Name, total, r.Count)
	}
	return nil
}

// columns decodes a version-2 view's rows, laid out as columns:
// [n, values, data, starts] (docs/wire-format.md, "Version 2"), into the
// same Rows (and RowStarts) as version 1's row arrays.
func (d *decoder) columns(v *View) error {
	if err := d.array(ColumnsLen); err != nil {
		return err
	}
	d.path = ".rows.n"
	n64, err := d.uint()
	if err != nil {
		return err
	}
	// Every row takes at least one byte in each column.
	if n64 > uint64(d.size) {
		return d.failf("%d rows in a payload of %d bytes", n64, d.size)
	}
	n, k := int(n64), len(v.Keys)
	if v.Rows, err = allocSlice[Row](d, n); err != nil {
		return err
	}
	vals, err := allocSlice[string](d, n*k)
	if err != nil {
		return err
	}
	for i := range v.Rows {
		v.Rows[i].Values = vals[i*k : (i+1)*k : (i+1)*k]
	}
	d.path = ".rows.values"
	if err := d.array(k); err != nil {
		return err
	}
	for j := range k {
		d.path = fmt.Sprintf(".rows.values[%d]", j)
		if err := d.array(n); err != nil {
			return err
		}
		d.path = ".values"
		for i := range n {
			d.row = i
			if vals[i*k+j], err = d.str(); err != nil {
				return err
			}
		}
		d.row = noRow
	}
	nb, m := 0, 1
	switch v.Aggregation {
	case Distribution:
		nb = len(v.Bounds) + 1
		m = 5 + nb
	case ExponentialDistribution:
		m = ExpDataLen
		if v.Exp, err = allocSlice[ExpHistogram](d, n); err != nil {
			return err
		}
	case Summary:
		m = 2 + len(v.Bounds) // counts, sums, a column per quantile
		if v.QuantileValues, err = allocSlice[float64](d, n*len(v.Bounds)); err != nil {
			return err
		}
	}
	d.path = ".rows.data"
	if err := d.array(m); err != nil {
		return err
	}
	var buckets []uint64
	if nb > 0 {
		var err error
		if buckets, err = allocSlice[uint64](d, n*nb); err != nil {
			return err
		}
		for i := range v.Rows {
			v.Rows[i].Buckets = buckets[i*nb : (i+1)*nb : (i+1)*nb]
		}
	}
	for c := range m {
		name := columnName(v.Aggregation, c)
		d.path = ".rows.data" + name
		if err := d.array(n); err != nil {
			return err
		}
		d.path = name
		for i := range v.Rows {
			d.row = i
			r := &v.Rows[i]
			switch {
			case v.Aggregation == ExponentialDistribution:
				err = d.expField(v, r, &v.Exp[i], c)
			case v.Aggregation == Summary:
				err = d.summaryField(v, r, i, c) // summary.go
			case v.Aggregation == Count, v.Aggregation == Distribution && c == 0:
				r.Count, err = d.uint()
			case v.Aggregation == Sum, v.Aggregation == UpDownSum:
				r.Sum, err = d.number(v)
			case v.Aggregation == LastValue:
				r.Value, err = d.number(v)
			case c == 1:
				r.Sum, err = d.float()
			case c == 2:
				r.Min, err = d.float()
			case c == 3:
				r.Max, err = d.float()
			case c == 4:
				r.SumOfSquaredDev, err = d.float()
			default:
				r.Buckets[c-5], err = d.uint()
			}
			if err != nil {
				return err
			}
		}
		d.row = noRow
	}
	if nb > 0 {
		d.path = ".buckets"
		for i := range v.Rows {
			d.row = i
			if err := d.checkBuckets(v, &v.Rows[i]); err != nil {
				return err
			}
		}
		d.row = noRow
	}
	if v.Exp != nil {
		d.path = ""
		for i := range v.Rows {
			d.row = i
			if err := d.checkExp(v, &v.Rows[i], &v.Exp[i]); err != nil {
				return err
			}
		}
		d.row = noRow
	}
	d.path = ".rows.starts"
	ns, err := d.r.ReadArrayHeader()
	if err != nil {
		return d.fail(err)
	}
	if ns%2 != 0 {
		return d.failf("%d elements; want pairs of a row index and a start", ns)
	}
	if err := d.alloc(ns/2, int(unsafe.Sizeof(RowStart{}))); err != nil {
		return err
	}
	prev := -1
	for range ns / 2 {
		ri, err := d.uint()
		if err != nil {
			return err
		}
		if ri >= uint64(n) || int(ri) <= prev {
			return d.failf("row index %d: want one above %d and below %d rows", ri, prev, n)
		}
		prev = int(ri)
		t, err := d.time()
		if err != nil {
			return err
		}
		v.RowStarts = append(v.RowStarts, RowStart{Row: prev, Start: t})
	}
	return nil
}

// columnName names a version-2 data column for errors: ".count", ".sum",
// ".buckets[2]".
func columnName(a Aggregation, c int) string {
	switch a {
	case Count:
		return ".count"
	case Sum, UpDownSum:
		return ".sum"
	case LastValue:
		return ".value"
	case ExponentialDistribution:
		return expFields[c]
	case Summary:
		return summaryColumnName(c)
	}
	if c < 5 {
		return [...]string{".count", ".sum", ".min", ".max", ".sum_sq_dev"}[c]
	}
	return fmt.Sprintf(".buckets[%d]", c-5)
}

// expFields name an ExponentialDistribution row's data, in order (see
// ExpDataLen).
var expFields = [ExpDataLen]string{".count", ".sum", ".min", ".max", ".scale", ".zero_count",
	".positive_offset", ".positive_counts", ".negative_offset", ".negative_counts"}

// Scales an exponential histogram may have: OpenTelemetry's (the SDK's
// MaxScale range, -10 to 20).
const (
	minExpScale = -10
	maxExpScale = 20
)

// expField decodes field c (0 to ExpDataLen-1, expFields) of an
// ExponentialDistribution row into r and e: the same code for a row's
// elements (version 1) and a column's (version 2).
func (d *decoder) expField(v *View, r *Row, e *ExpHistogram, c int) error {
	d.path = expFields[c]
	var err error
	switch c {
	case 0:
		r.Count, err = d.uint()
	case 1:
		r.Sum, err = d.float()
	case 2:
		r.Min, err = d.float()
	case 3:
		r.Max, err = d.float()
	case 4:
		var s int64
		if s, err = d.int(); err == nil && (s < minExpScale || s > maxExpScale) {
			return d.failf("view %q: scale %d; want -10 to 20", v.Name, s)
		}
		e.Scale = int32(s)
	case 5:
		e.ZeroCount, err = d.uint()
	case 6, 8:
		b := &e.Positive
		if c == 8 {
			b = &e.Negative
		}
		var o int64
		if o, err = d.int(); err == nil && (o < math.MinInt32 || o > math.MaxInt32) {
			return d.failf("view %q: offset %d; want an int32", v.Name, o)
		}
		b.Offset = int32(o)
	case 7, 9:
		b := &e.Positive
		if c == 9 {
			b = &e.Negative
		}
		var n int
		if n, err = d.r.ReadArrayHeader(); err != nil {
			return d.fail(err)
		}
		// The last index, Offset+n-1, must be an int32 too.
		if n > 0 && int64(b.Offset)+int64(n)-1 > math.MaxInt32 {
			return d.failf("view %q: %d buckets from offset %d pass the largest index, 2^31-1", v.Name, n, b.Offset)
		}
		if b.Counts, err = allocSlice[uint64](d, n); err != nil {
			return err
		}
		for j := range b.Counts {
			if b.Counts[j], err = d.uint(); err != nil {
				return err
			}
		}
	}
	return err
}

// checkExp reports an ExponentialDistribution row whose zero count and
// bucket counts do not add up to its count (or overflow a uint64 on the
// way).
func (d *decoder) checkExp(v *View, r *Row, e *ExpHistogram) error {
	total, carry := e.ZeroCount, uint64(0)
	for _, cs := range [2][]uint64{e.Positive.Counts, e.Negative.Counts} {
		for _, c := range cs {
			if total, carry = bits.Add64(total, c, 0); carry != 0 {
				return d.failf("view %q: zero count and bucket counts overflow a uint64; count is %d", v.Name, r.Count)
			}
		}
	}
	if total != r.Count {
		return d.failf("view %q: zero count %d and bucket counts add up to %d; count is %d", v.Name, e.ZeroCount, total, r.Count)
	}
	return nil
}

// repeatedKey returns a key that keys lists twice. Cost: a compare of each
// pair for a view's usual few keys; a set past 16.
func repeatedKey(keys []string) (string, bool) {
	if len(keys) <= 16 {
		for i := 1; i < len(keys); i++ {
			for _, k := range keys[:i] {
				if k == keys[i] {
					return k, true
				}
			}
		}
		return "", false
	}
	seen := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		if _, ok := seen[k]; ok {
			return k, true
		}
		seen[k] = struct{}{}
	}
	return "", false
}
