package tag

import (
	"context"
	"errors"
	"runtime/pprof"
	"testing"
)

func TestDoSetsPprofLabels(t *testing.T) {
	ctx, err := New(context.Background(), Insert(MustNewKey("route"), "/a"), Insert(MustNewKey("method"), "GET"))
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	Do(ctx, func(ctx context.Context) {
		ran = true
		for k, want := range map[string]string{"route": "/a", "method": "GET"} {
			if got, ok := pprof.Label(ctx, k); !ok || got != want {
				t.Errorf("pprof label %q = %q, %v; want %q, true", k, got, ok, want)
			}
		}
		if FromContext(ctx) == nil {
			t.Error("Do's context lost the tag map")
		}
	})
	if !ran {
		t.Fatal("Do did not call f")
	}
	Do(context.Background(), func(ctx context.Context) { ran = false }) // no map: no labels, no panic
	if ran {
		t.Fatal("Do without tags did not call f")
	}
}

func TestDecodeEach(t *testing.T) {
	ctx, _ := New(context.Background(), Insert(MustNewKey("b"), "2"), Insert(MustNewKey("a"), "1"),
		Insert(MustNewKey("local"), "x", WithTTL(TTLNoPropagation)))
	b := Encode(FromContext(ctx))
	var got []string
	if err := DecodeEach(b, func(k Key, v string, md metadatas) {
		if md.ttl != TTLUnlimitedPropagation {
			t.Errorf("%s: ttl %v; want unlimited", k.Name(), md.ttl)
		}
		got = append(got, k.Name()+"="+v)
	}); err != nil {
		t.Fatal(err)
	}
	if want := "a=1 b=2"; joinSp(got) != want {
		t.Errorf("DecodeEach passed %q; want %q", joinSp(got), want)
	}
	// A key of the decoded tags is the same as one from NewKey.
	_ = DecodeEach(b, func(k Key, v string, _ metadatas) {
		if k != MustNewKey(k.Name()) {
			t.Errorf("decoded key %q differs from MustNewKey's", k.Name())
		}
	})
	got = got[:0]
	bad := append(append([]byte{}, b...), 0, 200) // truncated: length 200, no bytes
	err := DecodeEach(bad, func(k Key, v string, _ metadatas) { got = append(got, k.Name()) })
	if !errors.Is(err, ErrMalformed) {
		t.Errorf("DecodeEach(truncated) = %v; want ErrMalformed", err)
	}
	if len(got) != 2 {
		t.Errorf("DecodeEach(truncated) passed %d tags before the error; want 2", len(got))
	}
	if err := DecodeEach(nil, func(Key, string, metadatas) { t.Error("fn called for empty input") }); err != nil {
		t.Errorf("DecodeEach(nil) = %v", err)
	}
}

func joinSp(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
