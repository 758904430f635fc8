package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/zerostat/zerostat/exporter/wire"
)

// runDecode prints a payload file, or a stream of frames as written by
// exporter.WriterSink, as JSON lines (or tables).
func runDecode(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("decode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "json", "output: json (one object per payload, per line) or table")
	maxDec := fs.Int("max-decompressed", 64<<20, "largest decompressed payload, in bytes")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: zerostat decode [-format json|table] FILE  (- for standard input)")
		return 2
	}
	pr, err := newPrinter(stdout, *format)
	if err != nil {
		fmt.Fprintln(stderr, "zerostat decode:", err)
		return 2
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
// 0x95 only for frames over 2.5 GB, which are refused.
func decodeAll(data []byte, maxDec int, fn func(*wire.Payload) error) error {
	if len(data) == 0 {
		return fmt.Errorf("empty input")
	}
	if data[0] == 0x95 || wire.IsGzip(data) {
		return decodeOne(data, maxDec, fn, "payload")
	}
	r := bytes.NewReader(data)
	var buf []byte
	for i := 0; ; i++ {
		frame, err := wire.ReadFrame(r, buf, wire.MaxFrameSize)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("frame %d: %w", i, err)
		}
		if err := decodeOne(frame, maxDec, fn, fmt.Sprintf("frame %d", i)); err != nil {
			return err
		}
		buf = frame
	}
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
