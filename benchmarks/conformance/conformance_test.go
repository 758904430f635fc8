// Package conformance checks zerostat against go.opencensus.io v0.24.0: the
// same seeded workloads are recorded through both SDKs and their
// RetrieveData rows compared, and tag maps are encoded by one and decoded by
// the other.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"
	octag "go.opencensus.io/tag"

	"github.com/zerostat/zerostat/benchmarks/internal/sdkrows"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// ---------------------------------------------------------------------------
// Paired handles: each object of the workload exists once per SDK.

type keyPair struct {
	name string
	zs   tag.Key
	oc   octag.Key
}

func newKeyPair(t testing.TB, name string) keyPair {
	t.Helper()
	zk, err := tag.NewKey(name)
	if err != nil {
		t.Fatalf("zerostat tag.NewKey(%q): got error %v; want nil", name, err)
	}
	ok, err := octag.NewKey(name)
	if err != nil {
		t.Fatalf("opencensus tag.NewKey(%q): got error %v; want nil", name, err)
	}
	return keyPair{name: name, zs: zk, oc: ok}
}

type measurePair struct {
	name  string
	isInt bool
	zsI   *stats.Int64Measure
	zsF   *stats.Float64Measure
	ocI   *ocstats.Int64Measure
	ocF   *ocstats.Float64Measure
}

func newMeasurePair(name string, isInt bool) *measurePair {
	m := &measurePair{name: name, isInt: isInt}
	if isInt {
		m.zsI = stats.Int64(name, "conformance", stats.UnitDimensionless)
		m.ocI = ocstats.Int64(name, "conformance", ocstats.UnitDimensionless)
	} else {
		m.zsF = stats.Float64(name, "conformance", stats.UnitMilliseconds)
		m.ocF = ocstats.Float64(name, "conformance", ocstats.UnitMilliseconds)
	}
	return m
}

// measurement returns v as a measurement of each SDK; for an Int64 measure v
// must be integral.
func (m *measurePair) measurement(v float64) (stats.Measurement, ocstats.Measurement) {
	if m.isInt {
		return m.zsI.M(int64(v)), m.ocI.M(int64(v))
	}
	return m.zsF.M(v), m.ocF.M(v)
}

func (m *measurePair) zsMeasure() stats.Measure {
	if m.isInt {
		return m.zsI
	}
	return m.zsF
}

func (m *measurePair) ocMeasure() ocstats.Measure {
	if m.isInt {
		return m.ocI
	}
	return m.ocF
}

type viewPair struct {
	name    string
	agg     string    // "Count", "Sum", "Distribution", "LastValue"
	keys    []keyPair // in the order given to Register (unsorted)
	sorted  []string  // key names, sorted
	bounds  []float64 // as given (unsorted, may hold a 0)
	measure *measurePair
	zs      *view.View
	oc      *ocview.View
	live    bool // registered in both SDKs
}

// build makes fresh *View values for both SDKs. Each gets its own copy of
// the bounds and keys: Register canonicalises them in place.
func (v *viewPair) build() {
	zk := make([]tag.Key, len(v.keys))
	ok := make([]octag.Key, len(v.keys))
	for i, k := range v.keys {
		zk[i], ok[i] = k.zs, k.oc
	}
	var za *view.Aggregation
	var oa *ocview.Aggregation
	switch v.agg {
	case "Count":
		za, oa = view.Count(), ocview.Count()
	case "Sum":
		za, oa = view.Sum(), ocview.Sum()
	case "LastValue":
		za, oa = view.LastValue(), ocview.LastValue()
	case "Distribution":
		za, oa = view.Distribution(slices.Clone(v.bounds)...), ocview.Distribution(slices.Clone(v.bounds)...)
	default:
		panic("unknown aggregation " + v.agg)
	}
	v.zs = &view.View{Name: v.name, Description: "conformance", TagKeys: zk, Measure: v.measure.zsMeasure(), Aggregation: za}
	v.oc = &ocview.View{Name: v.name, Description: "conformance", TagKeys: ok, Measure: v.measure.ocMeasure(), Aggregation: oa}
}

func (v *viewPair) register(t testing.TB) {
	t.Helper()
	if err := view.Register(v.zs); err != nil {
		t.Fatalf("zerostat view.Register(%q): got error %v; want nil", v.name, err)
	}
	if err := ocview.Register(v.oc); err != nil {
		t.Fatalf("opencensus view.Register(%q): got error %v; want nil", v.name, err)
	}
	v.live = true
}

func (v *viewPair) unregister() {
	view.Unregister(v.zs)
	ocview.Unregister(v.oc)
	v.live = false
}

// ---------------------------------------------------------------------------
// The reference model: which tags each recording carries, and the true
// maximum of each distribution row (OpenCensus cannot tell it when every
// value is <= 0).

type tagState map[string]string // key name -> value ("" is a present, empty value)

func (s tagState) clone() tagState {
	c := make(tagState, len(s))
	for k, v := range s {
		c[k] = v
	}
	return c
}

// rowKeyFor is the key of the row of v that a recording with tags s lands in.
func rowKeyFor(v *viewPair, s tagState) string {
	var tags []kv
	for _, k := range v.sorted {
		if val, ok := s[k]; ok {
			tags = append(tags, kv{K: k, V: val})
		}
	}
	return sdkrows.Key(tags)
}

type ctxPair struct {
	zs, oc context.Context
	tags   tagState
}

type mutPair struct {
	desc  string
	zs    tag.Mutator
	oc    octag.Mutator
	apply func(tagState)
}

// newMut returns a random mutator of a random kind over keys.
func newMut(r *rand.Rand, keys []keyPair, values func(*rand.Rand) string) mutPair {
	k := keys[r.IntN(len(keys))]
	v := values(r)
	var zmd []tag.Metadata
	var omd []octag.Metadata
	if r.IntN(8) == 0 { // TTL does not matter to recording, only to Encode
		zmd = []tag.Metadata{tag.WithTTL(tag.TTLNoPropagation)}
		omd = []octag.Metadata{octag.WithTTL(octag.TTLNoPropagation)}
	}
	switch r.IntN(4) {
	case 0:
		return mutPair{fmt.Sprintf("Insert(%q, %q)", k.name, v), tag.Insert(k.zs, v, zmd...), octag.Insert(k.oc, v, omd...),
			func(s tagState) {
				if _, ok := s[k.name]; !ok {
					s[k.name] = v
				}
			}}
	case 1:
		return mutPair{fmt.Sprintf("Update(%q, %q)", k.name, v), tag.Update(k.zs, v, zmd...), octag.Update(k.oc, v, omd...),
			func(s tagState) {
				if _, ok := s[k.name]; ok {
					s[k.name] = v
				}
			}}
	case 2:
		return mutPair{fmt.Sprintf("Upsert(%q, %q)", k.name, v), tag.Upsert(k.zs, v, zmd...), octag.Upsert(k.oc, v, omd...),
			func(s tagState) { s[k.name] = v }}
	default:
		return mutPair{fmt.Sprintf("Delete(%q)", k.name), tag.Delete(k.zs), octag.Delete(k.oc),
			func(s tagState) { delete(s, k.name) }}
	}
}

// newCtx applies muts to base with tag.New in both SDKs.
func newCtx(t testing.TB, base ctxPair, muts []mutPair) ctxPair {
	t.Helper()
	zm := make([]tag.Mutator, len(muts))
	om := make([]octag.Mutator, len(muts))
	s := base.tags.clone()
	for i, m := range muts {
		zm[i], om[i] = m.zs, m.oc
		m.apply(s)
	}
	zc, err := tag.New(base.zs, zm...)
	if err != nil {
		t.Fatalf("zerostat tag.New: got error %v; want nil", err)
	}
	oc, err := octag.New(base.oc, om...)
	if err != nil {
		t.Fatalf("opencensus tag.New: got error %v; want nil", err)
	}
	return ctxPair{zs: zc, oc: oc, tags: s}
}

// decodedCtx returns c's tags carried through each SDK's Encode, Decode and
// NewContext (all of c's tags must propagate).
func decodedCtx(t testing.TB, c ctxPair) ctxPair {
	t.Helper()
	zm, err := tag.Decode(tag.Encode(tag.FromContext(c.zs)))
	if err != nil {
		t.Fatalf("zerostat tag.Decode(tag.Encode(m)): got error %v; want nil", err)
	}
	om, err := octag.Decode(octag.Encode(octag.FromContext(c.oc)))
	if err != nil {
		t.Fatalf("opencensus tag.Decode(tag.Encode(m)): got error %v; want nil", err)
	}
	return ctxPair{
		zs:   tag.NewContext(context.Background(), zm),
		oc:   octag.NewContext(context.Background(), om),
		tags: c.tags,
	}
}

// ---------------------------------------------------------------------------
// Random inputs.

func randPrintable(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(0x20 + r.IntN(0x7f-0x20))
	}
	return string(b)
}

// randBounds returns 0–24 distinct non-negative bounds in random order; zero
// is among them about half the time. Long lists take zerostat's binary
// search (more than 16 bounds).
func randBounds(r *rand.Rand) []float64 {
	n := r.IntN(25)
	if r.IntN(4) == 0 {
		n = r.IntN(4)
	}
	seen := map[float64]bool{}
	var b []float64
	if r.IntN(2) == 0 {
		b = append(b, 0)
		seen[0] = true
	}
	for len(b) < n {
		var x float64
		switch r.IntN(3) {
		case 0:
			x = float64(1 + r.IntN(500)) // integral: Int64 values can land on it
		case 1:
			x = float64(1+r.IntN(4000)) / 4
		default:
			x = 0.1 * float64(1+r.IntN(100)) // not exactly representable
		}
		if !seen[x] {
			seen[x] = true
			b = append(b, x)
		}
	}
	r.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	return b
}

// randValue returns a value for m; nonPositive restricts it to <= 0. It
// favours the bounds of the distributions over m, exactly and just next to
// them.
func randValue(r *rand.Rand, m *measurePair, bounds []float64, nonPositive bool) float64 {
	var v float64
	switch k := r.IntN(10); {
	case k < 3 && len(bounds) > 0:
		v = bounds[r.IntN(len(bounds))]
		if !m.isInt && r.IntN(3) == 0 {
			v = math.Nextafter(v, math.Inf(2*r.IntN(2)-1))
		}
	case k < 4:
		v = 0
	case k < 6:
		v = -float64(r.IntN(50)) - r.Float64()
	default:
		v = r.Float64() * 1200
	}
	if nonPositive && v > 0 {
		v = -v
	}
	if m.isInt {
		v = math.Trunc(v)
	}
	return v
}

// ---------------------------------------------------------------------------
// The differential workload.

type workload struct {
	t        *testing.T
	r        *rand.Rand
	prefix   string
	keys     []keyPair
	extra    keyPair // a key in no view
	measures []*measurePair
	views    []*viewPair
	ctxs     []ctxPair                     // prebuilt contexts, reused as users do
	bounds   map[*measurePair][]float64    // union of the bounds of the views over a measure
	maxes    map[string]map[string]float64 // view -> row key -> true max
	negKey   string                        // value of keys[0] that only values <= 0 carry
	values   map[string][]string           // key name -> value vocabulary

	checked  int            // view comparisons made
	quirks   int            // rows where OpenCensus reported Max = 5e-324
	compared map[string]int // aggregation -> rows compared
	muts     map[string]int // mutator kind -> uses, to be sure each ran
	errs     []string       // collected mismatches
}

func newWorkload(t *testing.T, seed uint64) *workload {
	w := &workload{
		t:        t,
		r:        rand.New(rand.NewPCG(seed, 0x5eed)),
		prefix:   fmt.Sprintf("conformance/seed%d/", seed),
		bounds:   map[*measurePair][]float64{},
		maxes:    map[string]map[string]float64{},
		values:   map[string][]string{},
		compared: map[string]int{},
		muts:     map[string]int{},
	}
	r := w.r
	// 8 keys with random printable names (made unique by a suffix), whose
	// byte order differs from their creation order.
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("%s#%d", randPrintable(r, 1+r.IntN(12)), i)
		w.keys = append(w.keys, newKeyPair(t, name))
		vocab := []string{"", "a", "b", "v with spaces", randPrintable(r, r.IntN(256))}
		w.values[name] = vocab
	}
	w.extra = newKeyPair(t, "extra-key-in-no-view")
	w.values[w.extra.name] = []string{"", "x"}
	w.negKey = "only-values-<=0"

	for i := 0; i < 4; i++ {
		w.measures = append(w.measures, newMeasurePair(fmt.Sprintf("%smeasure%d", w.prefix, i), i%2 == 0))
	}
	aggs := []string{"Count", "Sum", "Distribution", "LastValue"}
	for i := 0; i < 12; i++ {
		v := &viewPair{
			name:    fmt.Sprintf("%sview%d", w.prefix, i),
			agg:     aggs[r.IntN(len(aggs))],
			measure: w.measures[r.IntN(len(w.measures))],
		}
		// Views 0–3: every aggregation once; view 0 is a distribution
		// keyed by keys[0], so the row of negKey only sees values <= 0.
		if i < len(aggs) {
			v.agg = aggs[(i+2)%len(aggs)]
		}
		perm := r.Perm(len(w.keys))[:r.IntN(len(w.keys)+1)]
		if i == 0 && !slices.Contains(perm, 0) {
			perm = append(perm, 0)
		}
		if i == 1 {
			perm = nil // a view without keys
		}
		if i == 2 {
			perm = r.Perm(len(w.keys)) // all 8 keys, unsorted
		}
		for _, p := range perm {
			v.keys = append(v.keys, w.keys[p])
			v.sorted = append(v.sorted, w.keys[p].name)
		}
		sort.Strings(v.sorted)
		if v.agg == "Distribution" {
			v.bounds = randBounds(r)
			w.bounds[v.measure] = append(w.bounds[v.measure], v.bounds...)
		}
		v.build()
		v.register(t)
		w.views = append(w.views, v)
		w.maxes[v.name] = map[string]float64{}
	}
	t.Cleanup(func() {
		for _, v := range w.views {
			v.unregister()
		}
	})

	// Prebuilt contexts: the background one, random tag sets, tag sets
	// derived from others with every kind of mutator, and the negKey one.
	bg := ctxPair{zs: context.Background(), oc: context.Background(), tags: tagState{}}
	w.ctxs = append(w.ctxs, bg)
	for i := 0; i < 24; i++ {
		var muts []mutPair
		base := bg
		if i >= 12 {
			base = w.ctxs[1+r.IntN(len(w.ctxs)-1)]
			for j := r.IntN(5); j >= 0; j-- {
				muts = append(muts, w.randMut())
			}
		} else {
			for _, k := range w.keys {
				if r.IntN(3) != 0 {
					v := w.randValue(k.name)
					muts = append(muts, mutPair{"Upsert", tag.Upsert(k.zs, v), octag.Upsert(k.oc, v), func(s tagState) { s[k.name] = v }})
				}
			}
		}
		c := newCtx(t, base, muts)
		if c.tags[w.keys[0].name] == w.negKey {
			continue
		}
		if i < 12 && i%3 == 0 {
			// Every tag propagates here: carry the map through the binary
			// codec and tag.NewContext, as a server does with a request's.
			c = decodedCtx(t, c)
		}
		w.ctxs = append(w.ctxs, c)
	}
	k0 := w.keys[0]
	neg := newCtx(t, w.ctxs[1], []mutPair{{"Upsert", tag.Upsert(k0.zs, w.negKey), octag.Upsert(k0.oc, w.negKey), func(s tagState) { s[k0.name] = w.negKey }}})
	w.ctxs = append(w.ctxs, neg)
	return w
}

func (w *workload) randValue(key string) string {
	vs := w.values[key]
	return vs[w.r.IntN(len(vs))]
}

func (w *workload) randMut() mutPair {
	keys := append(slices.Clip(w.keys), w.extra)
	m := newMut(w.r, keys, func(r *rand.Rand) string {
		// (the key is drawn inside newMut; any key's vocabulary will do)
		vs := w.values[keys[r.IntN(len(keys))].name]
		return vs[r.IntN(len(vs))]
	})
	w.muts[m.desc[:strings.IndexByte(m.desc, '(')]]++
	return m
}

// observe updates the model for v recorded into every live view of m with
// tags s.
func (w *workload) observe(m *measurePair, s tagState, v float64) {
	for _, vp := range w.views {
		if !vp.live || vp.measure != m || vp.agg != "Distribution" {
			continue
		}
		rk := rowKeyFor(vp, s)
		if old, ok := w.maxes[vp.name][rk]; !ok || v > old {
			w.maxes[vp.name][rk] = v
		}
	}
}

// step performs one random recording through both SDKs.
func (w *workload) step() {
	r := w.r
	c := w.ctxs[r.IntN(len(w.ctxs))]
	if r.IntN(20) == 0 { // a context built just for this call
		var muts []mutPair
		for j := r.IntN(4); j >= 0; j-- {
			muts = append(muts, w.randMut())
		}
		c = newCtx(w.t, c, muts)
	}
	nonPositive := c.tags[w.keys[0].name] == w.negKey

	mode := r.IntN(10) // 0–5 Record, 6–8 RecordWithTags, 9 RecordWithOptions
	tags := c.tags
	var muts []mutPair
	if mode >= 6 {
		for j := r.IntN(4); j >= 0; j-- {
			muts = append(muts, w.randMut())
		}
		tags = tags.clone()
		for _, m := range muts {
			m.apply(tags)
		}
		// The mutators must not turn a negKey recording into another
		// row's, nor make another recording claim the negKey row.
		nonPositive = nonPositive || tags[w.keys[0].name] == w.negKey
	}

	n := 1 + r.IntN(3)
	// Fresh slices every call: OpenCensus hands the slice to its worker
	// goroutine, so it must not be reused.
	zms := make([]stats.Measurement, 0, n)
	oms := make([]ocstats.Measurement, 0, n)
	for i := 0; i < n; i++ {
		m := w.measures[r.IntN(len(w.measures))]
		v := randValue(r, m, w.bounds[m], nonPositive)
		zm, om := m.measurement(v)
		zms, oms = append(zms, zm), append(oms, om)
		w.observe(m, tags, v)
	}

	switch {
	case mode < 6:
		stats.Record(c.zs, zms...)
		ocstats.Record(c.oc, oms...)
	case mode < 9:
		zmu := make([]tag.Mutator, len(muts))
		omu := make([]octag.Mutator, len(muts))
		for i, m := range muts {
			zmu[i], omu[i] = m.zs, m.oc
		}
		if err := stats.RecordWithTags(c.zs, zmu, zms...); err != nil {
			w.t.Fatalf("zerostat stats.RecordWithTags: got error %v; want nil", err)
		}
		if err := ocstats.RecordWithTags(c.oc, omu, oms...); err != nil {
			w.t.Fatalf("opencensus stats.RecordWithTags: got error %v; want nil", err)
		}
	default:
		zmu := make([]tag.Mutator, len(muts))
		omu := make([]octag.Mutator, len(muts))
		for i, m := range muts {
			zmu[i], omu[i] = m.zs, m.oc
		}
		if err := stats.RecordWithOptions(c.zs, stats.WithTags(zmu...), stats.WithMeasurements(zms...)); err != nil {
			w.t.Fatalf("zerostat stats.RecordWithOptions: got error %v; want nil", err)
		}
		if err := ocstats.RecordWithOptions(c.oc, ocstats.WithTags(omu...), ocstats.WithMeasurements(oms...)); err != nil {
			w.t.Fatalf("opencensus stats.RecordWithOptions: got error %v; want nil", err)
		}
	}
}

// compare retrieves v from both SDKs and records any mismatch.
func (w *workload) compare(v *viewPair, when string) {
	zr, zerr := view.RetrieveData(v.name)
	or, oerr := ocview.RetrieveData(v.name)
	if zerr != nil || oerr != nil {
		w.errs = append(w.errs, fmt.Sprintf("%s: view %q: RetrieveData errors: zerostat %v, opencensus %v; want nil, nil", when, v.name, zerr, oerr))
		return
	}
	got, err := normZS(v.sorted, zr)
	if err != nil {
		w.errs = append(w.errs, when+": "+err.Error())
		return
	}
	want, err := normOC(v.sorted, or)
	if err != nil {
		w.errs = append(w.errs, when+": "+err.Error())
		return
	}
	for _, e := range diffRows(v.name, got, want, w.maxes[v.name]) {
		w.errs = append(w.errs, when+": "+e)
	}
	for _, o := range want {
		w.compared[o.Agg]++
		if o.Agg == "Distribution" && o.Max == ocMaxInit && w.maxes[v.name][o.Key] <= 0 {
			w.quirks++
		}
	}
	w.checked++
}

func (w *workload) fail() {
	w.t.Helper()
	if len(w.errs) == 0 {
		return
	}
	const show = 20
	msg := w.errs
	if len(msg) > show {
		msg = append(slices.Clip(msg[:show]), fmt.Sprintf("... and %d more", len(w.errs)-show))
	}
	w.t.Fatalf("zerostat and OpenCensus disagree (%d mismatches):\n%s", len(w.errs), strings.Join(msg, "\n"))
}

func conformanceSeeds() []uint64 {
	if testing.Short() || raceEnabled {
		return []uint64{1, 2, 3}
	}
	return []uint64{1, 2, 3, 4, 5, 6, 7, 8}
}

func stepsPerSeed() int {
	if testing.Short() || raceEnabled {
		return 3000
	}
	return 20000
}

// TestDifferentialRecord records seeded random workloads through both SDKs
// and compares every view's rows.
func TestDifferentialRecord(t *testing.T) {
	for _, seed := range conformanceSeeds() {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			w := newWorkload(t, seed)
			steps := stepsPerSeed()
			// Two views are unregistered mid-workload, recorded past while
			// gone, then registered again: both SDKs must start afresh.
			churn := map[int]*viewPair{
				steps / 3:     w.views[0],
				steps / 2:     w.views[3+w.r.IntN(len(w.views)-3)],
				2 * steps / 3: w.views[1+w.r.IntN(2)],
			}
			var gone []*viewPair
			for i := 0; i < steps; i++ {
				if v := churn[i]; v != nil {
					w.compare(v, fmt.Sprintf("step %d, before Unregister", i))
					v.unregister()
					if _, err := view.RetrieveData(v.name); err == nil {
						w.errs = append(w.errs, fmt.Sprintf("step %d: zerostat RetrieveData(%q) after Unregister: got nil error; want an error", i, v.name))
					}
					if _, err := ocview.RetrieveData(v.name); err == nil {
						w.errs = append(w.errs, fmt.Sprintf("step %d: opencensus RetrieveData(%q) after Unregister: got nil error; want an error", i, v.name))
					}
					w.maxes[v.name] = map[string]float64{}
					gone = append(gone, v)
				}
				if len(gone) > 0 && i%97 == 0 {
					// Re-register: half the time the very *View values that
					// were registered before, otherwise fresh ones.
					v := gone[0]
					gone = gone[1:]
					if w.r.IntN(2) == 0 {
						v.build()
					}
					v.register(t)
					w.compare(v, fmt.Sprintf("step %d, right after re-Register", i))
				}
				w.step()
			}
			for _, v := range gone {
				v.register(t)
			}
			for _, v := range w.views {
				w.compare(v, "end of workload")
			}
			w.fail()
			if w.quirks == 0 {
				t.Errorf("no row exercised OpenCensus's Max = 5e-324 case (all values <= 0); got 0 such rows; want at least 1")
			}
			for _, agg := range []string{"Count", "Sum", "Distribution", "LastValue"} {
				if w.compared[agg] == 0 {
					t.Errorf("aggregation %s: got 0 rows compared; want at least 1", agg)
				}
			}
			for _, k := range []string{"Insert", "Update", "Upsert", "Delete"} {
				if w.muts[k] == 0 {
					t.Errorf("mutator %s: got 0 uses; want at least 1", k)
				}
			}
			t.Logf("%d view comparisons, rows compared per aggregation %v, %d rows with OpenCensus's Max=5e-324", w.checked, w.compared, w.quirks)
		})
	}
}

// TestComparatorDetectsMismatches makes sure the comparison can fail: every
// perturbation of a want row must be reported, with the field it touched,
// and perturbations within the tolerance must not.
func TestComparatorDetectsMismatches(t *testing.T) {
	keys := []string{"k1", "k2"}
	mk := func(agg string, tags []kv) normRow {
		n := normRow{Row: sdkrows.Row{Key: sdkrows.Key(tags), Tags: tags, Agg: agg}}
		n.vals = n.Values(keys)
		switch agg {
		case "Count":
			n.Count = 7
		case "Sum", "LastValue":
			n.Value = 12.5
		case "Distribution":
			n.Count, n.Min, n.Max, n.Mean, n.SSD, n.Buckets = 4, 1, 9, 4.25, 38.75, []int64{1, 2, 1}
		}
		return n
	}
	negTags := []kv{{K: "k1", V: "neg"}}
	negDist := normRow{Row: sdkrows.Row{Key: sdkrows.Key(negTags), Tags: negTags, Agg: "Distribution",
		Count: 2, Min: -3, Max: ocMaxInit, Mean: -2, SSD: 2, Buckets: []int64{2, 0, 0}}}
	negDist.vals = negDist.Values(keys)
	base := []normRow{
		mk("Count", []kv{{K: "k1", V: "a"}}),
		mk("Sum", []kv{{K: "k1", V: "a"}, {K: "k2", V: "b"}}),
		mk("LastValue", []kv{{K: "k2", V: "c"}}),
		mk("Distribution", nil),
		negDist,
	}
	trueMax := map[string]float64{negDist.Key: -1}
	// zerostat's version of the same rows: the true max where OC has 5e-324.
	zs := func() []normRow {
		c := make([]normRow, len(base))
		for i, r := range base {
			c[i] = r
			c[i].Buckets = slices.Clone(r.Buckets)
			if r.Agg == "Distribution" && r.Max == ocMaxInit {
				c[i].Max = trueMax[r.Key]
			}
		}
		sortRows(c)
		return c
	}
	want := slices.Clone(base)
	sortRows(want)
	if errs := diffRows("v", zs(), want, trueMax); len(errs) != 0 {
		t.Fatalf("identical rows: got mismatches %q; want none", errs)
	}

	find := func(agg string) int {
		for i, r := range want {
			if r.Agg == agg && r.Max != ocMaxInit {
				return i
			}
		}
		t.Fatalf("no %s row", agg)
		return -1
	}
	iNeg := slices.IndexFunc(want, func(r normRow) bool { return r.Key == negDist.Key })
	perturb := []struct {
		name, field string
		f           func(got []normRow) []normRow
	}{
		{"count+1", "Count", func(g []normRow) []normRow { g[find("Count")].Count++; return g }},
		{"sum relative 1e-6", "Sum", func(g []normRow) []normRow { g[find("Sum")].Value *= 1 + 1e-6; return g }},
		{"last value", "LastValue", func(g []normRow) []normRow { g[find("LastValue")].Value = -12.5; return g }},
		{"dist count", "Distribution.Count", func(g []normRow) []normRow { g[find("Distribution")].Count--; return g }},
		{"bucket moved", "Distribution.CountPerBucket", func(g []normRow) []normRow {
			b := g[find("Distribution")].Buckets
			b[0], b[1] = b[0]+1, b[1]-1
			return g
		}},
		{"bucket count length", "Distribution.CountPerBucket", func(g []normRow) []normRow {
			i := find("Distribution")
			g[i].Buckets = append(g[i].Buckets, 0)
			return g
		}},
		{"min by one ulp", "Distribution.Min", func(g []normRow) []normRow {
			i := find("Distribution")
			g[i].Min = math.Nextafter(g[i].Min, 0)
			return g
		}},
		{"max by one ulp", "Distribution.Max", func(g []normRow) []normRow {
			i := find("Distribution")
			g[i].Max = math.Nextafter(g[i].Max, 100)
			return g
		}},
		{"max reported as OC's 5e-324", "Distribution.Max", func(g []normRow) []normRow { g[iNeg].Max = ocMaxInit; return g }},
		{"max of all-negative row wrong", "Distribution.Max", func(g []normRow) []normRow { g[iNeg].Max = -3; return g }},
		{"mean relative 1e-7", "Distribution.Mean", func(g []normRow) []normRow { g[find("Distribution")].Mean *= 1 + 1e-7; return g }},
		{"ssd relative 1e-7", "Distribution.SumOfSquaredDev", func(g []normRow) []normRow {
			g[find("Distribution")].SSD *= 1 + 1e-7
			return g
		}},
		{"row missing", "row", func(g []normRow) []normRow { return g[1:] }},
		{"extra row", "row", func(g []normRow) []normRow {
			x := mk("Count", []kv{{K: "k1", V: "zzz"}})
			return append(g, x)
		}},
		{"tag value changed", "row", func(g []normRow) []normRow {
			i := find("Count")
			g[i].Key = sdkrows.Key([]kv{{K: "k1", V: "A"}})
			return g
		}},
		{"aggregation type", "aggregation type", func(g []normRow) []normRow { g[find("Sum")].Agg = "LastValue"; return g }},
		{"rows out of order", "row order", func(g []normRow) []normRow { g[0], g[len(g)-1] = g[len(g)-1], g[0]; return g }},
	}
	for _, p := range perturb {
		t.Run(p.name, func(t *testing.T) {
			errs := diffRows("v", p.f(zs()), want, trueMax)
			if len(errs) == 0 {
				t.Fatalf("perturbation %q: got no mismatch; want one on %s", p.name, p.field)
			}
			if !strings.Contains(strings.Join(errs, "\n"), p.field) {
				t.Errorf("perturbation %q: got mismatches %q; want one naming %s", p.name, errs, p.field)
			}
		})
	}
	t.Run("within tolerance", func(t *testing.T) {
		g := zs()
		i := find("Distribution")
		g[i].Mean *= 1 + 1e-12
		g[i].SSD *= 1 - 1e-12
		g[find("Sum")].Value *= 1 + 1e-12
		if errs := diffRows("v", g, want, trueMax); len(errs) != 0 {
			t.Errorf("perturbations of 1e-12: got mismatches %q; want none", errs)
		}
	})
}

// TestOpenCensusRetrieveIsConsistentAfterRecord verifies the premise of the
// differential tests: OpenCensus records asynchronously, but Record and
// RetrieveData go through the same FIFO channel to its single worker, so a
// RetrieveData issued after Record returns (on the same goroutine) sees it.
func TestOpenCensusRetrieveIsConsistentAfterRecord(t *testing.T) {
	m := ocstats.Int64("conformance/oc-consistency", "", ocstats.UnitDimensionless)
	v := &ocview.View{Name: "conformance/oc-consistency", Measure: m, Aggregation: ocview.Count()}
	if err := ocview.Register(v); err != nil {
		t.Fatalf("opencensus view.Register: got error %v; want nil", err)
	}
	defer ocview.Unregister(v)
	for i := 1; i <= 500; i++ {
		ocstats.Record(context.Background(), m.M(1))
		rows, err := ocview.RetrieveData(v.Name)
		if err != nil {
			t.Fatalf("opencensus RetrieveData: got error %v; want nil", err)
		}
		if len(rows) != 1 {
			t.Fatalf("after %d records: got %d rows; want 1", i, len(rows))
		}
		if got := rows[0].Data.(*ocview.CountData).Value; got != int64(i) {
			t.Fatalf("after %d records: got count %d; want %d (OpenCensus is not consistent after Record)", i, got, i)
		}
	}
}

// TestDistributionBucketLayout registers the same distributions, given with
// unsorted bounds and zero bounds, in both SDKs and checks the canonical
// bounds and the bucket of every value on, next to and between them.
func TestDistributionBucketLayout(t *testing.T) {
	long := []float64{0}
	for i := 1; i <= 24; i++ {
		long = append(long, float64(i*i)/3)
	}
	rand.New(rand.NewPCG(7, 7)).Shuffle(len(long), func(i, j int) { long[i], long[j] = long[j], long[i] })
	cases := []struct {
		name   string
		bounds []float64
		want   []float64 // canonical bounds
	}{
		{"unsorted_with_zero", []float64{5, 0, 1, 25, 2.5, 10}, []float64{1, 2.5, 5, 10, 25}},
		{"zero_only", []float64{0}, nil},
		{"none", nil, nil},
		{"zero_and_one", []float64{3, 0}, []float64{3}},
		{"decimals", []float64{0.3, 0.1, 0.2}, []float64{0.1, 0.2, 0.3}},
		{"long_unsorted_with_zero", long, nil}, // more than 16 bounds: zerostat's binary search
	}
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if tc.name == "long_unsorted_with_zero" {
				want = slices.Clone(long)
				slices.Sort(want)
				want = want[1:]
			}
			name := fmt.Sprintf("conformance/layout/%d", ci)
			mp := newMeasurePair(name, false)
			vp := &viewPair{name: name, agg: "Distribution", bounds: tc.bounds, measure: mp}
			vp.build()
			vp.register(t)
			defer vp.unregister()

			zb := view.Find(name).Aggregation.Buckets
			ob := ocview.Find(name).Aggregation.Buckets
			if !slices.Equal(zb, ob) {
				t.Errorf("canonical bounds: zerostat %v, opencensus %v; want equal", zb, ob)
			}
			if !slices.Equal(zb, want) && !(len(zb) == 0 && len(want) == 0) {
				t.Errorf("zerostat canonical bounds: got %v; want %v", zb, want)
			}

			values := []float64{-1, 0, math.SmallestNonzeroFloat64, 1e9}
			for _, b := range want {
				values = append(values, b, math.Nextafter(b, 0), math.Nextafter(b, math.Inf(1)), b*1.5)
			}
			wantBuckets := make([]int64, len(want)+1)
			for _, x := range values {
				zm, om := mp.measurement(x)
				stats.Record(context.Background(), zm)
				ocstats.Record(context.Background(), om)
				i := sort.Search(len(want), func(i int) bool { return x < want[i] })
				wantBuckets[i]++
			}
			zr, err := view.RetrieveData(name)
			if err != nil || len(zr) != 1 {
				t.Fatalf("zerostat RetrieveData: got %d rows, error %v; want 1 row", len(zr), err)
			}
			or, err := ocview.RetrieveData(name)
			if err != nil || len(or) != 1 {
				t.Fatalf("opencensus RetrieveData: got %d rows, error %v; want 1 row", len(or), err)
			}
			zd := zr[0].Data.(*view.DistributionData)
			od := or[0].Data.(*ocview.DistributionData)
			if !slices.Equal(zd.CountPerBucket, od.CountPerBucket) {
				t.Errorf("CountPerBucket: zerostat %v, opencensus %v; want equal", zd.CountPerBucket, od.CountPerBucket)
			}
			if !slices.Equal(zd.CountPerBucket, wantBuckets) {
				t.Errorf("zerostat CountPerBucket: got %v; want %v", zd.CountPerBucket, wantBuckets)
			}
			if !slices.Equal(zd.Bounds(), want) && !(len(zd.Bounds()) == 0 && len(want) == 0) {
				t.Errorf("zerostat DistributionData.Bounds(): got %v; want %v", zd.Bounds(), want)
			}
		})
	}

	t.Run("negative_bound_rejected_by_both", func(t *testing.T) {
		name := "conformance/layout/negative"
		mp := newMeasurePair(name, false)
		zv := &view.View{Name: name, Measure: mp.zsMeasure(), Aggregation: view.Distribution(1, -2, 3)}
		ov := &ocview.View{Name: name, Measure: mp.ocMeasure(), Aggregation: ocview.Distribution(1, -2, 3)}
		zerr := view.Register(zv)
		oerr := ocview.Register(ov)
		if zerr == nil || !errors.Is(zerr, view.ErrNegativeBucketBounds) {
			t.Errorf("zerostat Register with bound -2: got error %v; want one wrapping ErrNegativeBucketBounds", zerr)
		}
		if oerr == nil || !errors.Is(oerr, ocview.ErrNegativeBucketBounds) {
			t.Errorf("opencensus Register with bound -2: got error %v; want ErrNegativeBucketBounds", oerr)
		}
		if zerr == nil {
			view.Unregister(zv)
		}
		if oerr == nil {
			ocview.Unregister(ov)
		}
	})
}
