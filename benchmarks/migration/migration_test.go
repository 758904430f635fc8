package migration_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/benchmarks/internal/sdkrows"
)

// ---------------------------------------------------------------------------
// The seeded workload: a sequence of requests, jobs and idle time, the same
// for both programs.

type eventKind int

const (
	evRequest eventKind = iota // an HTTP request through the middleware
	evCron                     // a job enqueued outside any request
	evProcess                  // the worker runs the oldest job
	evIdle                     // time passes
	evInline                   // a job enqueued and run at once (waits 0 ms)
)

type jobPlan struct {
	queue string
	work  time.Duration
	fail  bool
}

type event struct {
	kind     eventKind
	route    string
	method   string
	status   int
	explicit bool          // the handler calls WriteHeader even for 200
	work     time.Duration // request handling time, or idle time
	bytes    int
	job      *jobPlan // enqueued by the request, or the cron/inline job
}

var (
	methods  = []string{"GET", "GET", "GET", "POST", "PUT", "DELETE"}
	statuses = []int{200, 200, 200, 201, 204, 400, 404, 500, 503}
	// latencyMs and sizes are bounds of the views: values land exactly on
	// them and one unit next to them.
	latencyMs = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000}
	jobMs     = []float64{5, 10, 25, 50, 100, 250, 500, 1000}
	sizes     = []int{256, 1024, 4096, 16384, 65536}
)

// duration returns a time from bounds (in ms): exactly on a bound, 1 ns
// next to one, or exponentially distributed around meanMs.
func duration(r *rand.Rand, bounds []float64, meanMs float64) time.Duration {
	switch r.IntN(5) {
	case 0:
		return time.Duration(bounds[r.IntN(len(bounds))] * float64(time.Millisecond))
	case 1:
		return time.Duration(bounds[r.IntN(len(bounds))]*float64(time.Millisecond)) + time.Duration(r.IntN(3)-1)
	case 2:
		return time.Duration(r.IntN(1000)) // under a microsecond
	}
	return time.Duration(r.ExpFloat64() * meanMs * float64(time.Millisecond))
}

func size(r *rand.Rand) int {
	switch r.IntN(6) {
	case 0:
		return 0
	case 1:
		return sizes[r.IntN(len(sizes))] + r.IntN(3) - 1
	case 2:
		return sizes[r.IntN(len(sizes))]
	}
	return r.IntN(100_000)
}

func jobFor(r *rand.Rand, queue string) *jobPlan {
	return &jobPlan{queue: queue, work: duration(r, jobMs, 80), fail: r.IntN(10) == 0}
}

// workload returns n events from seed, ending with the queue drained.
func workload(seed uint64, n int) []event {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var evs []event
	queued := 0
	for len(evs) < n {
		switch p := r.IntN(100); {
		case p < 55:
			ev := event{
				kind:   evRequest,
				route:  routes[r.IntN(len(routes))],
				method: methods[r.IntN(len(methods))],
				status: statuses[r.IntN(len(statuses))],
				work:   duration(r, latencyMs, 30),
				bytes:  size(r),
			}
			ev.explicit = ev.status == 200 && r.IntN(2) == 0
			if ev.status == http.StatusNoContent {
				ev.bytes = 0
			}
			if r.IntN(4) == 0 {
				ev.job = jobFor(r, []string{"email", "thumbnail"}[r.IntN(2)])
				queued++
			}
			evs = append(evs, ev)
		case p < 63:
			evs = append(evs, event{kind: evCron, job: jobFor(r, "reindex")})
			queued++
		case p < 85:
			if queued > 0 {
				evs = append(evs, event{kind: evProcess})
				queued--
			}
		case p < 95:
			evs = append(evs, event{kind: evIdle, work: time.Duration(r.Int64N(int64(50 * time.Millisecond)))})
		default:
			if queued == 0 { // FIFO: runs at once only on an empty queue
				evs = append(evs, event{kind: evInline, job: &jobPlan{queue: "inline", fail: r.IntN(10) == 0}})
			}
		}
	}
	for ; queued > 0; queued-- {
		evs = append(evs, event{kind: evProcess})
	}
	return evs
}

// expected holds what the workload adds up to, independent of either SDK.
type expected struct {
	requests  int64
	bytes     int64
	jobs      int64
	failed    int64
	lastDepth map[string]float64 // queue depth after the workload
}

func expect(evs []event) expected {
	e := expected{lastDepth: map[string]float64{}}
	depth := map[string]int{}
	var fifo []*jobPlan
	add := func(j *jobPlan) {
		depth[j.queue]++
		fifo = append(fifo, j)
		e.lastDepth[j.queue] = float64(depth[j.queue])
	}
	pop := func() {
		j := fifo[0]
		fifo = fifo[1:]
		depth[j.queue]--
		e.lastDepth[j.queue] = float64(depth[j.queue])
		e.jobs++
		if j.fail {
			e.failed++
		}
	}
	for _, ev := range evs {
		switch ev.kind {
		case evRequest:
			e.requests++
			e.bytes += int64(ev.bytes)
			if ev.job != nil {
				add(ev.job)
			}
		case evCron:
			add(ev.job)
		case evProcess:
			pop()
		case evInline:
			add(ev.job)
			pop()
		}
	}
	return e
}

// fakeClock is the programs' clock in the seeded runs: time passes only
// when the workload says so. Used from one goroutine at a time.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

type planKey struct{}

var errJob = errors.New("job failed")

var payload = []byte(strings.Repeat("0123456789abcdef", 100_000/16+1))

// run plays evs through p and returns its view data and what its exporter
// received last for each view, after Close.
func run(t *testing.T, p program, evs []event) (snap, exported map[string][]row, views []viewInfo) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)}
	// A period longer than the test: the exporter receives each view once,
	// when Close unregisters it.
	if err := p.start(clock.Now, time.Hour); err != nil {
		t.Fatalf("%s: Start: %v", p.name(), err)
	}
	closed := false
	defer func() {
		if !closed {
			p.close()
		}
	}()
	views = p.views()

	jobRun := func(j *jobPlan) func(context.Context) error {
		return func(context.Context) error {
			clock.advance(j.work)
			if j.fail {
				return errJob
			}
			return nil
		}
	}
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev := r.Context().Value(planKey{}).(*event)
		clock.advance(ev.work)
		if ev.job != nil {
			p.enqueue(r.Context(), ev.job.queue, jobRun(ev.job))
		}
		if ev.status != http.StatusOK || ev.explicit {
			w.WriteHeader(ev.status)
		}
		if ev.bytes > 0 {
			_, _ = w.Write(payload[:ev.bytes])
		}
	})
	h := p.handler(app)

	for i := range evs {
		ev := &evs[i]
		switch ev.kind {
		case evRequest:
			req := httptest.NewRequest(ev.method, "/"+ev.route, nil)
			req = req.WithContext(context.WithValue(req.Context(), planKey{}, ev))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != ev.status || rec.Body.Len() != ev.bytes {
				t.Fatalf("%s: event %d: response %d with %d bytes; want %d with %d", p.name(), i, rec.Code, rec.Body.Len(), ev.status, ev.bytes)
			}
		case evCron:
			p.enqueue(context.Background(), ev.job.queue, jobRun(ev.job))
		case evProcess:
			if !p.processOne() {
				t.Fatalf("%s: event %d: no job to process", p.name(), i)
			}
		case evIdle:
			clock.advance(ev.work)
		case evInline:
			p.enqueue(context.Background(), ev.job.queue, jobRun(ev.job))
			if !p.processOne() {
				t.Fatalf("%s: event %d: no job to process", p.name(), i)
			}
		}
	}
	if p.processOne() {
		t.Errorf("%s: jobs left in the queue after the workload", p.name())
	}
	if n := p.recordErrors(); n != 0 {
		t.Errorf("%s: %d recordings refused", p.name(), n)
	}

	var err error
	if snap, err = p.snapshot(); err != nil {
		t.Fatalf("%s: Snapshot: %v", p.name(), err)
	}
	p.close()
	closed = true
	exported = make(map[string][]row)
	for _, v := range views {
		rows, _, ok := p.exported(v.name)
		if !ok {
			t.Errorf("%s: the exporter never received view %s", p.name(), v.name)
			continue
		}
		exported[v.name] = rows
	}
	return snap, exported, views
}

// TestSameViewData runs both programs on the same seeded requests and jobs
// and compares their RetrieveData row by row, and each exporter's last
// report with its own RetrieveData.
func TestSameViewData(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4}
	n := 3000
	if testing.Short() {
		seeds, n = seeds[:2], 1000
	}
	var diffs differences
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			evs := workload(seed, n)
			exp := expect(evs)
			ocSnap, ocExp, ocViews := run(t, &ocProgram{}, evs)
			zsSnap, zsExp, zsViews := run(t, &zsProgram{}, evs)
			if t.Failed() {
				return
			}

			// The views as registered: names filled in, keys and bounds
			// sorted, zero bounds dropped, alike.
			for i := range ocViews {
				o, z := ocViews[i], zsViews[i]
				if o.name == "" || o.name != z.name || o.agg != z.agg || !slices.Equal(o.keys, z.keys) || !slices.Equal(o.bounds, z.bounds) {
					t.Errorf("view %d as registered: opencensus %+v, zerostat %+v", i, o, z)
				}
				if !slices.IsSorted(z.bounds) || slices.Contains(z.bounds, 0) || !slices.IsSorted(z.keys) {
					t.Errorf("view %s: bounds %v, keys %v not canonical", z.name, z.bounds, z.keys)
				}
			}

			for _, v := range zsViews {
				oc, zs := ocSnap[v.name], zsSnap[v.name]
				if len(zs) == 0 {
					t.Errorf("view %s: no rows", v.name)
				}
				compareRows(t, v.name, oc, zs, false, &diffs)
				checkSorted(t, v.name, v.keys, zs)
				if !sameRows(ocExp[v.name], oc) {
					t.Errorf("view %s: opencensus exporter's last report differs from RetrieveData", v.name)
				}
				if !sameRows(zsExp[v.name], zs) {
					t.Errorf("view %s: zerostat exporter's last report differs from RetrieveData", v.name)
				}
			}

			for sdk, snap := range map[string]map[string][]row{"opencensus": ocSnap, "zerostat": zsSnap} {
				checkTotals(t, sdk, snap, exp)
			}
			// Deliberate difference: zerostat's DistributionData.Sum() is
			// exact. Integer byte counts add up exactly in float64, so it
			// equals the Sum view over the same measure and keys.
			sums := map[string]float64{}
			for _, r := range zsSnap["http/response_bytes"] {
				sums[r.Key] = r.Value
			}
			for _, r := range zsSnap["http/response_size"] {
				if r.Sum != sums[r.Key] {
					t.Errorf("zerostat http/response_size %s: Sum() = %v; want %v, the Sum view's exact total", r.Key, r.Sum, sums[r.Key])
				}
			}
		})
	}
	t.Logf("documented differences met: %d rows with OpenCensus's Max = 5e-324, %d distributions whose Sum() differs in the last bits", diffs.maxInit, diffs.sumInexact)
	if diffs.maxInit == 0 {
		t.Errorf("the workload never met the Max difference (rows whose values are all <= 0)")
	}
}

// checkTotals checks one SDK's view data against the workload's own totals.
func checkTotals(t *testing.T, sdk string, snap map[string][]row, exp expected) {
	t.Helper()
	var reqs, latCount, sizeCount, jobs, failed int64
	var bytes float64
	for _, r := range snap["http/request_count"] {
		reqs += r.Count
	}
	for _, r := range snap["http/latency"] {
		latCount += r.Count
	}
	for _, r := range snap["http/response_size"] {
		sizeCount += r.Count
	}
	for _, r := range snap["http/response_bytes"] {
		bytes += r.Value
	}
	for _, r := range snap["jobs/count"] {
		jobs += r.Count
		if slices.Contains(r.Tags, sdkrows.KV{K: "status", V: "error"}) {
			failed += r.Count
		}
	}
	if reqs != exp.requests || latCount != exp.requests || sizeCount != exp.requests {
		t.Errorf("%s: requests counted %d, in latency %d, in sizes %d; want %d", sdk, reqs, latCount, sizeCount, exp.requests)
	}
	if bytes != float64(exp.bytes) {
		t.Errorf("%s: bytes %v; want %d", sdk, bytes, exp.bytes)
	}
	if jobs != exp.jobs || failed != exp.failed {
		t.Errorf("%s: jobs %d, failed %d; want %d, %d", sdk, jobs, failed, exp.jobs, exp.failed)
	}
	depth := map[string]float64{}
	for _, r := range snap["jobs/queue_depth"] {
		depth[r.Key] = r.Value
	}
	for q, d := range exp.lastDepth {
		if got, ok := depth[sdkrows.Key([]sdkrows.KV{{K: "queue", V: q}})]; !ok || got != d {
			t.Errorf("%s: queue %s depth %v (present %v); want %v", sdk, q, got, ok, d)
		}
	}
	if len(depth) != len(exp.lastDepth) {
		t.Errorf("%s: %d queue depth rows; want %d", sdk, len(depth), len(exp.lastDepth))
	}
}

// TestSameViewDataConcurrent serves requests from several goroutines while
// a worker goroutine runs the jobs and the exporter reports every few
// milliseconds, with the real clock. What does not depend on timing or
// order is compared: counts everywhere, the byte views fully (to
// tolerance), the final queue depths.
func TestSameViewDataConcurrent(t *testing.T) {
	const goroutines, perG = 4, 150
	runConcurrent := func(p program) (map[string][]row, int) {
		if err := p.start(nil, 2*time.Millisecond); err != nil {
			t.Fatalf("%s: Start: %v", p.name(), err)
		}
		defer p.close()
		app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ev := r.Context().Value(planKey{}).(*event)
			if ev.job != nil {
				p.enqueue(r.Context(), ev.job.queue, func(context.Context) error {
					if ev.job.fail {
						return errJob
					}
					return nil
				})
			}
			w.WriteHeader(ev.status)
			_, _ = w.Write(payload[:ev.bytes])
		})
		h := p.handler(app)

		done := make(chan struct{})
		var worker sync.WaitGroup
		worker.Add(1)
		go func() {
			defer worker.Done()
			for {
				if p.processOne() {
					continue
				}
				select {
				case <-done:
					for p.processOne() {
					}
					return
				case <-time.After(100 * time.Microsecond):
				}
			}
		}()

		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(g), 7))
				for range perG {
					ev := &event{
						route:  routes[r.IntN(len(routes))],
						method: methods[r.IntN(len(methods))],
						status: statuses[r.IntN(len(statuses))],
						bytes:  size(r),
					}
					if ev.status == http.StatusNoContent {
						ev.bytes = 0
					}
					if r.IntN(3) == 0 {
						ev.job = jobFor(r, []string{"email", "thumbnail"}[r.IntN(2)])
					}
					req := httptest.NewRequest(ev.method, "/"+ev.route, nil)
					req = req.WithContext(context.WithValue(req.Context(), planKey{}, ev))
					h.ServeHTTP(httptest.NewRecorder(), req)
				}
			}()
		}
		wg.Wait()
		close(done)
		worker.Wait()
		if n := p.recordErrors(); n != 0 {
			t.Errorf("%s: %d recordings refused", p.name(), n)
		}
		snap, err := p.snapshot()
		if err != nil {
			t.Fatalf("%s: Snapshot: %v", p.name(), err)
		}
		_, reports, _ := p.exported("http/latency")
		return snap, reports
	}

	oc, ocReports := runConcurrent(&ocProgram{})
	zs, zsReports := runConcurrent(&zsProgram{})
	t.Logf("exporter reports before Close: opencensus %d, zerostat %d", ocReports, zsReports)
	var diffs differences
	for _, name := range []string{"http/request_count", "http/response_bytes", "http/response_size", "jobs/queue_depth", "jobs/count"} {
		compareRows(t, name, oc[name], zs[name], false, &diffs)
	}
	for _, name := range []string{"http/latency", "jobs/latency", "example.com/jobs/wait"} {
		compareRows(t, name, oc[name], zs[name], true, &diffs)
	}
	var total int64
	for _, r := range zs["http/request_count"] {
		total += r.Count
	}
	if total != goroutines*perG {
		t.Errorf("zerostat counted %d requests; want %d", total, goroutines*perG)
	}
	for _, r := range zs["jobs/queue_depth"] {
		if r.Value != 0 {
			t.Errorf("zerostat queue depth %s = %v after draining; want 0", r.Key, r.Value)
		}
	}
}
