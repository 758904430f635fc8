// Package gzipbuf gzips payloads into a buffer it reuses: the one gzip
// compressor of zerostat, for the exporters that compress what they send
// (msgpack and OTLP, one Compressor each) and for the HTTP handlers that
// compress what they serve (a Pool of them).
package gzipbuf

import (
	"bytes"
	"compress/gzip"
	"sync"
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

// Cap is the capacity of a buffer a Pool keeps; a Compressor that grew
// larger is left to the garbage collector (as log/slog's internal/buffer
// does).
const Cap = 32 << 20

// Pool lends Compressors at gzip.BestSpeed to concurrent users (the HTTP
// handlers). Safe for concurrent use; the zero value is ready.
type Pool struct{ p sync.Pool }

// Get returns a Compressor; give it back with Put once its result is no
// longer used.
func (p *Pool) Get() *Compressor {
	if c, ok := p.p.Get().(*Compressor); ok {
		return c
	}
	c, _ := New(gzip.BestSpeed) // a valid level: no error
	return c
}

// Put returns c to the pool, unless its buffer grew past Cap.
func (p *Pool) Put(c *Compressor) {
	if c.buf.Cap() <= Cap {
		p.p.Put(c)
	}
}
