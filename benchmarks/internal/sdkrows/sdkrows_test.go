package sdkrows

import (
	"math"
	"testing"
)

func TestKeyIsCanonical(t *testing.T) {
	a := Key([]KV{{K: "b", V: "2"}, {K: "a", V: `x"y`}, {K: "c", V: ""}})
	b := Key([]KV{{K: "a", V: `x"y`}, {K: "b", V: "2"}})
	if a != b || a != `{"a":"x\"y" "b":"2"}` {
		t.Errorf("keys %s and %s; want both {\"a\":\"x\\\"y\" \"b\":\"2\"}", a, b)
	}
	// A key containing the separators cannot collide with two tags.
	if Key([]KV{{K: `a":"b`, V: "c"}}) == Key([]KV{{K: "a", V: `b":"c`}}) {
		t.Error("quoted keys collide")
	}
}

func TestValues(t *testing.T) {
	r := Row{Tags: []KV{{K: "b", V: "2"}, {K: "a", V: "1"}}}
	if got := r.Values([]string{"a", "b", "c"}); got[0] != "1" || got[1] != "2" || got[2] != "" {
		t.Errorf("values %q; want [1 2 \"\"]", got)
	}
}

func TestNear(t *testing.T) {
	for _, c := range []struct {
		a, b float64
		want bool
	}{{1, 1 + 1e-10, true}, {1, 1 + 1e-8, false}, {0, 1e-10, true}, {0, 1e-8, false}, {1e12, 1e12 + 100, true}, {math.Inf(1), math.Inf(1), true}} {
		if got := Near(c.a, c.b); got != c.want {
			t.Errorf("Near(%v, %v) = %v; want %v", c.a, c.b, got, c.want)
		}
	}
}
