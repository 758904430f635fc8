package testbackend

import (
	"os"
	"syscall"
	"testing"
	"time"
)

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// Both servers start, answer, and are gone (by PID) once their test ends.
func TestBackendStartAndStop(t *testing.T) {
	var pids []int
	t.Run("prometheus", func(t *testing.T) {
		s := StartPrometheus(t, PrometheusOptions{RemoteWriteReceiver: true})
		pids = append(pids, s.PID)
		if _, err := s.Query("vector(1)"); err != nil {
			t.Fatal(err)
		}
		got := s.WaitQuery(t, "vector(42)", 1, 5*time.Second)
		if got[0].Value != "42" {
			t.Errorf("vector(42) = %q", got[0].Value)
		}
		if _, err := s.Query("sum("); err == nil {
			t.Error("a bad query succeeded")
		}
	})
	t.Run("victoriametrics", func(t *testing.T) {
		s := StartVictoriaMetrics(t)
		pids = append(pids, s.PID)
		if err := s.ForceFlush(); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Export(`{__name__="nothing"}`); err != nil || len(got) != 0 {
			t.Errorf("export: %v, %v", got, err)
		}
	})
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d still running after its test", pid)
		}
	}
}

func TestRequireSkipsWhenMissing(t *testing.T) {
	if os.Getenv(EnvRequire) == "1" {
		t.Skip("would fail by design with " + EnvRequire + "=1")
	}
	var sub *testing.T
	returned := false
	t.Run("missing", func(t *testing.T) {
		sub = t
		Require(t, "zerostat-no-such-binary")
		returned = true
	})
	if !sub.Skipped() || sub.Failed() || returned {
		t.Errorf("skipped %v, failed %v, returned %v; want a skip", sub.Skipped(), sub.Failed(), returned)
	}
}
