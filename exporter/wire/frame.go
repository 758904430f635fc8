package wire

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frames carry payloads over byte streams (files, stdout, pipes): a 4-byte
// big-endian length, then that many bytes of payload. A framed payload may
// be gzip-compressed; it then starts with gzip's magic bytes 1f 8b, which
// no payload (a msgpack array) can start with.
const FrameHeaderSize = 4

// MaxFrameSize is the largest frame ReadFrame accepts unless told otherwise.
const MaxFrameSize = 64 << 20

// AppendFrame appends p as a frame.
func AppendFrame(dst, p []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(p)))
	return append(dst, p...)
}

// ErrTooLarge is wrapped by errors about a frame, body or decompressed
// payload over its size cap.
var ErrTooLarge = errors.New("wire: payload too large")

// ReadFrame reads one frame from r into buf (reused when large enough) and
// returns the payload. It returns io.EOF at a clean end of stream and
// io.ErrUnexpectedEOF inside a frame; a frame over max bytes is an error
// (before anything is allocated for it).
func ReadFrame(r io.Reader, buf []byte, max int) ([]byte, error) {
	var hdr [FrameHeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if uint64(n) > uint64(max) {
		return nil, fmt.Errorf("%w: frame of %d bytes over the cap of %d", ErrTooLarge, n, max)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// IsGzip reports whether b starts with gzip's magic bytes.
func IsGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// Gunzip decompresses b, refusing to produce more than max bytes: a gzip
// bomb costs at most max bytes of memory and is answered with ErrTooLarge.
func Gunzip(b []byte, max int) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: gzip: %w", ErrMalformed, err)
	}
	var out bytes.Buffer
	n, err := io.Copy(&out, io.LimitReader(zr, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("%w: gzip: %w", ErrMalformed, err)
	}
	if n > int64(max) {
		return nil, fmt.Errorf("%w: decompresses to more than %d bytes", ErrTooLarge, max)
	}
	return out.Bytes(), nil
}
