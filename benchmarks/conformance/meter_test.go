package conformance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.opencensus.io/metric/metricdata"
	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"
	octag "go.opencensus.io/tag"

	"github.com/zerostat/zerostat/benchmarks/internal/sdkrows"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// meterPair is one meter in each SDK; nil meters are the default one.
type meterPair struct {
	name  string
	zs    view.Meter
	oc    ocview.Meter
	views []*viewPair
	maxes map[string]map[string]float64 // view -> row key -> true max
}

func (m *meterPair) register(t testing.TB, v *viewPair) {
	t.Helper()
	if m.zs == nil {
		v.register(t)
		t.Cleanup(v.unregister)
		return
	}
	if err := m.zs.Register(v.zs); err != nil {
		t.Fatalf("zerostat %s.Register(%q): %v", m.name, v.name, err)
	}
	if err := m.oc.Register(v.oc); err != nil {
		t.Fatalf("opencensus %s.Register(%q): %v", m.name, v.name, err)
	}
	v.live = true
}

func (m *meterPair) retrieve(name string) ([]*view.Row, []*ocview.Row, error, error) {
	if m.zs == nil {
		zr, zerr := view.RetrieveData(name)
		or, oerr := ocview.RetrieveData(name)
		return zr, or, zerr, oerr
	}
	zr, zerr := m.zs.RetrieveData(name)
	or, oerr := m.oc.RetrieveData(name)
	return zr, or, zerr, oerr
}

// exemplarsZS and exemplarsOC return, per row key, each bucket's exemplar
// as "value attachments" ("" for none), for either SDK's rows.
func exemplarsZS(rows []*view.Row) map[string][]string {
	out := map[string][]string{}
	for _, r := range rows {
		if d, ok := r.Data.(*view.DistributionData); ok {
			tags := make([]kv, len(r.Tags))
			for i, t := range r.Tags {
				tags[i] = kv{K: t.Key.Name(), V: t.Value}
			}
			out[sdkrows.Key(tags)] = bucketExemplars(len(d.CountPerBucket), len(d.ExemplarsPerBucket), func(i int) (float64, map[string]interface{}, bool) {
				if e := d.ExemplarsPerBucket[i]; e != nil {
					return e.Value, e.Attachments, true
				}
				return 0, nil, false
			})
		}
	}
	return out
}

func exemplarsOC(rows []*ocview.Row) map[string][]string {
	out := map[string][]string{}
	for _, r := range rows {
		if d, ok := r.Data.(*ocview.DistributionData); ok {
			tags := make([]kv, len(r.Tags))
			for i, t := range r.Tags {
				tags[i] = kv{K: t.Key.Name(), V: t.Value}
			}
			out[sdkrows.Key(tags)] = bucketExemplars(len(d.CountPerBucket), len(d.ExemplarsPerBucket), func(i int) (float64, map[string]interface{}, bool) {
				if e := d.ExemplarsPerBucket[i]; e != nil {
					return e.Value, e.Attachments, true
				}
				return 0, nil, false
			})
		}
	}
	return out
}

// bucketExemplars formats the exemplars of n buckets, of which the first
// have ones get returns (ok false: none).
func bucketExemplars(n, have int, get func(int) (float64, map[string]interface{}, bool)) []string {
	ex := make([]string, n)
	for i := 0; i < have; i++ {
		if v, att, ok := get(i); ok {
			ex[i] = exemplarString(v, att)
		}
	}
	return ex
}

func exemplarString(v float64, att map[string]interface{}) string {
	keys := make([]string, 0, len(att))
	for k := range att {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%v", v)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%v", k, att[k])
	}
	return b.String()
}

// TestDifferentialMetersRecordersAttachments records a seeded random
// workload into the default meter and two meters from NewMeter of each
// SDK — the same view names in all three — through stats.Record,
// RecordWithOptions with and without WithRecorder, WithTags and
// WithAttachments, and Meter.Record, and compares every view's rows of
// every meter and each bucket's exemplar (the latest value recorded with
// attachments, with those attachments).
func TestDifferentialMetersRecordersAttachments(t *testing.T) {
	for _, seed := range conformanceSeeds() {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { meterWorkload(t, seed) })
	}
}

func meterWorkload(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x3e7e5))
	prefix := fmt.Sprintf("conformance/meters/seed%d/", seed)
	keys := []keyPair{newKeyPair(t, "m-route"), newKeyPair(t, "m-method"), newKeyPair(t, "m-tenant")}
	vocab := []string{"", "a", "b", "c d"}
	measures := []*measurePair{newMeasurePair(prefix+"int", true), newMeasurePair(prefix+"float", false)}
	bounds := map[*measurePair][]float64{}

	zm1, zm2 := view.NewMeter(), view.NewMeter()
	om1, om2 := ocview.NewMeter(), ocview.NewMeter()
	om1.Start()
	om2.Start()
	t.Cleanup(om1.Stop)
	t.Cleanup(om2.Stop)
	meters := []*meterPair{{name: "default"}, {name: "meter1", zs: zm1, oc: om1}, {name: "meter2", zs: zm2, oc: om2}}
	for _, m := range meters {
		m.maxes = map[string]map[string]float64{}
		specs := []struct {
			agg  string
			meas *measurePair
			keys []keyPair
		}{
			{"Count", measures[0], keys[:1]},
			{"Sum", measures[0], nil},
			{"Distribution", measures[1], []keyPair{keys[1], keys[0]}},
			{"Distribution", measures[0], keys[2:]},
			{"LastValue", measures[1], keys[2:]},
		}
		for i, s := range specs {
			v := &viewPair{name: fmt.Sprintf("%sview%d", prefix, i), agg: s.agg, measure: s.meas, keys: s.keys}
			for _, k := range s.keys {
				v.sorted = append(v.sorted, k.name)
			}
			sort.Strings(v.sorted)
			if s.agg == "Distribution" {
				v.bounds = randBounds(r)
				bounds[s.meas] = append(bounds[s.meas], v.bounds...)
			}
			v.build()
			m.register(t, v)
			m.views = append(m.views, v)
			m.maxes[v.name] = map[string]float64{}
		}
	}

	var errs []string
	exemplars, withAtt, viaMeterRecord, viaRecorder := 0, 0, 0, 0
	steps := stepsPerSeed() / 4
	for i := 0; i < steps; i++ {
		m := meters[r.IntN(len(meters))]
		// The record's tags: a random set, then perhaps mutators.
		var muts []mutPair
		for _, k := range keys {
			if r.IntN(3) > 0 {
				v := vocab[r.IntN(len(vocab))]
				muts = append(muts, mutPair{"Upsert", tag.Upsert(k.zs, v), octag.Upsert(k.oc, v), func(s tagState) { s[k.name] = v }})
			}
		}
		c := newCtx(t, ctxPair{zs: context.Background(), oc: context.Background(), tags: tagState{}}, muts)
		var extra []mutPair
		if r.IntN(4) == 0 {
			extra = append(extra, newMut(r, keys, func(r *rand.Rand) string { return vocab[r.IntN(len(vocab))] }))
		}
		tags := c.tags.clone()
		for _, x := range extra {
			x.apply(tags)
		}
		var att map[string]interface{}
		switch k := r.IntN(10); {
		case k < 4:
			att = map[string]interface{}{"step": i, "meter": m.name}
		case k < 5:
			att = map[string]interface{}{} // OpenCensus keeps no exemplar for an empty map
		case k < 6:
			att = map[string]interface{}{metricdata.AttachmentKeySpanContext: fmt.Sprint("span", i)}
		}
		if len(att) > 0 {
			withAtt++
		}
		n := 1 + r.IntN(3)
		zms := make([]stats.Measurement, 0, n)
		oms := make([]ocstats.Measurement, 0, n)
		for j := 0; j < n; j++ {
			mp := measures[r.IntN(len(measures))]
			v := randValue(r, mp, bounds[mp], false)
			zm, om := mp.measurement(v)
			zms, oms = append(zms, zm), append(oms, om)
			for _, vp := range m.views {
				if vp.measure == mp && vp.agg == "Distribution" {
					rk := rowKeyFor(vp, tags)
					if old, ok := m.maxes[vp.name][rk]; !ok || v > old {
						m.maxes[vp.name][rk] = v
					}
				}
			}
		}
		zmu := make([]tag.Mutator, len(extra))
		omu := make([]octag.Mutator, len(extra))
		for j, x := range extra {
			zmu[j], omu[j] = x.zs, x.oc
		}
		switch {
		case m.zs != nil && len(extra) == 0 && r.IntN(2) == 0:
			// Meter.Record with the context's tag map.
			m.zs.Record(tag.FromContext(c.zs), zms, att)
			m.oc.Record(octag.FromContext(c.oc), oms, att)
			viaMeterRecord++
		case m.zs != nil:
			zo := []stats.Options{stats.WithRecorder(m.zs), stats.WithMeasurements(zms...), stats.WithTags(zmu...)}
			oo := []ocstats.Options{ocstats.WithRecorder(m.oc), ocstats.WithMeasurements(oms...), ocstats.WithTags(omu...)}
			if att != nil {
				zo, oo = append(zo, stats.WithAttachments(att)), append(oo, ocstats.WithAttachments(att))
			}
			if err := stats.RecordWithOptions(c.zs, zo...); err != nil {
				t.Fatalf("zerostat RecordWithOptions: %v", err)
			}
			if err := ocstats.RecordWithOptions(c.oc, oo...); err != nil {
				t.Fatalf("opencensus RecordWithOptions: %v", err)
			}
			viaRecorder++
		case att == nil && len(extra) == 0 && r.IntN(2) == 0:
			stats.Record(c.zs, zms...)
			ocstats.Record(c.oc, oms...)
		default:
			zo := []stats.Options{stats.WithMeasurements(zms...), stats.WithTags(zmu...)}
			oo := []ocstats.Options{ocstats.WithMeasurements(oms...), ocstats.WithTags(omu...)}
			if att != nil {
				zo, oo = append(zo, stats.WithAttachments(att)), append(oo, ocstats.WithAttachments(att))
			}
			if err := stats.RecordWithOptions(c.zs, zo...); err != nil {
				t.Fatalf("zerostat RecordWithOptions: %v", err)
			}
			if err := ocstats.RecordWithOptions(c.oc, oo...); err != nil {
				t.Fatalf("opencensus RecordWithOptions: %v", err)
			}
		}
		if i%500 == 499 || i == steps-1 {
			for _, m := range meters {
				for _, v := range m.views {
					zr, or, zerr, oerr := m.retrieve(v.name)
					when := fmt.Sprintf("step %d, %s", i, m.name)
					if zerr != nil || oerr != nil {
						errs = append(errs, fmt.Sprintf("%s: RetrieveData(%q): zerostat %v, opencensus %v", when, v.name, zerr, oerr))
						continue
					}
					got, err1 := normZS(v.sorted, zr)
					want, err2 := normOC(v.sorted, or)
					if err1 != nil || err2 != nil {
						errs = append(errs, fmt.Sprintf("%s: %v %v", when, err1, err2))
						continue
					}
					for _, e := range diffRows(v.name, got, want, m.maxes[v.name]) {
						errs = append(errs, when+": "+e)
					}
					if v.agg == "Distribution" {
						ze, oe := exemplarsZS(zr), exemplarsOC(or)
						if !reflect.DeepEqual(ze, oe) {
							errs = append(errs, fmt.Sprintf("%s: view %q exemplars per bucket:\n\tzerostat   %v\n\topencensus %v", when, v.name, ze, oe))
						}
						if i == steps-1 {
							for _, ex := range oe {
								for _, e := range ex {
									if e != "" {
										exemplars++
									}
								}
							}
						}
					}
				}
			}
			if len(errs) > 0 {
				break
			}
		}
	}
	if len(errs) > 0 {
		if len(errs) > 20 {
			errs = append(errs[:20], fmt.Sprintf("... and %d more", len(errs)-20))
		}
		t.Fatalf("zerostat and OpenCensus disagree:\n%s", strings.Join(errs, "\n"))
	}
	// The workload exercised what it is about.
	if exemplars == 0 || withAtt == 0 || viaMeterRecord == 0 || viaRecorder == 0 {
		t.Fatalf("exemplars kept %d, records with attachments %d, via Meter.Record %d, via WithRecorder %d: want all > 0",
			exemplars, withAtt, viaMeterRecord, viaRecorder)
	}
	t.Logf("%d steps: %d with attachments, %d via Meter.Record, %d via WithRecorder; %d exemplars compared at the end",
		steps, withAtt, viaMeterRecord, viaRecorder, exemplars)
}
