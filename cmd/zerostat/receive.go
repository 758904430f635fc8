package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
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
	fmt.Fprintf(p.w, "\n== snapshot %d.%d (%s, %s .. %s) from %s ==\n", pl.Sequence, pl.Part, pl.Temporality,
		pl.Start.Format(time.TimeOnly), pl.End.Format("15:04:05.000"), service(pl))
	writePayloadTable(p.w, pl)
	return nil
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
	fs := flag.NewFlagSet("receive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:4319", "address to listen on")
	format := fs.String("format", "table", "output: table or json (one JSON object per line)")
	maxBody := fs.Int64("max-body", receiver.DefaultMaxBodyBytes, "largest request body accepted, in bytes")
	maxDec := fs.Int("max-decompressed", receiver.DefaultMaxDecompressedBytes, "largest decompressed gzip body, in bytes")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	pr, err := newPrinter(stdout, *format)
	if err != nil {
		fmt.Fprintln(stderr, "zerostat receive:", err)
		return 2
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
