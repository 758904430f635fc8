package resource_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/zerostat/zerostat/resource"
)

func TestDecodeLabels(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    map[string]string
		wantErr string
	}{
		{in: "", wantErr: "remainder: ,"}, // as in OpenCensus: FromEnv checks for empty
		{in: " , ", wantErr: "remainder: ,"},
		{in: `a="1"`, want: map[string]string{"a": "1"}},
		{in: ` k8s.io/pod="p 1" , b="x,y",`, want: map[string]string{"k8s.io/pod": "p 1", "b": "x,y"}},
		{in: `a="1",a="2"`, want: map[string]string{"a": "2"}},
		{in: `a="\"q\"\t"`, want: map[string]string{"a": "\"q\"\t"}},
		{in: `a=1`, wantErr: "remainder: a=1,"},
		{in: `a="1" b="2"`, wantErr: "remainder"},
		{in: `a="\z"`, wantErr: "invalid syntax"},
		{in: `ä="1"`, wantErr: "remainder"},
		{in: `a="` + strings.Repeat("v", 257) + `"`, wantErr: "remainder"},
	} {
		got, err := resource.DecodeLabels(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || got != nil {
				t.Errorf("DecodeLabels(%q) = %v, %v; want an error with %q", c.in, got, err, c.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("DecodeLabels(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestEncodeLabelsRoundTrip(t *testing.T) {
	labels := map[string]string{"b": "x,y", "a": `"q"`, "c": ""}
	s := resource.EncodeLabels(labels)
	if want := `a="\"q\"",b="x,y",c=""`; s != want {
		t.Errorf("EncodeLabels = %s; want %s", s, want)
	}
	if got, err := resource.DecodeLabels(s); err != nil || !reflect.DeepEqual(got, labels) {
		t.Errorf("DecodeLabels(EncodeLabels) = %v, %v", got, err)
	}
	if s := resource.EncodeLabels(nil); s != "" {
		t.Errorf("EncodeLabels(nil) = %q", s)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(resource.EnvVarType, " k8s ")
	t.Setenv(resource.EnvVarLabels, "")
	r, err := resource.FromEnv(context.Background())
	if err != nil || !reflect.DeepEqual(r, &resource.Resource{Type: "k8s"}) {
		t.Errorf("FromEnv = %+v, %v", r, err)
	}
	t.Setenv(resource.EnvVarLabels, `pod="p"`)
	r, err = resource.FromEnv(context.Background())
	if err != nil || !reflect.DeepEqual(r, &resource.Resource{Type: "k8s", Labels: map[string]string{"pod": "p"}}) {
		t.Errorf("FromEnv = %+v, %v", r, err)
	}
	t.Setenv(resource.EnvVarLabels, `pod=p`)
	if r, err = resource.FromEnv(context.Background()); err == nil || r != nil {
		t.Errorf("FromEnv with bad labels = %+v, %v; want an error", r, err)
	}
}

func TestMultiDetector(t *testing.T) {
	fixed := func(r *resource.Resource) resource.Detector {
		return func(context.Context) (*resource.Resource, error) { return r, nil }
	}
	a := &resource.Resource{Labels: map[string]string{"k": "a"}}
	b := &resource.Resource{Type: "t", Labels: map[string]string{"k": "b", "j": "b"}}
	r, err := resource.MultiDetector(fixed(nil), fixed(a), fixed(nil), fixed(b))(context.Background())
	if err != nil || !reflect.DeepEqual(r, &resource.Resource{Type: "t", Labels: map[string]string{"k": "a", "j": "b"}}) {
		t.Errorf("MultiDetector = %+v, %v", r, err)
	}
	if r, err := resource.MultiDetector(fixed(nil))(context.Background()); r != nil || err != nil {
		t.Errorf("MultiDetector(nil detector) = %+v, %v", r, err)
	}
	if r, _ := resource.MultiDetector(fixed(a))(context.Background()); r != a {
		t.Errorf("one resource is returned as is, as in OpenCensus")
	}
	boom := errors.New("boom")
	called := false
	r, err = resource.MultiDetector(fixed(a), func(context.Context) (*resource.Resource, error) { return nil, boom },
		func(context.Context) (*resource.Resource, error) { called = true; return b, nil })(context.Background())
	if !errors.Is(err, boom) || r != nil || called {
		t.Errorf("MultiDetector with a failing detector = %+v, %v (later called: %v)", r, err, called)
	}
}

func ExampleMultiDetector() {
	detect := resource.MultiDetector(
		func(context.Context) (*resource.Resource, error) {
			return &resource.Resource{Type: "k8s", Labels: map[string]string{"k8s.pod.name": "web-1"}}, nil
		},
		func(context.Context) (*resource.Resource, error) { // fills in what is not set yet
			return &resource.Resource{Type: "host", Labels: map[string]string{"k8s.pod.name": "x", "host.name": "h"}}, nil
		},
	)
	r, err := detect(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Type, resource.EncodeLabels(r.Labels))
	// Output: k8s host.name="h",k8s.pod.name="web-1"
}
