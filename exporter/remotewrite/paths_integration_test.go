package remotewrite

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/internal/hostile"
	"github.com/zerostat/zerostat/internal/testbackend"
)

// TestBackendEveryPathAgrees pushes one workload through every path into
// real backends and checks that they store the same series with the same
// values: Prometheus scraping the handler in OpenMetrics and in the text
// format, Prometheus and VictoriaMetrics receiving remote write. The
// workload (internal/hostile, which collector/e2e's TestCollectorHostile
// pushes through the Collector) has values on every bound under both
// bucket rules, negative values, NaN, +Inf and -Inf, escaping in constant
// labels, tag values and
// descriptions, and two views whose names collide (the later one is
// refused on every path). What differs by path, by design (see
// docs/metric-mapping.md): OpenMetrics adds _created series, and leaves
// out the _sum of a histogram with negative values; VictoriaMetrics drops
// NaN samples at ingestion (its rule, whatever the sender).
func TestBackendEveryPathAgrees(t *testing.T) {
	w := hostile.Register(t, fmt.Sprintf("pth%d", seq.Add(1)))
	ns := w.NS
	consts := w.Consts
	scrapeConsts := map[string]string{"env": consts["env"]} // the scrape adds job and instance
	om := httptest.NewServer(prometheus.NewHandler(prometheus.Options{ConstLabels: scrapeConsts}))
	defer om.Close()
	text := httptest.NewServer(prometheus.NewHandler(prometheus.Options{ConstLabels: scrapeConsts, Format: prometheus.FormatText}))
	defer text.Close()
	prom := testbackend.StartPrometheus(t, testbackend.PrometheusOptions{RemoteWriteReceiver: true, Jobs: []testbackend.ScrapeJob{
		{Name: "openmetrics", Target: om.Listener.Addr().String()},
		{Name: "text", Target: text.Listener.Addr().String()},
	}})
	vm := testbackend.StartVictoriaMetrics(t)
	for _, url := range []string{prom.URL + "/api/v1/write", vm.URL + "/api/v1/write"} {
		rw := newWriter(t, Options{URL: url, ConstLabels: consts})
		if err := rw.Push(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := rw.Err(); err == nil || !strings.Contains(err.Error(), w.Refused) || !strings.Contains(err.Error(), w.First) {
			t.Errorf("remote write: Err() = %v; want the collision of %s with %s", err, w.Refused, w.First)
		}
	}

	// Each path's series, by name and labels (job and instance left out:
	// the scrape sets them from its job, remote write from ConstLabels).
	sel := fmt.Sprintf(`{__name__=~"%s_.+"}`, ns)
	byJob := map[string]map[string]string{}
	add := func(path string, metric map[string]string, value string) {
		if byJob[path] == nil {
			byJob[path] = map[string]string{}
		}
		byJob[path][hostile.Key(metric["__name__"], metric)] = value
	}
	// Wait for two scrapes of each job (a first scrape about 5 s after
	// start) and the remote write.
	deadline := time.Now().Add(60 * time.Second)
	for {
		byJob = map[string]map[string]string{}
		got, err := prom.Query(sel)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range got {
			add(s.Metric["job"], s.Metric, s.Value)
		}
		if len(byJob["openmetrics"]) > 0 && len(byJob["text"]) > 0 && len(byJob["zerostat"]) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s, series by job: %d openmetrics, %d text, %d remote write", len(byJob["openmetrics"]), len(byJob["text"]), len(byJob["zerostat"]))
		}
		time.Sleep(500 * time.Millisecond)
	}
	nans := 0
	for _, v := range byJob["zerostat"] {
		if v == "NaN" {
			nans++
		}
	}
	for _, s := range vm.WaitExport(t, sel, len(byJob["zerostat"])-nans, 30*time.Second) {
		add("vm", s.Metric, strconv.FormatFloat(s.Values[len(s.Values)-1], 'f', -1, 64))
	}

	rw := byJob["zerostat"]
	if len(rw) < 40 {
		t.Fatalf("remote write stored %d series; want the whole workload", len(rw))
	}
	compare := func(path string, got map[string]string, skip func(string) bool) {
		for k, v := range rw {
			if skip != nil && skip(k) {
				continue
			}
			if g, ok := got[k]; !ok {
				t.Errorf("%s lacks %s (= %s by remote write)", path, k, v)
			} else if g != v {
				t.Errorf("%s: %s = %s; remote write stored %s", path, k, g, v)
			}
		}
		for k := range got {
			if _, ok := rw[k]; !ok && !strings.Contains(k, "_created{") {
				t.Errorf("%s has %s, which remote write has not", path, k)
			}
		}
	}
	compare("text scrape", byJob["text"], nil)
	compare("OpenMetrics scrape", byJob["openmetrics"], func(k string) bool {
		return strings.HasPrefix(k, ns+"_balance_dist_sum{") // no _sum for negative values in OpenMetrics
	})
	compare("VictoriaMetrics", byJob["vm"], func(k string) bool { return rw[k] == "NaN" })

	// The values are the recorded ones: counts, and both bucket rules on
	// values placed on every bound (0, 1, 5, 10, 50, 51).
	for k, want := range w.Want(map[string]string{"env": consts["env"]}) {
		if got, ok := rw[k]; !ok || got != want {
			t.Errorf("remote write stored %s = %q (present %v); want %s", k, got, ok, want)
		}
	}
	if t.Failed() {
		var keys []string
		for k, v := range rw {
			keys = append(keys, k+" "+v)
		}
		sort.Strings(keys)
		t.Logf("remote write stored:\n%s", strings.Join(keys, "\n"))
	}
}
