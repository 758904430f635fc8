// Package gzipbuf gzips payloads into a buffer it reuses, for the
// exporters that compress what they send (msgpack and OTLP).
package gzipbuf

import (
	"bytes"
	"compress/gzip"
)

// Compressor gzips one payload at a time into its own buffer. After the
// first payloads it allocates nothing: the writer and the buffer are
// reused. Not safe for concurrent use (each exporter serialises its
// exports).
type Compressor struct {
	buf bytes.Buffer
	zw  *gzip.Writer
}

// New returns a Compressor at level (0: gzip.BestSpeed). It fails for a
// level compress/gzip does not accept.
func New(level int) (*Compressor, error) {
	if level == 0 {
		level = gzip.BestSpeed
	}
	c := &Compressor{}
	zw, err := gzip.NewWriterLevel(&c.buf, level)
	if err != nil {
		return nil, err
	}
	c.zw = zw
	return c, nil
}

// Compress returns data gzipped. The result is valid until the next call.
func (c *Compressor) Compress(data []byte) []byte {
	c.buf.Reset()
	c.zw.Reset(&c.buf)
	// Writing to a bytes.Buffer cannot fail.
	_, _ = c.zw.Write(data)
	_ = c.zw.Close()
	return c.buf.Bytes()
}
