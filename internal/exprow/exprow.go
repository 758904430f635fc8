// Package exprow writes exponential distribution rows (msgpack
// aggregation 7) by hand, as docs/wire-format.md specifies them and not
// by the encoder, for the tests of the decoders (exporter/wire's, and the
// Python and Ruby readers' in exporter). Test support only.
package exprow

import (
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/msgpack"
)

// Row is one row; its counts are int64 so that a test can write a
// negative one.
type Row struct {
	Count          uint64
	Sum, Min, Max  float64
	Scale          int64
	Zero           uint64
	PosOff, NegOff int64
	Pos, Neg       []int64
}

// Field appends field c of r (wire.ExpDataLen of them, in the wire's
// order).
func (r *Row) Field(b []byte, c int) []byte {
	switch c {
	case 0:
		return msgpack.AppendUint(b, r.Count)
	case 1:
		return msgpack.AppendFloat(b, r.Sum)
	case 2:
		return msgpack.AppendFloat(b, r.Min)
	case 3:
		return msgpack.AppendFloat(b, r.Max)
	case 4:
		return msgpack.AppendInt(b, r.Scale)
	case 5:
		return msgpack.AppendUint(b, r.Zero)
	case 6:
		return msgpack.AppendInt(b, r.PosOff)
	case 7:
		return counts(b, r.Pos)
	case 8:
		return msgpack.AppendInt(b, r.NegOff)
	}
	return counts(b, r.Neg)
}

func counts(b []byte, cs []int64) []byte {
	b = msgpack.AppendArrayHeader(b, uint32(len(cs)))
	for _, x := range cs {
		b = msgpack.AppendInt(b, x)
	}
	return b
}

// AppendRows appends the rows of a view without keys: version 1's rows
// or version 2's columns (no starts).
func AppendRows(b []byte, version int, rows []Row) []byte {
	if version == wire.Version {
		b = msgpack.AppendArrayHeader(b, uint32(len(rows)))
		for i := range rows {
			b = msgpack.AppendArrayHeader(b, wire.ExpDataLen)
			for c := range wire.ExpDataLen {
				b = rows[i].Field(b, c)
			}
		}
		return b
	}
	b = msgpack.AppendArrayHeader(b, wire.ColumnsLen)
	b = msgpack.AppendUint(b, uint64(len(rows)))
	b = msgpack.AppendArrayHeader(b, 0) // no keys
	b = msgpack.AppendArrayHeader(b, wire.ExpDataLen)
	for c := range wire.ExpDataLen {
		b = msgpack.AppendArrayHeader(b, uint32(len(rows)))
		for i := range rows {
			b = rows[i].Field(b, c)
		}
	}
	return msgpack.AppendArrayHeader(b, 0) // no starts
}
