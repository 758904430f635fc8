// Package testlog captures what an exporter logs, for tests: a
// log/slog handler that keeps each record's level, message and error.
package testlog

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// Log is a slog.Handler that keeps the records it is given. Safe for
// concurrent use.
type Log struct {
	mu   sync.Mutex
	recs []string
}

// New returns a logger that writes into a new Log.
func New() (*slog.Logger, *Log) {
	l := &Log{}
	return slog.New(l), l
}

// Lines returns what was logged, one line a record: "LEVEL message
// key=value ...".
func (l *Log) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.recs...)
}

// Enabled implements slog.Handler.
func (l *Log) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (l *Log) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.recs = append(l.recs, b.String())
	l.mu.Unlock()
	return nil
}

// WithAttrs implements slog.Handler (attributes are not kept).
func (l *Log) WithAttrs([]slog.Attr) slog.Handler { return l }

// WithGroup implements slog.Handler (groups are not kept).
func (l *Log) WithGroup(string) slog.Handler { return l }
