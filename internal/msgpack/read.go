package msgpack

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Type is the kind of the next value in a Reader.
type Type uint8

// Value kinds.
const (
	InvalidType Type = iota
	NilType
	BoolType
	IntType // any integer format; ReadInt and ReadUint accept both signs' forms
	FloatType
	StrType
	BinType
	ArrayType
	MapType
	ExtType
)

var typeNames = [...]string{"invalid", "nil", "bool", "integer", "float", "str", "bin", "array", "map", "ext"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "Type(" + fmt.Sprint(uint8(t)) + ")"
}

// ErrShort is wrapped by every error about input that ends too early.
var ErrShort = errors.New("msgpack: unexpected end of input")

// Error describes malformed or unexpected input at an offset.
type Error struct {
	Off int    // offset of the value
	Msg string // what was wrong
}

func (e *Error) Error() string { return fmt.Sprintf("msgpack: at offset %d: %s", e.Off, e.Msg) }

type shortError struct{ off, need, have int }

func (e *shortError) Error() string {
	return fmt.Sprintf("msgpack: at offset %d: unexpected end of input: need %d bytes, have %d", e.off, e.need, e.have)
}
func (e *shortError) Unwrap() error { return ErrShort }

// Reader reads msgpack values from a byte slice. It never panics: every
// method checks the bytes it needs and returns an error naming the offset.
// Length prefixes are checked against the bytes left before anything is
// sliced or allocated, so hostile lengths cost nothing. Not safe for
// concurrent use.
type Reader struct {
	b   []byte
	off int
}

// NewReader returns a Reader over b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Reset makes r read b from its start.
func (r *Reader) Reset(b []byte) { r.b, r.off = b, 0 }

// Offset returns the offset of the next value.
func (r *Reader) Offset() int { return r.off }

// Len returns the number of unread bytes.
func (r *Reader) Len() int { return len(r.b) - r.off }

func (r *Reader) need(n int) error {
	if n < 0 || r.Len() < n {
		return &shortError{off: r.off, need: n, have: r.Len()}
	}
	return nil
}

func (r *Reader) errf(off int, format string, args ...any) error {
	return &Error{Off: off, Msg: fmt.Sprintf(format, args...)}
}

// NextType returns the kind of the next value without consuming it.
func (r *Reader) NextType() (Type, error) {
	if err := r.need(1); err != nil {
		return InvalidType, err
	}
	return typeOf(r.b[r.off]), nil
}

func typeOf(c byte) Type {
	switch {
	case c <= PosFixintMax || c >= NegFixintMin:
		return IntType
	case c&0xf0 == FixmapPrefix:
		return MapType
	case c&0xf0 == FixarrPrefix:
		return ArrayType
	case c&0xe0 == FixstrPrefix:
		return StrType
	}
	switch c {
	case Nil:
		return NilType
	case False, True:
		return BoolType
	case Bin8, Bin16, Bin32:
		return BinType
	case Ext8, Ext16, Ext32, Fixext1, Fixext2, Fixext4, Fixext8, Fixext16:
		return ExtType
	case Float32, Float64:
		return FloatType
	case Uint8, Uint16, Uint32, Uint64, Int8, Int16, Int32, Int64:
		return IntType
	case Str8, Str16, Str32:
		return StrType
	case Array16, Array32:
		return ArrayType
	case Map16, Map32:
		return MapType
	}
	return InvalidType // 0xc1, never used
}

func (r *Reader) typeErr(want Type) error {
	c := r.b[r.off]
	return r.errf(r.off, "want %v, got %v (0x%02x)", want, typeOf(c), c)
}

// ReadNil consumes a nil.
func (r *Reader) ReadNil() error {
	if err := r.need(1); err != nil {
		return err
	}
	if r.b[r.off] != Nil {
		return r.typeErr(NilType)
	}
	r.off++
	return nil
}

// ReadBool reads a boolean.
func (r *Reader) ReadBool() (bool, error) {
	if err := r.need(1); err != nil {
		return false, err
	}
	switch r.b[r.off] {
	case True:
		r.off++
		return true, nil
	case False:
		r.off++
		return false, nil
	}
	return false, r.typeErr(BoolType)
}

// readIntRaw reads any integer format, returning the value as int64 or,
// for uint64 values above MaxInt64, as big with u set.
func (r *Reader) readIntRaw() (i int64, u uint64, big bool, err error) {
	if err := r.need(1); err != nil {
		return 0, 0, false, err
	}
	c := r.b[r.off]
	if c <= PosFixintMax {
		r.off++
		return int64(c), 0, false, nil
	}
	if c >= NegFixintMin {
		r.off++
		return int64(int8(c)), 0, false, nil
	}
	var size int
	switch c {
	case Uint8, Int8:
		size = 1
	case Uint16, Int16:
		size = 2
	case Uint32, Int32:
		size = 4
	case Uint64, Int64:
		size = 8
	default:
		return 0, 0, false, r.typeErr(IntType)
	}
	if err := r.need(1 + size); err != nil {
		return 0, 0, false, err
	}
	p := r.b[r.off+1 : r.off+1+size]
	r.off += 1 + size
	switch c {
	case Uint8:
		return int64(p[0]), 0, false, nil
	case Uint16:
		return int64(get16(p)), 0, false, nil
	case Uint32:
		return int64(get32(p)), 0, false, nil
	case Uint64:
		v := get64(p)
		if v > math.MaxInt64 {
			return 0, v, true, nil
		}
		return int64(v), 0, false, nil
	case Int8:
		return int64(int8(p[0])), 0, false, nil
	case Int16:
		return int64(int16(get16(p))), 0, false, nil
	case Int32:
		return int64(int32(get32(p))), 0, false, nil
	}
	return int64(get64(p)), 0, false, nil
}

// ReadInt reads an integer of any format that fits an int64.
func (r *Reader) ReadInt() (int64, error) {
	off := r.off
	i, _, big, err := r.readIntRaw()
	if err != nil {
		return 0, err
	}
	if big {
		r.off = off
		return 0, r.errf(off, "integer overflows int64")
	}
	return i, nil
}

// ReadUint reads a non-negative integer of any format.
func (r *Reader) ReadUint() (uint64, error) {
	off := r.off
	i, u, big, err := r.readIntRaw()
	if err != nil {
		return 0, err
	}
	if big {
		return u, nil
	}
	if i < 0 {
		r.off = off
		return 0, r.errf(off, "want a non-negative integer, got %d", i)
	}
	return uint64(i), nil
}

// ReadFloat reads a float32 or float64; an integer is accepted too and
// converted, since some encoders write integral floats as integers.
func (r *Reader) ReadFloat() (float64, error) {
	if err := r.need(1); err != nil {
		return 0, err
	}
	switch r.b[r.off] {
	case Float32:
		if err := r.need(5); err != nil {
			return 0, err
		}
		v := math.Float32frombits(get32(r.b[r.off+1:]))
		r.off += 5
		return float64(v), nil
	case Float64:
		if err := r.need(9); err != nil {
			return 0, err
		}
		v := math.Float64frombits(get64(r.b[r.off+1:]))
		r.off += 9
		return v, nil
	}
	if typeOf(r.b[r.off]) != IntType {
		return 0, r.typeErr(FloatType)
	}
	i, u, big, err := r.readIntRaw()
	if big {
		return float64(u), err
	}
	return float64(i), err
}

// readLen reads the length that follows a str/bin/ext/array/map prefix of
// size 1, 2 or 4 bytes at r.off+1, and consumes prefix and length. A
// length over the bytes left times perByte is an error before any
// conversion to int, so 32-bit platforms cannot see it wrap.
func (r *Reader) readLen(size int, perItem uint64, what string) (int, error) {
	start := r.off
	if err := r.need(1 + size); err != nil {
		return 0, err
	}
	p := r.b[r.off+1:]
	var n uint64
	switch size {
	case 1:
		n = uint64(p[0])
	case 2:
		n = uint64(get16(p))
	default:
		n = uint64(get32(p))
	}
	r.off += 1 + size
	if left := uint64(r.Len()); n*perItem > left {
		r.off = start
		if perItem == 1 && what == "" {
			return 0, &shortError{off: start, need: 1 + size + int(min(n, 1<<30)), have: int(left) + 1 + size}
		}
		return 0, r.errf(start, "header announces %d %s, more than the %d bytes left can hold", n, what, left)
	}
	return int(n), nil
}

// lenForm describes the formats of one length-prefixed kind: an optional
// fix form (the length in the low bits of the first byte) and the 8-, 16-
// and 32-bit length forms (0: the kind has no such form).
type lenForm struct {
	fixMask, fixPrefix, fixLen byte
	c8, c16, c32               byte
	perItem                    uint64 // bytes each counted item takes at least
	what                       string // "" for str and bin: a short input is ErrShort
	typ                        Type
}

var (
	strForm = lenForm{0xe0, FixstrPrefix, 0x1f, Str8, Str16, Str32, 1, "", StrType}
	binForm = lenForm{0, 0, 0, Bin8, Bin16, Bin32, 1, "", BinType}
	arrForm = lenForm{0xf0, FixarrPrefix, 0x0f, 0, Array16, Array32, 1, "elements", ArrayType}
	mapForm = lenForm{0xf0, FixmapPrefix, 0x0f, 0, Map16, Map32, 2, "pairs", MapType}
)

// readHeader reads the header of a value of form f and returns its length;
// on error it consumes nothing.
func (r *Reader) readHeader(f *lenForm) (int, error) {
	if err := r.need(1); err != nil {
		return 0, err
	}
	switch c := r.b[r.off]; {
	case f.fixMask != 0 && c&f.fixMask == f.fixPrefix:
		r.off++
		return int(c & f.fixLen), nil
	case f.c8 != 0 && c == f.c8:
		return r.readLen(1, f.perItem, f.what)
	case c == f.c16:
		return r.readLen(2, f.perItem, f.what)
	case c == f.c32:
		return r.readLen(4, f.perItem, f.what)
	}
	return 0, r.typeErr(f.typ)
}

// readRaw reads a str or bin of form f, aliasing the input.
func (r *Reader) readRaw(f *lenForm) ([]byte, error) {
	start := r.off
	n, err := r.readHeader(f)
	if err == nil {
		err = r.need(n)
	}
	if err != nil {
		r.off = start
		return nil, err
	}
	v := r.b[r.off : r.off+n]
	r.off += n
	return v, nil
}

// ReadStringBytes reads a str, returning its bytes without copying (they
// alias the input).
func (r *Reader) ReadStringBytes() ([]byte, error) { return r.readRaw(&strForm) }

// ReadString reads a str into a new string.
func (r *Reader) ReadString() (string, error) {
	b, err := r.ReadStringBytes()
	return string(b), err
}

// ReadBytes reads a bin, aliasing the input.
func (r *Reader) ReadBytes() ([]byte, error) { return r.readRaw(&binForm) }

// ReadArrayHeader reads an array header. The count is checked against the
// bytes left (every element takes at least one byte), so a caller may
// allocate for it.
func (r *Reader) ReadArrayHeader() (int, error) { return r.readHeader(&arrForm) }

// ReadMapHeader reads a map header, checked like ReadArrayHeader.
func (r *Reader) ReadMapHeader() (int, error) { return r.readHeader(&mapForm) }

// ReadExt reads an extension value, aliasing its data.
func (r *Reader) ReadExt() (typ int8, data []byte, err error) {
	if err := r.need(1); err != nil {
		return 0, nil, err
	}
	start := r.off
	var n, hdr int
	switch r.b[r.off] {
	case Fixext1:
		n, hdr = 1, 1
	case Fixext2:
		n, hdr = 2, 1
	case Fixext4:
		n, hdr = 4, 1
	case Fixext8:
		n, hdr = 8, 1
	case Fixext16:
		n, hdr = 16, 1
	case Ext8:
		n, err = r.readLen(1, 1, "")
		r.off--
		hdr = 2
	case Ext16:
		n, err = r.readLen(2, 1, "")
		r.off--
		hdr = 3
	case Ext32:
		n, err = r.readLen(4, 1, "")
		r.off--
		hdr = 5
	default:
		return 0, nil, r.typeErr(ExtType)
	}
	if err != nil {
		r.off = start
		return 0, nil, err
	}
	r.off = start
	if err := r.need(hdr + 1 + n); err != nil {
		return 0, nil, err
	}
	typ = int8(r.b[start+hdr])
	data = r.b[start+hdr+1 : start+hdr+1+n]
	r.off = start + hdr + 1 + n
	return typ, data, nil
}

// ReadTime reads a timestamp extension (any of its three forms).
func (r *Reader) ReadTime() (time.Time, error) {
	start := r.off
	typ, data, err := r.ReadExt()
	if err != nil {
		return time.Time{}, err
	}
	if typ != TimestampExt {
		r.off = start
		return time.Time{}, r.errf(start, "want a timestamp (ext type -1), got ext type %d", typ)
	}
	var sec, nsec int64
	switch len(data) {
	case 4:
		sec = int64(get32(data))
	case 8:
		v := get64(data)
		nsec, sec = int64(v>>34), int64(v&(1<<34-1))
	case 12:
		nsec, sec = int64(get32(data)), int64(get64(data[4:]))
	default:
		r.off = start
		return time.Time{}, r.errf(start, "timestamp of %d bytes; want 4, 8 or 12", len(data))
	}
	if nsec > 999999999 {
		r.off = start
		return time.Time{}, r.errf(start, "timestamp nanoseconds %d out of range", nsec)
	}
	return time.Unix(sec, nsec).UTC(), nil
}

// Skip consumes one value, however deeply nested, without recursion.
func (r *Reader) Skip() error {
	start := r.off
	for pending := 1; pending > 0; pending-- {
		t, err := r.NextType()
		if err != nil {
			r.off = start
			return err
		}
		switch t {
		case ArrayType:
			n, err := r.ReadArrayHeader()
			if err != nil {
				r.off = start
				return err
			}
			pending += n
			continue
		case MapType:
			n, err := r.ReadMapHeader()
			if err != nil {
				r.off = start
				return err
			}
			pending += 2 * n
			continue
		case NilType, BoolType:
			r.off++
			continue
		case IntType:
			_, _, _, err = r.readIntRaw()
		case FloatType:
			_, err = r.ReadFloat()
		case StrType:
			_, err = r.ReadStringBytes()
		case BinType:
			_, err = r.ReadBytes()
		case ExtType:
			_, _, err = r.ReadExt()
		default:
			err = r.errf(r.off, "invalid format byte 0x%02x", r.b[r.off])
		}
		if err != nil {
			r.off = start
			return err
		}
	}
	return nil
}
