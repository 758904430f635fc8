package receiver_test

import (
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/msgpack"
)

// rowsPayload is a payload of one count view "v" with no keys and n rows
// of count 1: 2 bytes each on the wire, a 96-byte Row each decoded, the
// format's densest (48x). name is the view's name, strs[1].
func rowsPayload(n int, name string) []byte {
	return hostile(wire.Count, nil, func(b []byte) []byte {
		b = msgpack.AppendArrayHeader(b, uint32(n))
		for range n {
			b = append(b, 0x91, 0x01) // [count 1]
		}
		return b
	}, "", name)
}

// distPayload is a payload of one distribution view "d" (bound 10) with
// one row of the given count and buckets.
func distPayload(count, b0, b1 uint64) []byte {
	return hostile(wire.Distribution, []float64{10}, func(b []byte) []byte {
		b = msgpack.AppendArrayHeader(b, 1)
		b = msgpack.AppendArrayHeader(b, 6) // count, sum, min, max, ssd, buckets
		b = msgpack.AppendUint(b, count)
		for range 4 {
			b = msgpack.AppendFloat(b, 1)
		}
		b = msgpack.AppendArrayHeader(b, 2)
		b = msgpack.AppendUint(b, b0)
		return msgpack.AppendUint(b, b1)
	}, "", "d")
}

// hostile assembles a payload of one view of no keys named strs[1].
func hostile(agg wire.Aggregation, bounds []float64, rows func([]byte) []byte, strs ...string) []byte {
	b := msgpack.AppendArrayHeader(nil, wire.EnvelopeLen)
	b = msgpack.AppendUint(b, wire.Version)
	b = msgpack.AppendArrayHeader(b, wire.HeaderLen)
	b = msgpack.AppendTime(b, time.Unix(1, 0))
	b = msgpack.AppendTime(b, time.Unix(2, 0))
	b = append(b, 0, 1, 0, msgpack.True) // cumulative, sequence 1, part 0, last
	b = msgpack.AppendArrayHeader(b, 0)  // resource
	b = msgpack.AppendArrayHeader(b, 1)  // views
	b = msgpack.AppendArrayHeader(b, wire.ViewLen)
	b = append(b, 1, 0, 0, byte(agg))   // name, description, unit, aggregation
	b = msgpack.AppendArrayHeader(b, 0) // keys
	b = msgpack.AppendArrayHeader(b, uint32(len(bounds)))
	for _, x := range bounds {
		b = msgpack.AppendFloat(b, x)
	}
	b = msgpack.AppendTime(b, time.Unix(1, 0))
	b = msgpack.AppendNil(rows(b)) // no overflow row
	b = msgpack.AppendArrayHeader(b, uint32(len(strs)))
	for _, s := range strs {
		b = msgpack.AppendString(b, s)
	}
	return b
}
