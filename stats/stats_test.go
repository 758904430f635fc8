package stats_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/internal/viewtest"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

var (
	keyA = tag.MustNewKey("a")
	keyB = tag.MustNewKey("b")
	keyC = tag.MustNewKey("c")
	keyD = tag.MustNewKey("d")
)

func register(t testing.TB, vs ...*view.View) {
	t.Helper()
	if err := view.Register(vs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(vs...) })
}

func ctxWith(t testing.TB, ms ...tag.Mutator) context.Context {
	t.Helper()
	ctx, err := tag.New(context.Background(), ms...)
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

func rows(t testing.TB, name string) []*view.Row {
	t.Helper()
	rs, err := view.RetrieveData(name)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestRecordAllocs asserts the zero-allocation promise of every record path
// the issue names.
func TestRecordAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	bounds := []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000}
	ctx2 := ctxWith(t, tag.Upsert(keyA, "a"), tag.Upsert(keyB, "b"))

	noView := stats.Int64("allocs/noview", "", stats.UnitDimensionless)

	sum := stats.Int64("allocs/sum", "", stats.UnitDimensionless)
	register(t, &view.View{Measure: sum, Aggregation: view.Sum(), TagKeys: []tag.Key{keyA, keyB}})

	dist := stats.Float64("allocs/dist", "", stats.UnitMilliseconds)
	register(t, &view.View{Measure: dist, Aggregation: view.Distribution(bounds...), TagKeys: []tag.Key{keyA, keyB}})

	distUp := stats.Float64("allocs/dist_upper", "", stats.UnitMilliseconds)
	register(t, &view.View{Measure: distUp, Aggregation: view.DistributionUpperInclusive(bounds...), TagKeys: []tag.Key{keyA, keyB}})

	last := stats.Float64("allocs/last", "", stats.UnitDimensionless)
	register(t, &view.View{Measure: last, Aggregation: view.LastValue(), TagKeys: []tag.Key{keyA}})

	var keys8 []tag.Key
	var muts8 []tag.Mutator
	for i := range 8 {
		k := tag.MustNewKey(fmt.Sprintf("k%d", i))
		keys8 = append(keys8, k)
		muts8 = append(muts8, tag.Upsert(k, fmt.Sprintf("v%d", i)))
	}
	ctx8 := ctxWith(t, muts8...)
	var ms8 [8]*stats.Int64Measure
	for i := range ms8 {
		ms8[i] = stats.Int64(fmt.Sprintf("allocs/m8_%d", i), "", stats.UnitDimensionless)
		register(t, &view.View{Measure: ms8[i], Aggregation: view.Count(), TagKeys: keys8})
	}

	rwt := stats.Int64("allocs/rwt", "", stats.UnitDimensionless)
	register(t, &view.View{Measure: rwt, Aggregation: view.Count(), TagKeys: []tag.Key{keyA, keyB, keyC, keyD}})
	muts := []tag.Mutator{tag.Upsert(keyC, "c"), tag.Insert(keyD, "d")}

	opts := stats.WithTags(muts...)

	var v float64
	for _, tc := range []struct {
		name string
		fn   func()
	}{
		{"no view", func() { stats.Record(ctx2, noView.M(1)) }},
		{"sum 2 tags", func() { stats.Record(ctx2, sum.M(1)) }},
		{"distribution 15 bounds 2 tags", func() { v += 7; stats.Record(ctx2, dist.M(v)) }},
		{"distribution upper-inclusive 15 bounds 2 tags", func() { v += 7; stats.Record(ctx2, distUp.M(v)) }},
		{"8 measures 8 tags", func() {
			stats.Record(ctx8, ms8[0].M(1), ms8[1].M(2), ms8[2].M(3), ms8[3].M(4),
				ms8[4].M(5), ms8[5].M(6), ms8[6].M(7), ms8[7].M(8))
		}},
		{"last value", func() { v++; stats.Record(ctx2, last.M(v)) }},
		{"RecordWithTags 2 mutators", func() { _ = stats.RecordWithTags(ctx2, muts, rwt.M(1)) }},
		{"RecordWithOptions", func() { _ = stats.RecordWithOptions(ctx2, opts, stats.WithMeasurements(rwt.M(1))) }},
		{"no context tags", func() { stats.Record(context.Background(), sum.M(1)) }},
	} {
		tc.fn() // warm up: the first record of a series creates it
		if got := testing.AllocsPerRun(1000, tc.fn); got != 0 {
			t.Errorf("%s: got %v allocs/op; want 0", tc.name, got)
		}
	}
}

func TestSameNameMeasuresShareViews(t *testing.T) {
	m1 := stats.Int64("same/name", "first", stats.UnitBytes)
	m2 := stats.Int64("same/name", "second", stats.UnitSeconds)
	f := stats.Float64("same/name", "third", "")
	if m2.Description() != "first" || m2.Unit() != stats.UnitBytes || f.Unit() != stats.UnitBytes {
		t.Errorf("second measure has %q %q; want the first one's description and unit", m2.Description(), m2.Unit())
	}
	register(t, &view.View{Measure: m1, Aggregation: view.Sum()})
	ctx := context.Background()
	stats.Record(ctx, m1.M(1), m2.M(2), f.M(0.5))
	rs := rows(t, "same/name")
	if len(rs) != 1 || rs[0].Data.(*view.SumData).Value != 3.5 {
		t.Errorf("got %v; want one row with sum 3.5", rs)
	}
}

func TestRecordWithTagsSemantics(t *testing.T) {
	m := stats.Int64("rwt/sem", "", stats.UnitDimensionless)
	register(t, &view.View{Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyA, keyB}})
	ctx := ctxWith(t, tag.Upsert(keyA, "a0"))
	for _, muts := range [][]tag.Mutator{
		{tag.Insert(keyA, "ignored"), tag.Insert(keyB, "b")},  // a0,b
		{tag.Update(keyA, "a1"), tag.Update(keyB, "ignored")}, // a1
		{tag.Delete(keyA), tag.Upsert(keyB, "b")},             // b
		nil, // a0
	} {
		if err := stats.RecordWithTags(ctx, muts, m.M(1)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, r := range rows(t, "rwt/sem") {
		got = append(got, fmt.Sprint(r.Tags, r.Data.(*view.CountData).Value))
	}
	want := "[[{b b}] 1 [{a a0}] 1 [{a a0} {b b}] 1 [{a a1}] 1]"
	if fmt.Sprint(got) != want {
		t.Errorf("got %v; want %v", got, want)
	}
	// The context's map is untouched.
	if v, _ := tag.FromContext(ctx).Value(keyA); v != "a0" {
		t.Errorf("context map changed: a=%q", v)
	}
}

func TestRecordWithTagsManyTags(t *testing.T) {
	// More than maxStackTags tags: built on the heap, same result.
	var keys []tag.Key
	var muts []tag.Mutator
	for i := range 12 {
		k := tag.MustNewKey(fmt.Sprintf("many%02d", i))
		keys = append(keys, k)
		muts = append(muts, tag.Upsert(k, fmt.Sprint(i)))
	}
	m := stats.Int64("rwt/many", "", stats.UnitDimensionless)
	register(t, &view.View{Measure: m, Aggregation: view.Count(), TagKeys: keys})
	for range 3 {
		if err := stats.RecordWithTags(context.Background(), muts, m.M(1)); err != nil {
			t.Fatal(err)
		}
	}
	rs := rows(t, "rwt/many")
	if len(rs) != 1 || len(rs[0].Tags) != 12 || rs[0].Data.(*view.CountData).Value != 3 {
		t.Errorf("got %v; want one row with 12 tags and count 3", rs)
	}
}

func TestRecordWithTagsErrors(t *testing.T) {
	m := stats.Int64("rwt/err", "", stats.UnitDimensionless)
	register(t, &view.View{Measure: m, Aggregation: view.Count()})
	for _, tc := range []struct {
		mut  tag.Mutator
		want error
	}{
		{tag.Upsert(keyA, "bad\x01"), tag.ErrInvalidValue},
		{tag.Insert(tag.Key{}, "v"), tag.ErrInvalidKey},
	} {
		err := stats.RecordWithTags(context.Background(), []tag.Mutator{tc.mut}, m.M(1))
		if !errors.Is(err, tc.want) {
			t.Errorf("got %v; want %v", err, tc.want)
		}
		err = stats.RecordWithOptions(context.Background(), stats.WithTags(tc.mut), stats.WithMeasurements(m.M(1)))
		if !errors.Is(err, tc.want) {
			t.Errorf("RecordWithOptions: got %v; want %v", err, tc.want)
		}
	}
	if err := stats.RecordWithTags(context.Background(), []tag.Mutator{{}}, m.M(1)); err == nil {
		t.Error("zero Mutator accepted")
	}
	if rs := rows(t, "rwt/err"); len(rs) != 0 {
		t.Errorf("an invalid call recorded %v", rs)
	}
}

func TestRecordOddInput(t *testing.T) {
	m := stats.Int64("odd/input", "", stats.UnitDimensionless)
	register(t, &view.View{Measure: m, Aggregation: view.Count()})
	stats.Record(context.Background())                      // nothing
	stats.Record(context.Background(), stats.Measurement{}) // zero measurement: ignored
	//lint:ignore SA1012 a nil context must not panic
	stats.Record(nil, m.M(1)) //nolint:staticcheck
	if rs := rows(t, "odd/input"); len(rs) != 1 || rs[0].Data.(*view.CountData).Value != 1 {
		t.Errorf("got %v; want one row with count 1", rs)
	}
	if m.M(3).Value() != 3 || m.M(3).Measure() != stats.Measure(m) {
		t.Error("Measurement accessors")
	}
	// A Measurement points at the measure it was made from: a Float64
	// measure of the same name is a measure of its own, and a zero
	// Measurement has none.
	f := stats.Float64("odd/input", "", stats.UnitDimensionless)
	if got := f.M(0.5).Measure(); got != stats.Measure(f) {
		t.Errorf("Float64 measure of the same name: Measure() = %T %p; want %p", got, got, f)
	}
	if got := (stats.Measurement{}).Measure(); got != nil {
		t.Errorf("zero Measurement: Measure() = %v; want nil", got)
	}
	// Several measurements, zero ones among them, in one call: each
	// counts once.
	stats.Record(context.Background(), stats.Measurement{}, m.M(1), f.M(2), stats.Measurement{})
	if rs := rows(t, "odd/input"); len(rs) != 1 || rs[0].Data.(*view.CountData).Value != 3 {
		t.Errorf("got %v; want one row with count 3", rs)
	}
}

// RecordWithTags with the same mutators over parents that differ (a value,
// none, one built per call), each many times: the derived-map cache that
// serves the repeats sends every record to its own row.
func TestRecordWithTagsRepeatsKeepParentsApart(t *testing.T) {
	m := stats.Int64("rwt/repeat", "", stats.UnitDimensionless)
	register(t, &view.View{Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyA, keyB, keyC}})
	a0 := ctxWith(t, tag.Upsert(keyA, "0"))
	a1 := ctxWith(t, tag.Upsert(keyA, "1"))
	muts := []tag.Mutator{tag.Upsert(keyB, "b"), tag.Upsert(keyC, "c")}
	other := []tag.Mutator{tag.Upsert(keyB, "b"), tag.Insert(keyA, "x")}
	const n = 5
	for range n {
		for _, ctx := range []context.Context{a0, a1, context.Background(), ctxWith(t, tag.Upsert(keyA, "2"))} {
			if err := stats.RecordWithTags(ctx, muts, m.M(1)); err != nil {
				t.Fatal(err)
			}
		}
		if err := stats.RecordWithTags(a0, other, m.M(1)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, r := range rows(t, "rwt/repeat") {
		got = append(got, fmt.Sprint(r.Tags, r.Data.(*view.CountData).Value))
	}
	slices.Sort(got)
	want := "[[{a 0} {b b} {c c}] 5 [{a 0} {b b}] 5 [{a 1} {b b} {c c}] 5 [{a 2} {b b} {c c}] 5 [{b b} {c c}] 5]"
	if fmt.Sprint(got) != want {
		t.Errorf("got %v; want %v", got, want)
	}
}

// A context that wraps a tag context (as middleware that runs after
// tag.New leaves a request's context) records every measurement of one
// call with its tags, also after a measurement whose view has none; one
// that wraps a tag context hiding the tags (tag.NewContext with nil), and
// one with no tags at all, record without them.
func TestRecordWrappedContext(t *testing.T) {
	type key struct{}
	tagged := stats.Int64("wrapped/tagged", "", stats.UnitDimensionless)
	other := stats.Float64("wrapped/other", "", stats.UnitDimensionless)
	plain := stats.Int64("wrapped/plain", "", stats.UnitDimensionless)
	register(t,
		&view.View{Measure: tagged, Aggregation: view.Count(), TagKeys: []tag.Key{keyA, keyB}},
		&view.View{Measure: other, Aggregation: view.Sum(), TagKeys: []tag.Key{keyA}},
		&view.View{Measure: plain, Aggregation: view.Count()})
	withTags := context.WithValue(ctxWith(t, tag.Upsert(keyA, "a"), tag.Upsert(keyB, "b")), key{}, 1)
	hidden := context.WithValue(tag.NewContext(withTags, nil), key{}, 2)
	none := context.WithValue(context.Background(), key{}, 3)
	for _, ctx := range []context.Context{withTags, withTags, hidden, none} {
		stats.Record(ctx, plain.M(1), tagged.M(1), other.M(0.5), plain.M(1), tagged.M(1))
	}
	viewtest.Equal(t, "wrapped/tagged", map[string]float64{"a=a,b=b": 4, "": 4})
	viewtest.Equal(t, "wrapped/other", map[string]float64{"a=a": 1, "": 1})
	viewtest.Equal(t, "wrapped/plain", map[string]float64{"": 8})
}
