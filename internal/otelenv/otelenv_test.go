package otelenv

import (
	"strings"
	"testing"
	"time"
)

func TestPairs(t *testing.T) {
	got, err := Pairs("V", " a=1 , b%20c=x%2Cy%3Dz ,, api-key=se%25cret== ,e=")
	if err != nil {
		t.Fatal(err)
	}
	want := []Pair{{"a", "1"}, {"b c", "x,y=z"}, {"api-key", "se%cret=="}, {"e", ""}}
	if len(got) != len(want) {
		t.Fatalf("got %q; want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("pair %d: got %q; want %q", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"a", "a=1,b", "=1", "a=%zz", "%zz=1", " %20 =1"} {
		_, err := Pairs("OTEL_X", bad)
		if err == nil || !strings.Contains(err.Error(), "OTEL_X") {
			t.Errorf("Pairs(%q): got %v; want an error naming OTEL_X", bad, err)
		}
	}
}

func TestMillis(t *testing.T) {
	if d, err := Millis("T", "1500"); err != nil || d != 1500*time.Millisecond {
		t.Errorf("got %v, %v; want 1.5s", d, err)
	}
	for _, bad := range []string{"1s", "-1", "1.5", "x", "99999999999999999999"} {
		if _, err := Millis("OTEL_T", bad); err == nil || !strings.Contains(err.Error(), "OTEL_T") {
			t.Errorf("Millis(%q): got %v; want an error naming OTEL_T", bad, err)
		}
	}
}

func TestBool(t *testing.T) {
	for v, want := range map[string]bool{"true": true, "TRUE": true, "False": false} {
		if got, err := Bool("B", v); err != nil || got != want {
			t.Errorf("Bool(%q): got %v, %v; want %v", v, got, err, want)
		}
	}
	if _, err := Bool("OTEL_B", "yes"); err == nil || !strings.Contains(err.Error(), "OTEL_B") {
		t.Errorf("got %v; want an error naming OTEL_B", err)
	}
}

func TestFirst(t *testing.T) {
	env := Env{Lookup: func(k string) (string, bool) {
		v, ok := map[string]string{"A": "", "B": " b ", "C": "c"}[k]
		return v, ok
	}}
	if n, v := env.First("A", "B", "C"); n != "B" || v != "b" {
		t.Errorf("got %s=%q; want B=b (an empty value is unset)", n, v)
	}
	if n, v := env.First("A", "Z"); n != "" || v != "" {
		t.Errorf("got %s=%q; want none", n, v)
	}
}

func TestBase2Exponential(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
		err   bool
	}{
		{"", false, false},
		{"  ", false, false},
		{"explicit_bucket_histogram", false, false},
		{"base2_exponential_bucket_histogram", true, false},
		{" BASE2_Exponential_Bucket_Histogram ", true, false},
		{"Explicit_Bucket_Histogram", false, false},
		{"exponential", false, true},
		{"base2_exponential_bucket_histogram,x", false, true},
	} {
		env := Env{Lookup: func(k string) (string, bool) {
			if k != HistogramAggregation {
				return "", false
			}
			return tc.value, true
		}}
		got, err := env.Base2Exponential()
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%q: got %v, %v; want %v, error %v", tc.value, got, err, tc.want, tc.err)
		}
		if err != nil && (!strings.Contains(err.Error(), HistogramAggregation) || !strings.Contains(err.Error(), tc.value)) {
			t.Errorf("%q: error %q does not name the variable and the value", tc.value, err)
		}
	}
}
