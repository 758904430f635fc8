package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/zerostat/zerostat/exporter/receiver"
	"github.com/zerostat/zerostat/exporter/wire"
)

// printer writes payloads as tables or JSON lines, one payload at a time.
type printer struct {
	mu     sync.Mutex
	w      io.Writer
	format string
	show   func(view string) bool // tables print these views (nil: all)
}

func newPrinter(w io.Writer, format string) (*printer, error) {
	if format != "table" && format != "json" {
		return nil, fmt.Errorf("unknown -format %q (want table or json)", format)
	}
	return &printer{w: w, format: format}, nil
}

func (p *printer) print(pl *wire.Payload) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.format == "json" {
		b, err := json.Marshal(pl)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(p.w, "%s\n", b)
		return err
	}
	fmt.Fprintf(p.w, "\n%s\n", header(pl))
	writePayloadTable(p.w, pl, p.show)
	return nil
}

// printf writes a line to w (stdout or stderr) under the printer's lock,
// so that it never lands inside a table.
func (p *printer) printf(w io.Writer, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(w, format, args...)
}

// header names a payload: "snapshot N" is the exporter's N-th export
// (its sequence number); a snapshot too large for one payload comes in
// parts, numbered from 1 here. Cumulative values count from Start; delta
// values from the previous export.
func header(pl *wire.Payload) string {
	part := ""
	if pl.Part > 0 || !pl.Last {
		part = fmt.Sprintf(", part %d", pl.Part+1)
		if !pl.Last {
			part += " (more follow)"
		}
	}
	return fmt.Sprintf("== snapshot %d%s from %s: %s values, %s .. %s ==", pl.Sequence, part, service(pl),
		pl.Temporality, pl.Start.Format(time.TimeOnly), pl.End.Format("15:04:05.000"))
}

func service(pl *wire.Payload) string {
	for _, a := range pl.Resource {
		if a.Key == "service.name" {
			return a.Value
		}
	}
	return "unknown"
}

func runReceive(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("receive", "receive [flags]", `Accepts snapshots POSTed by exporter.HTTPSink (any path) and prints each
one, until interrupted.`)
	listen := fs.String("listen", "127.0.0.1:4319", "`address` to listen on")
	format := fs.String("format", "table", "output: table or json (one JSON object per line)")
	maxBody := fs.Int64("max-body", receiver.DefaultMaxBodyBytes, "largest request body accepted, in `bytes`")
	maxDec := fs.Int("max-decompressed", receiver.DefaultMaxDecompressedBytes, "largest decompressed gzip body, in `bytes`")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(fs, stderr, "unexpected argument %q", fs.Arg(0))
	}
	pr, err := newPrinter(stdout, *format)
	if err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(stderr, "zerostat receive:", err)
		return 1
	}
	fmt.Fprintf(stderr, "zerostat receive: listening on http://%s/\n", ln.Addr())
	h := &receiver.Handler{MaxBodyBytes: *maxBody, MaxDecompressedBytes: *maxDec, OnPayload: func(p *wire.Payload) {
		if err := pr.print(p); err != nil {
			fmt.Fprintln(stderr, "zerostat receive:", err)
		}
	}}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "zerostat receive:", err)
		return 1
	}
	return 0
}
