package exporter

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
)

// halfFile writes half of a frame and fails with ENOSPC when failNext is
// set, as a full disk does; it can be cut back (Truncate, Seek).
type halfFile struct {
	*os.File
	failNext bool
}

func (f *halfFile) Write(b []byte) (int, error) {
	if f.failNext {
		f.failNext = false
		n, _ := f.File.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	return f.File.Write(b)
}

// halfPipe is the same on a stream that cannot be cut back.
type halfPipe struct {
	buf      bytes.Buffer
	failNext bool
}

func (p *halfPipe) Write(b []byte) (int, error) {
	if p.failNext {
		p.failNext = false
		n, _ := p.buf.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	return p.buf.Write(b)
}

// readCounts decodes a frame stream and sums the fixture's count view
// over it; it fails on a stream that does not decode.
func readCounts(t *testing.T, r io.Reader, name string) (total uint64, frames int, err error) {
	t.Helper()
	var buf []byte
	for {
		b, err := wire.ReadFrame(r, buf, 1<<24)
		if err == io.EOF {
			return total, frames, nil
		}
		if err != nil {
			return total, frames, err
		}
		p, err := wire.Decode(b)
		if err != nil {
			return total, frames, err
		}
		frames++
		for _, v := range p.Views {
			if v.Name == name {
				for _, row := range v.Rows {
					total += row.Count
				}
			}
		}
	}
}

// TestWriterSinkPartialFrameOnFile: a frame half written before ENOSPC is
// cut back and written again whole, so the file stays readable and the
// delta counts add up (issue 12: the frame was written again after its
// first half, and the reader failed with "frame of 2695656293 bytes").
func TestWriterSinkPartialFrameOnFile(t *testing.T) {
	f := newFixture(t, 5) // 5 records
	file, err := os.Create(filepath.Join(t.TempDir(), "frames"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	w := &halfFile{File: file}
	e, err := New(&WriterSink{W: w}, Options{Temporality: Delta, Logger: slog.New(slog.DiscardHandler),
		Retry: Retry{InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Export(ctx); err != nil {
		t.Fatal(err)
	}
	f.record(t, 5, 2) // 10 more
	w.failNext = true
	if err := e.Export(ctx); err != nil {
		t.Fatalf("export after a partial write: %v; want the frame cut back and retried", err)
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	total, frames, err := readCounts(t, file, f.names[0])
	if err != nil || total != 15 || frames != 2 {
		t.Errorf("read back %d frames counting %d (%v); want 2 frames counting 15", frames, total, err)
	}
}

// TestWriterSinkPartialFrameOnPipe: on a stream that cannot be cut back,
// nothing is written after a partial frame (every later send fails, and
// what is given up is counted), so a reader reads every whole frame before
// it and then an unexpected end, never garbage read as a frame.
func TestWriterSinkPartialFrameOnPipe(t *testing.T) {
	f := newFixture(t, 5)
	w := &halfPipe{}
	e, err := New(&WriterSink{W: w}, Options{Temporality: Delta, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Export(ctx); err != nil {
		t.Fatal(err)
	}
	w.failNext = true
	f.record(t, 5, 1)
	if err := e.Export(ctx); err == nil {
		t.Fatal("export after a partial write on a pipe succeeded")
	}
	good := w.buf.Len()
	f.record(t, 5, 1)
	if err := e.Export(ctx); err == nil {
		t.Fatal("export on a broken stream succeeded")
	}
	if w.buf.Len() != good {
		t.Errorf("%d bytes written after the partial frame; want none", w.buf.Len()-good)
	}
	if s := e.Stats(); s.Dropped == 0 || s.Queued != 0 {
		t.Errorf("stats %+v; want the payloads that cannot be written dropped and counted", s)
	}
	total, frames, err := readCounts(t, &w.buf, f.names[0])
	if total != 5 || frames != 1 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read %d frames counting %d, then %v; want 1 frame counting 5, then an unexpected EOF", frames, total, err)
	}
}
