package migration_test

import (
	"context"
	"net/http"
	"time"

	ocview "go.opencensus.io/stats/view"

	"github.com/zerostat/zerostat/view"

	after "github.com/zerostat/zerostat/benchmarks/migration/after"
	before "github.com/zerostat/zerostat/benchmarks/migration/before"
)

// program drives one of the two twins. The adapters only convert types: the
// program under test is the package's own code.
type program interface {
	name() string
	start(now func() time.Time, period time.Duration) error
	close()
	handler(app http.Handler) http.Handler // the routes, each behind the middleware
	enqueue(ctx context.Context, queue string, run func(context.Context) error)
	processOne() bool
	snapshot() (map[string][]row, error)
	exported(name string) (rows []row, reports int, ok bool)
	recordErrors() int64
	views() []viewInfo // as registered
}

// viewInfo is a registered view as its SDK reports it with Find.
type viewInfo struct {
	name   string
	keys   []string
	agg    string
	bounds []float64
}

var routes = []string{"items", "item", "upload", "search"}

// ---------------------------------------------------------------------------
// before: go.opencensus.io

type ocProgram struct{ s *before.Service }

func (p *ocProgram) name() string { return "opencensus" }

func (p *ocProgram) start(now func() time.Time, period time.Duration) error {
	p.s = before.New(now)
	return p.s.Start(period)
}

func (p *ocProgram) close() { p.s.Close() }

func (p *ocProgram) handler(app http.Handler) http.Handler {
	mux := http.NewServeMux()
	for _, r := range routes {
		mux.Handle("/"+r, p.s.Middleware(r, app))
	}
	return mux
}

func (p *ocProgram) enqueue(ctx context.Context, queue string, run func(context.Context) error) {
	p.s.Enqueue(ctx, before.Job{Queue: queue, Run: run})
}

func (p *ocProgram) processOne() bool { return p.s.ProcessOne() }

func (p *ocProgram) snapshot() (map[string][]row, error) {
	snap, err := before.Snapshot()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]row, len(snap))
	for name, rows := range snap {
		out[name] = normOC(rows)
	}
	return out, nil
}

func (p *ocProgram) exported(name string) ([]row, int, bool) {
	d, n := p.s.Exporter().Last(name)
	if d == nil {
		return nil, n, false
	}
	return normOC(d.Rows), n, true
}

func (p *ocProgram) recordErrors() int64 { return p.s.RecordErrors() }

func (p *ocProgram) views() []viewInfo {
	var out []viewInfo
	for _, v := range before.Views {
		f := ocview.Find(v.Name)
		if f == nil {
			out = append(out, viewInfo{name: v.Name})
			continue
		}
		vi := viewInfo{name: f.Name, agg: f.Aggregation.Type.String(), bounds: f.Aggregation.Buckets}
		for _, k := range f.TagKeys {
			vi.keys = append(vi.keys, k.Name())
		}
		out = append(out, vi)
	}
	return out
}

// ---------------------------------------------------------------------------
// after: zerostat

type zsProgram struct{ s *after.Service }

func (p *zsProgram) name() string { return "zerostat" }

func (p *zsProgram) start(now func() time.Time, period time.Duration) error {
	p.s = after.New(now)
	return p.s.Start(period)
}

func (p *zsProgram) close() { p.s.Close() }

func (p *zsProgram) handler(app http.Handler) http.Handler {
	mux := http.NewServeMux()
	for _, r := range routes {
		mux.Handle("/"+r, p.s.Middleware(r, app))
	}
	return mux
}

func (p *zsProgram) enqueue(ctx context.Context, queue string, run func(context.Context) error) {
	p.s.Enqueue(ctx, after.Job{Queue: queue, Run: run})
}

func (p *zsProgram) processOne() bool { return p.s.ProcessOne() }

func (p *zsProgram) snapshot() (map[string][]row, error) {
	snap, err := after.Snapshot()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]row, len(snap))
	for name, rows := range snap {
		out[name] = normZS(rows)
	}
	return out, nil
}

func (p *zsProgram) exported(name string) ([]row, int, bool) {
	d, n := p.s.Exporter().Last(name)
	if d == nil {
		return nil, n, false
	}
	return normZS(d.Rows), n, true
}

func (p *zsProgram) recordErrors() int64 { return p.s.RecordErrors() }

func (p *zsProgram) views() []viewInfo {
	var out []viewInfo
	for _, v := range after.Views {
		f := view.Find(v.Name)
		if f == nil {
			out = append(out, viewInfo{name: v.Name})
			continue
		}
		vi := viewInfo{name: f.Name, agg: f.Aggregation.Type.String(), bounds: f.Aggregation.Buckets}
		for _, k := range f.TagKeys {
			vi.keys = append(vi.keys, k.Name())
		}
		out = append(out, vi)
	}
	return out
}
