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
	last   *wire.Payload          // the last payload printed as a table
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
	// A snapshot whose table would repeat the last one printed (see
	// repeats: a cumulative one with the same values, a delta one with
	// nothing new), such as a final snapshot taken right after the last
	// periodic one, gets one line instead.
	if repeats(p.last, pl, p.show) {
		note := fmt.Sprintf("to %s: the same values as snapshot %d", pl.End.Format("15:04:05.000"), p.last.Sequence)
		if pl.Temporality == wire.Delta {
			note = interval(pl.Start, pl.End) + ": nothing new"
		}
		fmt.Fprintf(p.w, "\n%s\n", wrapHeader(fmt.Sprintf("== snapshot %d from %s, %s, not printed ==", pl.Sequence, service(pl), note)))
		return nil
	}
	fmt.Fprintf(p.w, "\n%s\n", wrapHeader(header(pl)))
	writePayloadTable(p.w, pl, p.show)
	p.last = pl
	return nil
}

// printf writes a line to w (stdout or stderr) under the printer's lock,
// so that it never lands inside a table.
func (p *printer) printf(w io.Writer, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(w, format, args...)
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
