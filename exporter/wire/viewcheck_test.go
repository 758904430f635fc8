package wire_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/msgpack"
)

// viewPayload writes a views array of one view (name string ref name) with
// the given aggregation, key refs and bounds, and the rows rows appends.
func viewPayload(name, agg uint64, keys []uint64, bounds []float64, rows func(b []byte) []byte) func([]byte) []byte {
	return func(b []byte) []byte {
		b = msgpack.AppendArrayHeader(b, 1)
		b = msgpack.AppendArrayHeader(b, wire.ViewLen)
		b = msgpack.AppendUint(b, name)
		b = msgpack.AppendUint(b, 0) // description
		b = msgpack.AppendUint(b, 0) // unit
		b = msgpack.AppendUint(b, agg)
		b = msgpack.AppendArrayHeader(b, uint32(len(keys)))
		for _, k := range keys {
			b = msgpack.AppendUint(b, k)
		}
		b = msgpack.AppendArrayHeader(b, uint32(len(bounds)))
		for _, x := range bounds {
			b = msgpack.AppendFloat64(b, x)
		}
		b = msgpack.AppendTime(b, time.Unix(1, 0))
		return msgpack.AppendNil(rows(b)) // no overflow row
	}
}

func noRows(b []byte) []byte { return msgpack.AppendArrayHeader(b, 0) }

// TestDecodeRefusesAmbiguousViews: docs/wire-format.md says a view's keys
// are unique tag keys and its bounds finite and strictly increasing. A
// reader maps a row's values to keys by name, so a key listed twice would
// lose one of each row's values (with keys [k k], the row [x y 7] became
// k=y); an empty key or view name cannot be a tag key or a metric name;
// a non-finite bound (even alone, which the increasing check never saw)
// reaches OTLP's explicit_bounds. Each is refused with an error naming
// it, and the valid forms next to them decode.
func TestDecodeRefusesAmbiguousViews(t *testing.T) {
	oneRow := func(b []byte) []byte {
		b = msgpack.AppendArrayHeader(b, 1) // rows
		b = msgpack.AppendArrayHeader(b, 3) // [x, y, count]
		b = msgpack.AppendUint(b, 3)
		b = msgpack.AppendUint(b, 4)
		return msgpack.AppendUint(b, 7)
	}
	strs := []string{"", "v", "k", "x", "y", "j"}
	for _, tc := range []struct {
		name  string
		views func([]byte) []byte
		want  string // "" decodes
	}{
		{"keys [k k]", viewPayload(1, 1, []uint64{2, 2}, nil, oneRow), `key "k" is listed twice`},
		{"keys [k j]", viewPayload(1, 1, []uint64{2, 5}, nil, oneRow), ""},
		{"keys [k \"\"]", viewPayload(1, 1, []uint64{2, 0}, nil, oneRow), "key 1 is the empty string"},
		{"name \"\"", viewPayload(0, 1, nil, nil, noRows), "the empty string"},
		{"bounds [NaN]", viewPayload(1, 3, nil, []float64{math.NaN()}, noRows), "bound 0 is NaN"},
		{"bounds [+Inf]", viewPayload(1, 3, nil, []float64{math.Inf(1)}, noRows), "bound 0 is +Inf"},
		{"bounds [-Inf 1]", viewPayload(1, 3, nil, []float64{math.Inf(-1), 1}, noRows), "bound 0 is -Inf"},
		{"bounds [1 NaN]", viewPayload(1, 3, nil, []float64{1, math.NaN()}, noRows), "bound 1 is NaN"},
		{"bounds [-1 0 1]", viewPayload(1, 3, nil, []float64{-1, 0, 1}, noRows), ""},
	} {
		p, err := wire.Decode(build(1, tc.views, strs...))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v; want it decoded", tc.name, err)
		case tc.want != "" && err == nil:
			t.Errorf("%s: decoded as %+v; want an error saying %q", tc.name, p.Views, tc.want)
		case tc.want != "" && (!errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %q; want ErrMalformed saying %q", tc.name, err, tc.want)
		}
	}
}

// TestDecodeRefusesRepeatedKeysPastSmallSets: the check of unique keys
// switches from pairs to a set past 16 keys; both find a repeat.
func TestDecodeRefusesRepeatedKeysPastSmallSets(t *testing.T) {
	strs := []string{""}
	var keys []uint64
	for i := range 40 {
		strs = append(strs, string(rune('A'+i)))
		keys = append(keys, uint64(i+1))
	}
	if _, err := wire.Decode(build(1, viewPayload(1, 1, keys, nil, noRows), strs...)); err != nil {
		t.Fatalf("40 distinct keys: %v", err)
	}
	keys[39] = keys[20]
	if _, err := wire.Decode(build(1, viewPayload(1, 1, keys, nil, noRows), strs...)); err == nil || !strings.Contains(err.Error(), `"U" is listed twice`) {
		t.Fatalf("40 keys with the 21st twice: error %v; want it named", err)
	}
}
