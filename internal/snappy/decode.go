package snappy

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Decode decodes a block-format payload. It is a straightforward second
// implementation, for tests and tools to round-trip through (the
// benchmarks module also checks the encoder against
// github.com/golang/snappy); it allocates the result.
func Decode(src []byte) ([]byte, error) {
	n, k := binary.Uvarint(src)
	if k <= 0 {
		return nil, errors.New("snappy: bad length")
	}
	src = src[k:]
	// A 3-byte copy yields at most 64 bytes: no valid input expands more
	// than 22 times. Checked before allocating for a hostile length.
	if n > uint64(len(src))*22 {
		return nil, fmt.Errorf("snappy: length %d is more than %d bytes can encode", n, len(src))
	}
	dst := make([]byte, 0, n)
	for len(src) > 0 {
		tag := src[0]
		var length, off int
		switch tag & 3 {
		case tagLiteral:
			l := int(tag >> 2)
			src = src[1:]
			if l >= 60 {
				nb := l - 59
				if len(src) < nb {
					return nil, errors.New("snappy: short literal length")
				}
				l = 0
				for i := nb - 1; i >= 0; i-- {
					l = l<<8 | int(src[i])
				}
				src = src[nb:]
			}
			l++
			if len(src) < l {
				return nil, errors.New("snappy: short literal")
			}
			dst = append(dst, src[:l]...)
			src = src[l:]
			continue
		case tagCopy1:
			if len(src) < 2 {
				return nil, errors.New("snappy: short copy1")
			}
			length, off = 4+int(tag>>2&7), int(tag>>5)<<8|int(src[1])
			src = src[2:]
		case tagCopy2:
			if len(src) < 3 {
				return nil, errors.New("snappy: short copy2")
			}
			length, off = 1+int(tag>>2), int(src[1])|int(src[2])<<8
			src = src[3:]
		default:
			if len(src) < 5 {
				return nil, errors.New("snappy: short copy4")
			}
			length, off = 1+int(tag>>2), int(binary.LittleEndian.Uint32(src[1:]))
			src = src[5:]
		}
		if off == 0 || off > len(dst) {
			return nil, fmt.Errorf("snappy: bad offset %d at %d", off, len(dst))
		}
		for range length {
			dst = append(dst, dst[len(dst)-off])
		}
	}
	if uint64(len(dst)) != n {
		return nil, fmt.Errorf("snappy: decoded %d bytes; header says %d", len(dst), n)
	}
	return dst, nil
}
