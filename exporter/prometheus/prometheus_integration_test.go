package prometheus

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/internal/testbackend"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// seenFormats records what each scrape target served.
type seenFormats struct {
	mu      sync.Mutex
	types   map[string]int // Content-Type served → scrapes
	accepts []string
}

func (s *seenFormats) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.types == nil {
			s.types = map[string]int{}
		}
		s.types[w.Header().Get("Content-Type")+" "+w.Header().Get("Content-Encoding")]++
		s.accepts = append(s.accepts, r.Header.Get("Accept"))
	})
}

// bucketQuantile is Prometheus 2.42's histogram_quantile on one series'
// cumulative buckets (promql/quantile.go), to check what the server
// computes from what it scraped.
func bucketQuantile(q float64, upper []float64, cum []float64) float64 {
	n := len(cum)
	if n < 2 || cum[n-1] == 0 {
		return math.NaN()
	}
	rank := q * cum[n-1]
	b := sort.Search(n-1, func(i int) bool { return cum[i] >= rank })
	if b == n-1 {
		return upper[n-2]
	}
	if b == 0 && upper[0] <= 0 {
		return upper[0]
	}
	start, end, count := 0.0, upper[b], cum[b]
	if b > 0 {
		start = upper[b-1]
		count -= cum[b-1]
		rank -= cum[b-1]
	}
	return start + (end-start)*(rank/count)
}

// A real Prometheus scrapes an instrumented service every second, once in
// OpenMetrics (negotiated: Prometheus asks for it first) and once in the
// text format (forced by Options.Format), and its query API returns
// exactly the recorded counts, sums, last values and buckets, and
// histogram_quantile values consistent with the buckets.
func TestBackendPrometheusScrapes(t *testing.T) {
	fixtureSeq++
	p := fmt.Sprintf("it%d", fixtureSeq)
	route := tag.MustNewKey("route")
	lat := stats.Float64(p+"/latency", "Request latency", stats.UnitMilliseconds)
	size := stats.Int64(p+"/size", "Response size", stats.UnitBytes)
	bounds := []float64{1, 5, 10, 50, 100, 500}
	register(t,
		&view.View{Name: p + "/requests", Measure: lat, Aggregation: view.Count(), TagKeys: []tag.Key{route}},
		&view.View{Name: p + "/latency", Measure: lat, Aggregation: view.Distribution(bounds...), TagKeys: []tag.Key{route}},
		&view.View{Name: p + "/size", Measure: size, Aggregation: view.Sum(), TagKeys: []tag.Key{route}},
		&view.View{Name: p + "/last_size", Measure: size, Aggregation: view.LastValue(), TagKeys: []tag.Key{route}},
	)
	// Values on a bound, counted by Prometheus's rule; and a Sum and a
	// histogram of negative values (not a valid counter, nor a valid
	// OpenMetrics histogram sum).
	onBound := stats.Float64(p+"/on_bound", "", stats.UnitDimensionless)
	balance := stats.Float64(p+"/balance", "", stats.UnitDimensionless)
	register(t,
		&view.View{Name: p + "/on_bound", Measure: onBound, Aggregation: view.DistributionUpperInclusive(1, 5, 10, 50)},
		&view.View{Name: p + "/balance", Measure: balance, Aggregation: view.Sum()},
		&view.View{Name: p + "/balance_dist", Measure: balance, Aggregation: view.Distribution(1)},
	)
	for _, v := range []float64{5, 10, 50} {
		stats.Record(context.Background(), onBound.M(v))
	}
	stats.Record(context.Background(), balance.M(2), balance.M(-5))
	work := map[string][]float64{
		"/a": {3, 7, 12, 45, 45, 180, 700, 0.3},
		"/b": {0.4, 2.5},
		"/c": {99.5, 120, 130, 140, 2e6},
	}
	type want struct {
		count     int
		sum, last float64
		cum       []float64 // cumulative buckets, +Inf last
		latSum    float64
	}
	wants := map[string]*want{}
	for r, vals := range work {
		ctx := ctxWith(t, tag.Upsert(route, r))
		w := &want{count: len(vals), cum: make([]float64, len(bounds)+1)}
		for i, v := range vals {
			stats.Record(ctx, lat.M(v), size.M(int64(100*i+len(r))))
			w.sum += float64(100*i + len(r))
			w.last = float64(100*i + len(r))
			w.latSum += v
			for j := range w.cum {
				if j == len(bounds) || v < bounds[j] {
					w.cum[j]++
				}
			}
		}
		wants[r] = w
	}

	var seenOM, seenText seenFormats
	om := httptest.NewServer(seenOM.wrap(NewHandler(Options{Namespace: "itest"})))
	defer om.Close()
	text := httptest.NewServer(seenText.wrap(NewHandler(Options{Namespace: "itest", Format: FormatText})))
	defer text.Close()
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{Jobs: []testbackend.ScrapeJob{
		{Name: "openmetrics", Target: om.Listener.Addr().String()},
		{Name: "text", Target: text.Listener.Addr().String()},
	}})

	name := "itest_" + p
	fmtF := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	for _, job := range []string{"openmetrics", "text"} {
		t.Run(job, func(t *testing.T) {
			sel := fmt.Sprintf(`{job=%q}`, job)
			for _, s := range prom.WaitQuery(t, name+"_requests_total"+sel, len(work), 20*time.Second) {
				if got, want := s.Value, strconv.Itoa(wants[s.Metric["route"]].count); got != want {
					t.Errorf("requests_total %v = %s; want %s", s.Metric, got, want)
				}
			}
			check := func(metric string, n int, want func(w *want, s testbackend.Sample) string) {
				t.Helper()
				got := prom.WaitQuery(t, metric+sel, n, 5*time.Second)
				if len(got) != n {
					t.Errorf("%s: %d series; want %d", metric, len(got), n)
				}
				for _, s := range got {
					w := wants[s.Metric["route"]]
					if w == nil {
						t.Errorf("%s: unexpected series %v", metric, s.Metric)
						continue
					}
					if exp := want(w, s); s.Value != exp {
						t.Errorf("%s %v = %s; want %s", metric, s.Metric, s.Value, exp)
					}
				}
			}
			check(name+"_size_bytes_total", len(work), func(w *want, _ testbackend.Sample) string { return fmtF(w.sum) })
			check(name+"_last_size_bytes", len(work), func(w *want, _ testbackend.Sample) string { return fmtF(w.last) })
			check(name+"_latency_milliseconds_count", len(work), func(w *want, _ testbackend.Sample) string { return strconv.Itoa(w.count) })
			check(name+"_latency_milliseconds_sum", len(work), func(w *want, _ testbackend.Sample) string { return fmtF(w.latSum) })
			// Buckets: the le values are spelled alike in both formats
			// (OpenMetrics's canonical "1.0"), so both jobs store one series
			// per bucket.
			les := map[string]int{}
			for i, b := range bounds {
				les[string(promname.AppendOpenMetricsFloat(nil, b))] = i
			}
			les["+Inf"] = len(bounds)
			check(name+"_latency_milliseconds_bucket", len(work)*(len(bounds)+1), func(w *want, s testbackend.Sample) string {
				i, ok := les[s.Metric["le"]]
				if !ok {
					return "le=" + s.Metric["le"] + " unexpected"
				}
				return fmtF(w.cum[i])
			})
			upper := append(append([]float64(nil), bounds...), math.Inf(1))
			for _, q := range []float64{0.25, 0.5, 0.9, 0.99} {
				expr := fmt.Sprintf("histogram_quantile(%g, %s_latency_milliseconds_bucket%s)", q, name, sel)
				got := prom.WaitQuery(t, expr, len(work), 5*time.Second)
				for _, s := range got {
					exp := bucketQuantile(q, upper, wants[s.Metric["route"]].cum)
					v, err := strconv.ParseFloat(s.Value, 64)
					if err != nil || math.Abs(v-exp) > 1e-9*math.Abs(exp) {
						t.Errorf("%s for %s = %s; want %v", expr, s.Metric["route"], s.Value, exp)
					}
				}
			}
			// Issue 11: with bounds 1, 5, 10, 50 and values 5, 10, 50 the
			// median is interpolated in (5, 10] and two thirds are <= 10.
			one := func(expr, want string) {
				t.Helper()
				got := prom.WaitQuery(t, expr, 1, 5*time.Second)
				if len(got) != 1 || got[0].Value != want {
					t.Errorf("%s = %v; want %s", expr, got, want)
				}
			}
			one(fmt.Sprintf("histogram_quantile(0.5, %s_on_bound_bucket%s)", name, sel), "7.5")
			one(fmt.Sprintf(`%s_on_bound_bucket{job=%q,le="10.0"} / ignoring(le) %s_on_bound_count%s`, name, job, name, sel),
				strconv.FormatFloat(2.0/3, 'f', -1, 64))
			// A negative Sum is exposed untyped, under its counter name.
			one(name+"_balance_total"+sel, "-3")
			// A histogram of negative values has its _sum in the text
			// format only.
			one(fmt.Sprintf("count(%s_balance_dist_count%s)", name, sel), "1")
			one(fmt.Sprintf("count(%s_balance_dist_sum%s) or vector(0)", name, sel), map[string]string{"text": "1", "openmetrics": "0"}[job])
			up := prom.WaitQuery(t, "up"+sel, 1, 5*time.Second)
			if up[0].Value != "1" {
				t.Errorf("up%s = %s", sel, up[0].Value)
			}
		})
	}
	// Each job really got its format (Prometheus accepts gzip, so it was
	// compressed too).
	seenOM.mu.Lock()
	defer seenOM.mu.Unlock()
	seenText.mu.Lock()
	defer seenText.mu.Unlock()
	if seenOM.types[ContentTypeOpenMetrics+" gzip"] == 0 || len(seenOM.types) != 1 {
		t.Errorf("openmetrics job served %v (Accept %q)", seenOM.types, seenOM.accepts)
	}
	if seenText.types[ContentTypeText+" gzip"] == 0 || len(seenText.types) != 1 {
		t.Errorf("text job served %v", seenText.types)
	}
	t.Logf("Prometheus asked: %q", seenOM.accepts[0])
}
