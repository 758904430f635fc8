package remotewrite

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/internal/faultserver"
	"github.com/zerostat/zerostat/internal/snappy"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// TestFaultMatrix is the fault matrix every push exporter meets
// (internal/faultserver). Remote write is cumulative: while the receiver
// fails, pushes fail and what they carried is dropped and counted; after
// recovery the last sample received is every recording, including those
// made during the fault and before a Stop that met an outage.
func TestFaultMatrix(t *testing.T) {
	for _, fault := range faultserver.Matrix {
		t.Run(fault, func(t *testing.T) {
			name := fmt.Sprintf("rwfault%d", seq.Add(1))
			m := stats.Int64(name, "", "")
			register(t, &view.View{Name: name + "/n", Measure: m, Aggregation: view.Count(), TagKeys: []tag.Key{keyRoute}})
			var mu sync.Mutex
			last := -1.0
			srv := faultserver.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				raw, err := snappy.Decode(body)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				ss, err := decodeWriteRequest(raw)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				total, seen := 0.0, false
				for _, s := range ss {
					for _, l := range s.labels {
						if l.name == "__name__" && l.value == name+"_n_total" {
							total, seen = total+s.value, true
						}
					}
				}
				if seen {
					mu.Lock()
					last = total
					mu.Unlock()
				}
			}))
			w := newWriter(t, Options{URL: srv.URL(), Interval: time.Minute, Timeout: 10 * time.Second,
				Retry: Retry{InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}})
			recorded := 0
			record := func(n int) {
				for i := range n {
					stats.Record(ctxWith(t, tag.Upsert(keyRoute, fmt.Sprint("/r", i%5))), m.M(1))
				}
				recorded += n
			}
			push := func(d time.Duration) error {
				ctx, cancel := context.WithTimeout(context.Background(), d)
				defer cancel()
				return w.Push(ctx)
			}
			got := func() float64 { mu.Lock(); defer mu.Unlock(); return last }

			record(100)
			if err := push(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			srv.Set(fault)
			for range 2 {
				record(500)
				if err := push(time.Second); err == nil { // expected to fail: a short deadline only bounds it
					t.Fatalf("push succeeded against %q", fault)
				}
			}
			if st := w.Stats(); st.Dropped == 0 || st.DroppedPoints == 0 || st.Queued != 0 {
				t.Errorf("stats %+v; want the failed pushes dropped and counted, nothing queued", st)
			}
			srv.Set(faultserver.OK)
			record(10)
			if err := push(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			if g := got(); g != float64(recorded) {
				t.Errorf("last total received %v; want %d", g, recorded)
			}

			srv.Set(fault)
			record(5)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if err := w.Stop(ctx); err == nil {
				t.Fatalf("Stop against %q succeeded", fault)
			}
			srv.Set(faultserver.OK)
			if err := push(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			if g := got(); g != float64(recorded) {
				t.Errorf("after Stop in an outage: last total received %v; want %d", g, recorded)
			}
		})
	}
}
