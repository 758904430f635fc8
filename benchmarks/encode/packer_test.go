package encode

import (
	"testing"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/msgpack"
)

// packer writes zerostat's wire format (exporter/wire, version 1) from the
// mirror Snapshot with internal/msgpack and a per-payload string table,
// the way the SDK's encoder does, but from structs built beforehand: it is
// encode only, comparable with the other encoders, where impl=zerostat is
// snapshot + encode. Strings are interned to stable ids once at set-up (as
// the SDK interns names and tag values when views are registered and series
// created), so a payload's string table costs two array reads per string,
// no hashing.
//
// It is not the SDK's code path: it stands for the encode half of
// Exporter.Export, which cannot be measured alone from outside package
// exporter. Its output decodes with wire.Decode to the same rows.
type packer struct {
	snap  *Snapshot
	strs  []string // by stable id
	views []packView
	res   [][2]uint32

	buf   []byte
	gen   uint32
	gens  []uint32 // by stable id: generation of ids[sid]
	ids   []uint32 // by stable id: payload id
	order []uint32 // stable ids in payload order
}

type packView struct {
	name, desc, unit uint32
	keys             []uint32
	values           []uint32 // len(keys) per row
}

func newPacker(s *Snapshot) *packer {
	p := &packer{snap: s}
	sids := map[string]uint32{}
	intern := func(str string) uint32 {
		if id, ok := sids[str]; ok {
			return id
		}
		id := uint32(len(p.strs))
		sids[str] = id
		p.strs = append(p.strs, str)
		return id
	}
	intern("") // id 0, as in the SDK's payloads
	for _, a := range s.Resource {
		p.res = append(p.res, [2]uint32{intern(a.Key), intern(a.Value)})
	}
	for _, v := range s.Views {
		pv := packView{name: intern(v.Name), desc: intern(v.Description), unit: intern(v.Unit)}
		for _, k := range v.Keys {
			pv.keys = append(pv.keys, intern(k))
		}
		for _, r := range v.Rows {
			for _, val := range r.Values {
				pv.values = append(pv.values, intern(val))
			}
		}
		p.views = append(p.views, pv)
	}
	p.gens = make([]uint32, len(p.strs))
	p.ids = make([]uint32, len(p.strs))
	return p
}

// id returns the payload id of stable id sid, adding it to the table.
func (p *packer) id(sid uint32) uint32 {
	if p.gens[sid] != p.gen {
		p.gens[sid], p.ids[sid] = p.gen, uint32(len(p.order))
		p.order = append(p.order, sid)
	}
	return p.ids[sid]
}

// str appends the payload id of stable id sid.
func (p *packer) str(b []byte, sid uint32) []byte {
	return msgpack.AppendUint(b, uint64(p.id(sid)))
}

// encode writes the snapshot as one payload; the result is valid until the
// next call.
func (p *packer) encode() []byte {
	p.gen++
	p.order = p.order[:0]
	p.id(0) // "" is always id 0
	s := p.snap
	b := msgpack.AppendArrayHeader(p.buf[:0], wire.EnvelopeLen)
	b = msgpack.AppendUint(b, wire.Version)
	b = msgpack.AppendArrayHeader(b, wire.HeaderLen)
	b = msgpack.AppendTime(b, s.Start)
	b = msgpack.AppendTime(b, s.End)
	b = msgpack.AppendUint(b, uint64(s.Temporality))
	b = msgpack.AppendUint(b, s.Sequence)
	b = msgpack.AppendUint(b, 0) // part
	b = msgpack.AppendBool(b, true)
	b = msgpack.AppendArrayHeader(b, uint32(len(p.res)))
	for _, kv := range p.res {
		b = msgpack.AppendArrayHeader(b, wire.AttrLen)
		b = p.str(b, kv[0])
		b = p.str(b, kv[1])
	}
	b = msgpack.AppendArrayHeader(b, uint32(len(s.Views)))
	for vi := range s.Views {
		v, pv := &s.Views[vi], &p.views[vi]
		agg := wire.Aggregation(v.Aggregation)
		b = msgpack.AppendArrayHeader(b, wire.ViewLen)
		b = p.str(b, pv.name)
		b = p.str(b, pv.desc)
		b = p.str(b, pv.unit)
		b = msgpack.AppendUint(b, uint64(v.Aggregation))
		b = msgpack.AppendArrayHeader(b, uint32(len(pv.keys)))
		for _, k := range pv.keys {
			b = p.str(b, k)
		}
		b = msgpack.AppendArrayHeader(b, uint32(len(v.Bounds)))
		for _, x := range v.Bounds {
			b = msgpack.AppendFloat(b, x)
		}
		b = msgpack.AppendTime(b, v.Start)
		b = msgpack.AppendArrayHeader(b, uint32(len(v.Rows)))
		nk := len(pv.keys)
		rowLen := uint32(wire.RowLen(agg, nk))
		for ri := range v.Rows {
			r := &v.Rows[ri]
			b = msgpack.AppendArrayHeader(b, rowLen)
			for _, sid := range pv.values[ri*nk : ri*nk+nk] {
				b = p.str(b, sid)
			}
			switch agg {
			case wire.Count:
				b = msgpack.AppendUint(b, r.Count)
			case wire.Sum, wire.LastValue:
				b = msgpack.AppendFloat(b, r.Value)
			default:
				b = msgpack.AppendUint(b, r.Count)
				b = msgpack.AppendFloat(b, r.Value)
				b = msgpack.AppendFloat(b, r.Dist.Min)
				b = msgpack.AppendFloat(b, r.Dist.Max)
				b = msgpack.AppendFloat(b, r.Dist.SumSq)
				b = msgpack.AppendArrayHeader(b, uint32(len(r.Dist.Buckets)))
				for _, c := range r.Dist.Buckets {
					b = msgpack.AppendUint(b, c)
				}
			}
		}
		b = msgpack.AppendNil(b) // no overflow row
	}
	b = msgpack.AppendArrayHeader(b, uint32(len(p.order)))
	for _, sid := range p.order {
		b = msgpack.AppendString(b, p.strs[sid])
	}
	p.buf = b
	return b
}

func setupPacker(_ testing.TB, f *fixture) func() []byte {
	return newPacker(f.snap).encode
}
