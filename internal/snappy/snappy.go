// Package snappy writes the Snappy block format
// (https://github.com/google/snappy/blob/main/format_description.txt), the
// compression Prometheus remote write requires. It only encodes; the
// benchmarks module checks the output with github.com/golang/snappy's
// decoder.
//
// The encoder is the classic Snappy/LZ77 scheme, as in the reference
// implementations: the input is cut into 64 KiB blocks, each scanned with
// a 16 Ki-entry hash table of 4-byte sequences; a match of 4 or more bytes
// becomes a copy (offset < 64 KiB, so 1- or 2-byte offsets), the bytes in
// between literals, and lookups accelerate over incompressible input.
//
// Cost: about the speed of memory copying on incompressible input,
// several hundred MB/s on text; no allocation beyond growing dst (the
// hash table lives in the Encoder). An Encoder is not safe for concurrent
// use; its zero value is ready.
package snappy

import (
	"encoding/binary"
	"math/bits"
)

// Element tags (format_description.txt, section 2.1: the low two bits).
const (
	tagLiteral = 0x00
	tagCopy1   = 0x01 // 1-byte offset (11 bits), length 4..11
	tagCopy2   = 0x02 // 2-byte offset, length 1..64
)

const (
	// maxBlockSize is the size of the blocks the input is cut into, as in
	// the reference encoder: offsets then fit 2 bytes.
	maxBlockSize = 65536
	// tableBits sizes the hash table (2^14 uint16 entries, 32 KiB).
	tableBits = 14
	tableSize = 1 << tableBits
	// inputMargin keeps 8-byte loads inside a block's end; blocks smaller
	// than minNonLiteralBlockSize are written as one literal.
	inputMargin            = 16 - 1
	minNonLiteralBlockSize = 1 + 1 + inputMargin
)

// Encoder compresses into the block format. Its zero value is ready.
type Encoder struct {
	table [tableSize]uint16
}

// MaxEncodedLen returns the largest possible encoding of n bytes (the
// reference bound: 32 + n + n/6).
func MaxEncodedLen(n int) int { return 32 + n + n/6 }

// Append appends the Snappy block encoding of src to dst and returns it.
func (e *Encoder) Append(dst, src []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(src)))
	for len(src) > 0 {
		p := src
		if len(p) > maxBlockSize {
			p = p[:maxBlockSize]
		}
		src = src[len(p):]
		if len(p) < minNonLiteralBlockSize {
			dst = appendLiteral(dst, p)
		} else {
			dst = e.block(dst, p)
		}
	}
	return dst
}

func load32(b []byte, i int) uint32 { return binary.LittleEndian.Uint32(b[i : i+4]) }
func load64(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i : i+8]) }

func hash(u uint32) uint32 { return (u * 0x1e35a7bd) >> (32 - tableBits) }

// block encodes one block (minNonLiteralBlockSize <= len(src) <=
// maxBlockSize). Positions in the table are relative to the block.
func (e *Encoder) block(dst, src []byte) []byte {
	clear(e.table[:])
	sLimit := len(src) - inputMargin
	nextEmit := 0
	s := 1
	nextHash := hash(load32(src, s))
	for {
		// Look for a 4-byte match. Every 32 misses the step grows by one
		// byte (skip>>5), so incompressible input is crossed quickly.
		skip := 32
		nextS := s
		candidate := 0
		for {
			s = nextS
			step := skip >> 5
			nextS = s + step
			skip += step
			if nextS > sLimit {
				goto remainder
			}
			candidate = int(e.table[nextHash])
			e.table[nextHash] = uint16(s)
			nextHash = hash(load32(src, nextS))
			if load32(src, s) == load32(src, candidate) {
				break
			}
		}
		dst = appendLiteral(dst, src[nextEmit:s])
		// Emit copies while the byte after each match starts another.
		for {
			base := s
			s += 4
			s += matchLen(src[candidate+4:], src[s:])
			dst = appendCopy(dst, base-candidate, s-base)
			nextEmit = s
			if s >= sLimit {
				goto remainder
			}
			// Hash the positions s-1 and s: the first for later matches,
			// the second to test for an immediate new match.
			x := load64(src, s-1)
			e.table[hash(uint32(x))] = uint16(s - 1)
			cur := hash(uint32(x >> 8))
			candidate = int(e.table[cur])
			e.table[cur] = uint16(s)
			if uint32(x>>8) != load32(src, candidate) {
				nextHash = hash(uint32(x >> 16))
				s++
				break
			}
		}
	}
remainder:
	if nextEmit < len(src) {
		dst = appendLiteral(dst, src[nextEmit:])
	}
	return dst
}

// matchLen returns the length of the common prefix of a and b (b no
// longer than a... either may be the shorter).
func matchLen(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := load64(a, i) ^ load64(b, i); x != 0 {
			return i + bits.TrailingZeros64(x)>>3
		}
	}
	for ; i < n && a[i] == b[i]; i++ {
	}
	return i
}

// appendLiteral appends a literal element: its tag (length-1 in the tag
// byte below 60, else in 1 to 4 following bytes) and the bytes.
func appendLiteral(dst, lit []byte) []byte {
	if len(lit) == 0 {
		return dst
	}
	n := uint32(len(lit) - 1)
	switch {
	case n < 60:
		dst = append(dst, byte(n)<<2|tagLiteral)
	case n < 1<<8:
		dst = append(dst, 60<<2|tagLiteral, byte(n))
	case n < 1<<16:
		dst = append(dst, 61<<2|tagLiteral, byte(n), byte(n>>8))
	case n < 1<<24:
		dst = append(dst, 62<<2|tagLiteral, byte(n), byte(n>>8), byte(n>>16))
	default:
		dst = append(dst, 63<<2|tagLiteral, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	}
	return append(dst, lit...)
}

// appendCopy appends copy elements for a match of length bytes at offset
// (1 <= offset < 65536, length >= 4): 64-byte copies while more than 67
// remain (so the rest is never below 4), then one 1- or 2-byte-offset copy.
func appendCopy(dst []byte, offset, length int) []byte {
	for length >= 68 {
		dst = append(dst, 63<<2|tagCopy2, byte(offset), byte(offset>>8))
		length -= 64
	}
	if length > 64 {
		dst = append(dst, 59<<2|tagCopy2, byte(offset), byte(offset>>8))
		length -= 60
	}
	if length >= 12 || offset >= 2048 {
		return append(dst, byte(length-1)<<2|tagCopy2, byte(offset), byte(offset>>8))
	}
	return append(dst, byte(offset>>8)<<5|byte(length-4)<<2|tagCopy1, byte(offset))
}
