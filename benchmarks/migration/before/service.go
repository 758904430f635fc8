// Package service is the worked example of docs/migrating-from-opencensus.md:
// a small instrumented program, an HTTP middleware and a job queue with its
// worker, written against the OpenCensus stats API (packages tag, stats and
// view).
//
// benchmarks/migration/before/service.go imports go.opencensus.io;
// benchmarks/migration/after/service.go is that file after the doc's import
// rewrite (its sed and gofmt commands) and nothing else. The test in
// benchmarks/migration checks both facts, then runs both programs on the
// same input and compares their view data row by row. To change the
// example, edit before/service.go and run the doc's commands on a copy.
package service

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opencensus.io/stats"
	"go.opencensus.io/stats/view"
	"go.opencensus.io/tag"
)

// Tag keys.
var (
	KeyRoute  = tag.MustNewKey("route")
	KeyMethod = tag.MustNewKey("method")
	KeyStatus = tag.MustNewKey("status")
	KeyQueue  = tag.MustNewKey("queue")
)

// Measures.
var (
	MLatency    = stats.Float64("example.com/http/latency", "Time to serve a request", stats.UnitMilliseconds)
	MRequests   = stats.Int64("example.com/http/requests", "Requests served", stats.UnitDimensionless)
	MBytes      = stats.Int64("example.com/http/response_bytes", "Bytes written in responses", stats.UnitBytes)
	MQueueDepth = stats.Int64("example.com/jobs/queue_depth", "Jobs waiting in a queue", stats.UnitDimensionless)
	MJobLatency = stats.Float64("example.com/jobs/latency", "Time to run a job", stats.UnitMilliseconds)
	MJobWait    = stats.Float64("example.com/jobs/wait", "Time a job waited in its queue", stats.UnitMilliseconds)
)

// Views. Register sorts their tag keys and bounds in place, drops the zero
// bounds, and names JobWaitView after its measure.
var (
	LatencyView = &view.View{
		Name:        "http/latency",
		Description: "Request latency by route, method and status",
		Measure:     MLatency,
		TagKeys:     []tag.Key{KeyRoute, KeyMethod, KeyStatus},
		Aggregation: view.Distribution(0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000),
	}
	RequestCountView = &view.View{
		Name:        "http/request_count",
		Description: "Requests by route, method and status",
		Measure:     MRequests,
		TagKeys:     []tag.Key{KeyRoute, KeyMethod, KeyStatus},
		Aggregation: view.Count(),
	}
	ResponseBytesView = &view.View{
		Name:        "http/response_bytes",
		Description: "Bytes sent by route and method",
		Measure:     MBytes,
		TagKeys:     []tag.Key{KeyMethod, KeyRoute},
		Aggregation: view.Sum(),
	}
	ResponseSizeView = &view.View{
		Name:        "http/response_size",
		Description: "Response sizes by route and method",
		Measure:     MBytes,
		TagKeys:     []tag.Key{KeyRoute, KeyMethod},
		Aggregation: view.Distribution(65536, 16384, 4096, 1024, 256, 0),
	}
	QueueDepthView = &view.View{
		Name:        "jobs/queue_depth",
		Description: "Jobs waiting, by queue",
		Measure:     MQueueDepth,
		TagKeys:     []tag.Key{KeyQueue},
		Aggregation: view.LastValue(),
	}
	JobLatencyView = &view.View{
		Name:        "jobs/latency",
		Description: "Job run time by queue, enqueuing route and status",
		Measure:     MJobLatency,
		TagKeys:     []tag.Key{KeyQueue, KeyRoute, KeyStatus},
		Aggregation: view.Distribution(0, 5, 10, 25, 50, 100, 250, 500, 1000),
	}
	JobCountView = &view.View{
		Name:        "jobs/count",
		Description: "Jobs run, by queue and status",
		Measure:     MJobLatency,
		TagKeys:     []tag.Key{KeyQueue, KeyStatus},
		Aggregation: view.Count(),
	}
	JobWaitView = &view.View{
		Measure:     MJobWait,
		TagKeys:     []tag.Key{KeyQueue},
		Aggregation: view.Distribution(1, 10, 100, 1000, 10000),
	}

	// Views are the views of the program, registered by Start.
	Views = []*view.View{
		LatencyView, RequestCountView, ResponseBytesView, ResponseSizeView,
		QueueDepthView, JobLatencyView, JobCountView, JobWaitView,
	}
)

// Mutators built once: recording with them does not allocate them again.
var (
	statusOK    = []tag.Mutator{tag.Upsert(KeyStatus, "ok")}
	statusError = []tag.Mutator{tag.Upsert(KeyStatus, "error")}
)

// Service is the instrumented program: an HTTP middleware and a job queue
// with its worker.
type Service struct {
	now      func() time.Time
	exporter *Exporter

	mu    sync.Mutex // guards queue and depth
	queue []queued
	depth map[string]int

	recordErrors atomic.Int64 // stats.RecordWithTags/RecordWithOptions errors
}

// Job is a unit of background work.
type Job struct {
	Queue string
	Run   func(ctx context.Context) error
}

type queued struct {
	Job
	tags     []byte // tag.Encode of the enqueuing context's tags
	enqueued time.Time
}

// New returns a service that reads time from now (time.Now if nil).
func New(now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{
		now:      now,
		exporter: &Exporter{last: make(map[string]*view.Data)},
		depth:    make(map[string]int),
	}
}

// Start registers the views and the service's exporter, which receives the
// data of every view each period.
func (s *Service) Start(period time.Duration) error {
	if err := view.Register(Views...); err != nil {
		return fmt.Errorf("registering views: %w", err)
	}
	view.SetReportingPeriod(period)
	view.RegisterExporter(s.exporter)
	return nil
}

// Close unregisters the views, which reports their data to the exporter one
// last time, then the exporter.
func (s *Service) Close() {
	view.Unregister(Views...)
	view.UnregisterExporter(s.exporter)
}

// RecordErrors returns how many recordings the SDK refused (invalid tags).
func (s *Service) RecordErrors() int64 { return s.recordErrors.Load() }

// Exporter returns the service's exporter.
func (s *Service) Exporter() *Exporter { return s.exporter }

// Middleware instruments next, served under route: latency, request count
// and response bytes by route, method and status.
func (s *Service) Middleware(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, err := tag.New(r.Context(),
			tag.Upsert(KeyRoute, route),
			tag.Upsert(KeyMethod, r.Method, tag.WithTTL(tag.TTLNoPropagation)),
		)
		if err != nil {
			ctx = r.Context() // a tag value the SDK refused: record untagged
		}
		rw := &responseWriter{ResponseWriter: w, status: http.StatusOK}
		start := s.now()
		next.ServeHTTP(rw, r.WithContext(ctx))
		ms := float64(s.now().Sub(start)) / float64(time.Millisecond)

		mutators := []tag.Mutator{tag.Upsert(KeyStatus, strconv.Itoa(rw.status))}
		if err := stats.RecordWithTags(ctx, mutators, MLatency.M(ms), MRequests.M(1), MBytes.M(rw.bytes)); err != nil {
			s.recordErrors.Add(1)
		}
	})
}

// responseWriter remembers the status and counts the bytes written.
type responseWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (w *responseWriter) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	w.wrote = true
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Enqueue adds j to the queue. The job carries the propagating tags of ctx
// (the route of the request that enqueued it), encoded as a message queue
// would carry them.
func (s *Service) Enqueue(ctx context.Context, j Job) {
	var tags []byte
	if m := tag.FromContext(ctx); m != nil {
		tags = tag.Encode(m)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, queued{Job: j, tags: tags, enqueued: s.now()})
	s.depth[j.Queue]++
	s.recordDepth(ctx, j.Queue) // under mu: the last value is the current depth
}

func (s *Service) recordDepth(ctx context.Context, queue string) {
	err := stats.RecordWithOptions(ctx,
		stats.WithTags(tag.Upsert(KeyQueue, queue)),
		stats.WithMeasurements(MQueueDepth.M(int64(s.depth[queue]))))
	if err != nil {
		s.recordErrors.Add(1)
	}
}

// ProcessOne runs the oldest job, if any, and reports whether there was one.
func (s *Service) ProcessOne() bool {
	s.mu.Lock()
	if len(s.queue) == 0 {
		s.mu.Unlock()
		return false
	}
	j := s.queue[0]
	s.queue = s.queue[1:]
	s.depth[j.Queue]--
	s.recordDepth(context.Background(), j.Queue)
	s.mu.Unlock()

	ctx := context.Background()
	if m, err := tag.Decode(j.tags); err == nil {
		ctx = tag.NewContext(ctx, m)
	}
	ctx, err := tag.New(ctx, tag.Insert(KeyQueue, j.Queue))
	if err != nil {
		ctx = context.Background()
	}
	start := s.now()
	stats.Record(ctx, MJobWait.M(float64(start.Sub(j.enqueued))/float64(time.Millisecond)))
	runErr := j.Run(ctx)
	ms := float64(s.now().Sub(start)) / float64(time.Millisecond)
	status := statusOK
	if runErr != nil {
		status = statusError
	}
	if err := stats.RecordWithTags(ctx, status, MJobLatency.M(ms)); err != nil {
		s.recordErrors.Add(1)
	}
	return true
}

// Snapshot returns the rows of every view by view name, as a debug page
// would show them.
func Snapshot() (map[string][]*view.Row, error) {
	out := make(map[string][]*view.Row, len(Views))
	for _, v := range Views {
		rows, err := view.RetrieveData(v.Name)
		if err != nil {
			return nil, fmt.Errorf("view %q: %w", v.Name, err)
		}
		out[v.Name] = rows
	}
	return out, nil
}

// Exporter keeps the last data reported for each view, as a push exporter
// keeps its latest batch.
type Exporter struct {
	mu      sync.Mutex
	reports int
	last    map[string]*view.Data
}

var _ view.Exporter = (*Exporter)(nil)

// ExportView implements view.Exporter.
func (e *Exporter) ExportView(vd *view.Data) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reports++
	e.last[vd.View.Name] = vd
}

// Last returns the last data reported for the view named name (nil if
// none), and how many reports the exporter received in all.
func (e *Exporter) Last(name string) (*view.Data, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last[name], e.reports
}
