package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/zerostat/zerostat/exporter/wire"
)

// runDecode prints a payload file, or a stream of frames as written by
// exporter.WriterSink, as JSON lines (or tables).
func runDecode(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("decode", "decode [flags] FILE", `Prints a zerostat payload (possibly gzip-compressed), or a stream of frames
as exporter.WriterSink writes them, read from FILE (- for standard input).`)
	format := fs.String("format", "json", "output: json (one object per payload, per line) or table")
	maxDec := fs.Int("max-decompressed", 64<<20, "largest decompressed payload, in `bytes`")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(fs, stderr, "want one FILE (- for standard input); got %d arguments", fs.NArg())
	}
	pr, err := newPrinter(stdout, *format)
	if err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	var data []byte
	if name := fs.Arg(0); name == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		fmt.Fprintln(stderr, "zerostat decode:", err)
		return 1
	}
	if err := decodeAll(data, *maxDec, pr.print); err != nil {
		fmt.Fprintln(stderr, "zerostat decode:", err)
		return 1
	}
	return 0
}

// decodeAll decodes data as one payload (possibly gzip) or, when it does
// not start like one, as a stream of frames, calling fn for each payload.
// A single payload starts with a msgpack fixarray of 5 (0x95) or gzip's
// magic; a frame starts with a 4-byte length, whose first byte would be
// 0x95 only for frames over 2.5 GB, which are refused. Input that is
// neither (a frame length over wire.MaxFrameSize, a frame whose bytes do
// not start like a payload) is answered "not a zerostat payload" with
// its first bytes in hex, not with the first check it happened to fail.
func decodeAll(data []byte, maxDec int, fn func(*wire.Payload) error) error {
	if len(data) == 0 {
		return fmt.Errorf("empty input")
	}
	if startsLikePayload(data) {
		return decodeOne(data, maxDec, fn, "payload")
	}
	for i, off := 0, 0; off < len(data); i++ {
		rest := data[off:]
		where := fmt.Sprintf("frame %d at offset %d", i, off)
		if len(rest) < wire.FrameHeaderSize {
			if i == 0 {
				return notPayload(rest)
			}
			return fmt.Errorf("%s: truncated: %d bytes, less than a frame header", where, len(rest))
		}
		n := binary.BigEndian.Uint32(rest)
		body := rest[wire.FrameHeaderSize:]
		if n == 0 || n > wire.MaxFrameSize || !startsLikePayload(body[:min(len(body), int(n))]) {
			if i == 0 {
				return notPayload(rest)
			}
			return fmt.Errorf("%s: %w", where, notPayload(rest))
		}
		if uint64(len(body)) < uint64(n) {
			return fmt.Errorf("%s: truncated: %d bytes declared, %d present", where, n, len(body))
		}
		if err := decodeOne(body[:n], maxDec, fn, fmt.Sprintf("frame %d", i)); err != nil {
			return err
		}
		off += wire.FrameHeaderSize + int(n)
	}
	return nil
}

// startsLikePayload reports whether b could be the start of a payload: a
// msgpack array of 5 (0x95) or gzip's magic (1f 8b). An empty b could.
func startsLikePayload(b []byte) bool {
	switch {
	case len(b) == 0, b[0] == 0x95:
		return true
	case b[0] == 0x1f:
		return len(b) == 1 || b[1] == 0x8b
	}
	return false
}

// notPayload describes input that is neither a payload nor a frame.
func notPayload(b []byte) error {
	const show = 16
	more := ""
	if len(b) > show {
		b, more = b[:show], " ..."
	}
	return fmt.Errorf("not a zerostat payload or frame stream (first bytes % x%s)", b, more)
}

func decodeOne(b []byte, maxDec int, fn func(*wire.Payload) error, what string) error {
	if wire.IsGzip(b) {
		var err error
		if b, err = wire.Gunzip(b, maxDec); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	p, err := wire.Decode(b)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fn(p)
}
