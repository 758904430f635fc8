package conformance

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	ocresource "go.opencensus.io/resource"

	"github.com/zerostat/zerostat/resource"
)

// randLabelString returns OC_RESOURCE_LABELS-like input: mostly
// well-formed pairs, with spaces, commas, quotes, escapes, non-ASCII and
// over-long keys and values mixed in, so both decoders take every branch.
func randLabelString(r *rand.Rand) string {
	// The first five are keys too; lengths 254 to 257 straddle both
	// limits of 256 (a quoted value counts its quotes and escapes).
	atoms := []string{`a`, `k8s.pod.name`, `x/y`, strings.Repeat("k", 256), strings.Repeat("k", 257),
		` `, `,`, `"`, `=`, `\"`, `\n`, `\z`, `ä`, `\t`, `'`,
		strings.Repeat("v", 253), strings.Repeat("v", 254), strings.Repeat("v", 255), strings.Repeat("v", 256)}
	var b strings.Builder
	for n := r.IntN(5); n >= 0; n-- {
		switch r.IntN(4) {
		case 0: // free-form
			for m := r.IntN(6); m >= 0; m-- {
				b.WriteString(atoms[r.IntN(len(atoms))])
			}
		default: // a pair, perhaps damaged
			b.WriteString(strings.Repeat(" ", r.IntN(2)))
			b.WriteString(atoms[r.IntN(5)])
			if r.IntN(8) > 0 {
				b.WriteByte('=')
			}
			v := atoms[r.IntN(len(atoms))]
			if r.IntN(4) > 0 {
				v = strconv.Quote(v)
			}
			b.WriteString(v)
			b.WriteString(strings.Repeat(" ", r.IntN(2)))
			if r.IntN(6) > 0 {
				b.WriteByte(',')
			}
		}
	}
	return b.String()
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// zerostat's resource package decodes, encodes and reads the environment
// exactly as OpenCensus's: the same maps, the same errors (message
// included), on seeded random input.
func TestResourceLabelsMatchOpenCensus(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 2024))
	errs, oks := 0, 0
	for i := 0; i < 20000; i++ {
		s := randLabelString(r)
		zm, zerr := resource.DecodeLabels(s)
		om, oerr := ocresource.DecodeLabels(s)
		if errString(zerr) != errString(oerr) || !reflect.DeepEqual(zm, om) {
			t.Fatalf("DecodeLabels(%q):\n\tzerostat   %v, %v\n\tOpenCensus %v, %v", s, zm, zerr, om, oerr)
		}
		if zerr != nil {
			errs++
			continue
		}
		oks++
		if ze, oe := resource.EncodeLabels(zm), ocresource.EncodeLabels(om); ze != oe {
			t.Fatalf("EncodeLabels(%v): zerostat %q, OpenCensus %q", zm, ze, oe)
		}
	}
	// Both outcomes are exercised (the generator is not one-sided).
	if errs < 1000 || oks < 1000 {
		t.Fatalf("%d errors, %d decoded: the inputs do not cover both", errs, oks)
	}
	for _, m := range []map[string]string{nil, {}, {"b": "x,y", "a": "\"q\"\n", "ä": "ü", "": ""}} {
		if ze, oe := resource.EncodeLabels(m), ocresource.EncodeLabels(m); ze != oe {
			t.Errorf("EncodeLabels(%v): zerostat %q, OpenCensus %q", m, ze, oe)
		}
	}
	for _, env := range [][2]string{{"", ""}, {" k8s ", ""}, {"", ` a="1" `}, {"host", `a="1",b="2",`}, {"t", `a=1`}, {"t", " , "}} {
		t.Setenv(resource.EnvVarType, env[0])
		t.Setenv(resource.EnvVarLabels, env[1])
		zr, zerr := resource.FromEnv(context.Background())
		or, oerr := ocresource.FromEnv(context.Background())
		if errString(zerr) != errString(oerr) || (zr == nil) != (or == nil) || zr != nil && (zr.Type != or.Type || !reflect.DeepEqual(zr.Labels, or.Labels)) {
			t.Errorf("FromEnv with %q: zerostat %+v, %v; OpenCensus %+v, %v", env, zr, zerr, or, oerr)
		}
	}
	if resource.EnvVarType != ocresource.EnvVarType || resource.EnvVarLabels != ocresource.EnvVarLabels {
		t.Error("the environment variables differ")
	}
}

// MultiDetector merges what its detectors find as OpenCensus's does (the
// first type and the first value of each label win, nil results are
// skipped, a single result is returned as is, the first error stops it),
// on seeded random detector lists.
func TestResourceMultiDetectorMatchesOpenCensus(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 7))
	type spec struct {
		nilRes, fail bool
		typ          string
		labels       map[string]string
	}
	for i := 0; i < 5000; i++ {
		specs := make([]spec, r.IntN(5))
		for j := range specs {
			s := spec{nilRes: r.IntN(4) == 0, fail: r.IntN(10) == 0, typ: []string{"", "k8s", "host"}[r.IntN(3)]}
			if r.IntN(3) > 0 {
				s.labels = map[string]string{}
				for k := r.IntN(3); k > 0; k-- {
					s.labels[[]string{"a", "b", "c"}[r.IntN(3)]] = strconv.Itoa(j)
				}
			}
			specs[j] = s
		}
		boom := errors.New("boom " + strconv.Itoa(i))
		var zsIn []*resource.Resource
		var ocIn []*ocresource.Resource
		var zds []resource.Detector
		var ods []ocresource.Detector
		for _, s := range specs {
			var zr *resource.Resource
			var or *ocresource.Resource
			if !s.nilRes {
				zr, or = &resource.Resource{Type: s.typ, Labels: s.labels}, &ocresource.Resource{Type: s.typ, Labels: s.labels}
			}
			zsIn, ocIn = append(zsIn, zr), append(ocIn, or)
			fail := s.fail
			zds = append(zds, func(context.Context) (*resource.Resource, error) {
				if fail {
					return nil, boom
				}
				return zr, nil
			})
			ods = append(ods, func(context.Context) (*ocresource.Resource, error) {
				if fail {
					return nil, boom
				}
				return or, nil
			})
		}
		zr, zerr := resource.MultiDetector(zds...)(context.Background())
		or, oerr := ocresource.MultiDetector(ods...)(context.Background())
		// Which input, if any, came back as is.
		same := func(n int, at func(int) bool) int {
			for k := 0; k < n; k++ {
				if at(k) {
					return k
				}
			}
			return -1
		}
		zi := same(len(zsIn), func(k int) bool { return zr != nil && zsIn[k] == zr })
		oi := same(len(ocIn), func(k int) bool { return or != nil && ocIn[k] == or })
		if zerr != oerr || (zr == nil) != (or == nil) || zi != oi ||
			zr != nil && (zr.Type != or.Type || !reflect.DeepEqual(zr.Labels, or.Labels)) {
			t.Fatalf("MultiDetector over %+v:\n\tzerostat   %+v, %v (input %d)\n\tOpenCensus %+v, %v (input %d)", specs, zr, zerr, zi, or, oerr, oi)
		}
	}
}
