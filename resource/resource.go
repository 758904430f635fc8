package resource

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Environment variables FromEnv reads the resource from.
const (
	EnvVarType   = "OC_RESOURCE_TYPE"
	EnvVarLabels = "OC_RESOURCE_LABELS"
)

// Resource describes an entity the data is about: its type (e.g.
// "k8s.io/container") and labels identifying it (e.g. the pod's name and
// namespace).
type Resource struct {
	Type   string
	Labels map[string]string
}

// EncodeLabels encodes labels as OC_RESOURCE_LABELS spells them:
// key="value" pairs (values quoted with strconv.Quote) separated by
// commas, sorted by key. Allocates the result.
func EncodeLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(labels[k]))
	}
	return b.String()
}

// labelRegex matches one `key="value",` pair, as OpenCensus's does: keys
// and values of ASCII characters, at most 256 of each (the value
// counted with its escapes).
var labelRegex = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*([[:ascii:]]{1,256}?)=("[[:ascii:]]{0,256}?")\s*,`)
})

// DecodeLabels decodes labels spelled as in OC_RESOURCE_LABELS:
// `key1="value1",key2="value2",...`, spaces around pairs and a trailing
// comma allowed; keys may be domain names or paths. A later pair of the
// same key wins. An error names the part that could not be read. Most
// programs use FromEnv instead.
func DecodeLabels(s string) (map[string]string, error) {
	m := map[string]string{}
	// A trailing comma keeps the pattern simple.
	s = strings.TrimRight(strings.TrimSpace(s), ",") + ","
	re := labelRegex()
	for len(s) > 0 {
		match := re.FindStringSubmatch(s)
		if match == nil {
			return nil, fmt.Errorf("invalid label formatting, remainder: %s", s)
		}
		v, err := strconv.Unquote(match[2])
		if err != nil {
			return nil, fmt.Errorf("invalid label formatting, remainder: %s, err: %s", s, err)
		}
		m[match[1]] = v
		s = s[len(match[0]):]
	}
	return m, nil
}

// FromEnv is a Detector of the resource in OC_RESOURCE_TYPE (its type,
// spaces trimmed) and OC_RESOURCE_LABELS (its labels, see DecodeLabels;
// nil when the variable is empty). It returns a resource even when both
// are empty, and an error when the labels cannot be decoded.
func FromEnv(context.Context) (*Resource, error) {
	res := &Resource{Type: strings.TrimSpace(os.Getenv(EnvVarType))}
	labels := strings.TrimSpace(os.Getenv(EnvVarLabels))
	if labels == "" {
		return res, nil
	}
	var err error
	if res.Labels, err = DecodeLabels(labels); err != nil {
		return nil, err
	}
	return res, nil
}

var _ Detector = FromEnv

// Detector detects resource information. It returns a nil resource and
// no error when it finds none; an error only on an unexpected failure.
type Detector func(context.Context) (*Resource, error)

// MultiDetector returns a Detector that calls detectors in order and
// merges their results: the first non-empty type, and for each label key
// the first value set. It returns the first error a detector returns (and
// no resource); nil when no detector found one.
func MultiDetector(detectors ...Detector) Detector {
	return func(ctx context.Context) (*Resource, error) {
		var res *Resource
		for _, d := range detectors {
			r, err := d(ctx)
			if err != nil {
				return nil, err
			}
			res = merge(res, r)
		}
		return res, nil
	}
}

// merge returns a resource with a's type, or b's when a's is empty, and
// the labels of both, a's winning. A nil one returns the other unchanged
// (not a copy), as in OpenCensus.
func merge(a, b *Resource) *Resource {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	res := &Resource{Type: a.Type, Labels: make(map[string]string, len(a.Labels)+len(b.Labels))}
	if res.Type == "" {
		res.Type = b.Type
	}
	for k, v := range b.Labels {
		res.Labels[k] = v
	}
	for k, v := range a.Labels {
		res.Labels[k] = v
	}
	return res
}
