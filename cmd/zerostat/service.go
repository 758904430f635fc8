package main

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
)

// The demo's sample service: a few routes with simulated work, and the
// middleware that instruments them the way a zerostat user would.

type endpoint struct {
	route, method string
	weight        int     // share of the load generator's requests
	meanMs        float64 // simulated work
	bytes         int     // response size
}

var endpoints = []endpoint{
	{"/users", "GET", 50, 2, 2048},
	{"/users", "POST", 10, 5, 256},
	{"/orders", "GET", 30, 3, 4096},
	{"/health", "GET", 10, 0.1, 2},
}

// statuses the service answers with (404 for unknown routes).
var statuses = []int{200, 404, 500}

// sampleService is the instrumented sample service.
type sampleService struct {
	mux      *http.ServeMux
	inFlight atomic.Int64
	// One tag context per route, method and status, built at start-up:
	// recording with a kept context is zerostat's fast path.
	ctxs map[ctxKey]context.Context
	base context.Context
}

type ctxKey struct {
	route, method string
	status        int
}

func newService() (*sampleService, error) {
	s := &sampleService{mux: http.NewServeMux(), ctxs: map[ctxKey]context.Context{}, base: context.Background()}
	routes := map[string]bool{"unmatched": true}
	methods := map[string]bool{}
	for _, ep := range endpoints {
		routes[ep.route], methods[ep.method] = true, true
	}
	for route := range routes {
		for method := range methods {
			for _, status := range statuses {
				ctx, err := tag.New(context.Background(), tag.Upsert(keyRoute, route),
					tag.Upsert(keyMethod, method), tag.Upsert(keyStatus, strconv.Itoa(status)))
				if err != nil {
					return nil, err
				}
				s.ctxs[ctxKey{route, method, status}] = ctx
			}
		}
	}
	for _, ep := range endpoints {
		ep := ep
		s.mux.HandleFunc(ep.method+" "+ep.route, func(w http.ResponseWriter, r *http.Request) {
			// Simulated work: a log-normal latency around the route's mean,
			// and a failure now and then.
			d := time.Duration(ep.meanMs * math.Exp(rand.NormFloat64()*0.5) * float64(time.Millisecond))
			time.Sleep(d)
			if rand.IntN(200) == 0 {
				http.Error(w, "simulated failure", http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Length", strconv.Itoa(ep.bytes))
			_, _ = w.Write(payload[:ep.bytes])
		})
	}
	return s, nil
}

var payload = make([]byte, 8192)

// statusWriter captures the status and the body size.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// ServeHTTP instruments every request: latency, size, count by route,
// method and status, and the number in flight.
func (s *sampleService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	stats.Record(s.base, mInFlight.M(s.inFlight.Add(1)))
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	s.mux.ServeHTTP(sw, r)
	route := r.Pattern
	if route == "" {
		route = "unmatched"
	} else if i := len(r.Method) + 1; len(route) > i {
		route = route[i:] // "GET /users" -> "/users"
	}
	ctx, ok := s.ctxs[ctxKey{route, r.Method, sw.status}]
	if !ok { // a combination not built at start-up (another method, say)
		var err error
		ctx, err = tag.New(context.Background(), tag.Upsert(keyRoute, route),
			tag.Upsert(keyMethod, r.Method), tag.Upsert(keyStatus, strconv.Itoa(sw.status)))
		if err != nil {
			ctx = context.Background()
		}
	}
	stats.Record(ctx, mLatency.M(float64(time.Since(start))/float64(time.Millisecond)), mBytes.M(int64(sw.bytes)))
	stats.Record(s.base, mInFlight.M(s.inFlight.Add(-1)))
}

// loadGenerator sends requests to base from one goroutine until stop is
// closed, adding 1 to answered as each answer is read (the live count the
// demo prints). A request, once sent, is never cancelled, so the service
// counts exactly the requests answered.
func loadGenerator(stop <-chan struct{}, client *http.Client, base string, r *rand.Rand, answered *atomic.Int64) {
	total := 0
	for _, ep := range endpoints {
		total += ep.weight
	}
	for {
		select {
		case <-stop:
			return
		default:
		}
		pick := r.IntN(total)
		i := 0
		for ; pick >= endpoints[i].weight; i++ {
			pick -= endpoints[i].weight
		}
		ep := endpoints[i]
		route := ep.route
		if r.IntN(100) == 0 {
			route = "/missing" // a 404 now and then
		}
		req, err := http.NewRequest(ep.method, base+route, nil)
		if err != nil {
			continue
		}
		resp, err := client.Do(req)
		if err != nil {
			continue // no answer: the service did not count it either
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		answered.Add(1)
	}
}
