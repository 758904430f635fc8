package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/zerostat/zerostat/exporter/receiver"
	"github.com/zerostat/zerostat/exporter/wire"
)

// maxRetained is the largest decoded payload (wire.Payload.MemSize) the
// printer keeps to tell a repeated snapshot: a larger one is let go once
// printed, so that what receive holds stays within its receiver's
// budget, and the next snapshot is printed whole.
const maxRetained = 4 << 20

// printer writes payloads as tables or JSON lines, one payload at a time.
type printer struct {
	mu     sync.Mutex
	w      io.Writer
	format string
	show   func(view string) bool // tables print these views (nil: all)
	last   *wire.Payload          // the last payload printed as a table, if at most maxRetained
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
		// Streamed a row at a time: a payload at the receiver's caps
		// took 400 MiB to marshal whole.
		if err := pl.WriteJSON(p.w); err != nil {
			return err
		}
		_, err := io.WriteString(p.w, "\n")
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
	p.last = nil
	if pl.MemSize() <= maxRetained {
		p.last = pl
	}
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
one, until interrupted. A table prints a view's first 1000 rows (sorted by tags) and
counts the rest; -format json prints every row.`)
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
	limitMemory()
	srv := &http.Server{Handler: receiveHandler(pr, stderr, *maxBody, *maxDec), ReadHeaderTimeout: 10 * time.Second}
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

// receiveHandler is receive's handler: pr prints each payload, errors go
// to stderr.
func receiveHandler(pr *printer, stderr io.Writer, maxBody int64, maxDec int) *receiver.Handler {
	return &receiver.Handler{MaxBodyBytes: maxBody, MaxDecompressedBytes: maxDec, OnPayload: func(p *wire.Payload) {
		if err := pr.print(p); err != nil {
			fmt.Fprintln(stderr, "zerostat receive:", err)
		}
	}}
}

// receiveMemoryLimit is receive's soft memory limit (runtime/debug's),
// unless GOMEMLIMIT sets one: its receiver's in-flight budget, what
// printing holds (a table's maxTableRows rows a view, a payload up to
// maxRetained) and the runtime's own. Without it, the garbage of
// printing a payload at the caps (a JSON line of 690,000 rows allocates
// 170 MiB, a little at a time) waits for the GC until the heap is twice
// what is live: 270 MiB for two such payloads where 128 MiB are live.
const receiveMemoryLimit = receiver.DefaultMaxInflightBytes + 48<<20

// limitMemory sets receiveMemoryLimit, unless GOMEMLIMIT is set. The GC
// then runs as often as it must to keep the process's memory under it
// while what is live fits (the receiver's budget sees to that).
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(receiveMemoryLimit)
	}
}
