package runmetrics

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"
)

// ProcessMetrics are the process's metrics, named as client_golang's
// process collector (collectors.NewProcessCollector) names them once
// exported to Prometheus. Linux only (from /proc/self); empty elsewhere.
var ProcessMetrics = []Metric{
	newMetric("process_cpu_seconds", "Total user and system CPU time spent in seconds.", "s", "", counter),
	newMetric("process_resident_memory_bytes", "Resident memory size in bytes.", "By", "", gauge),
	newMetric("process_virtual_memory_bytes", "Virtual memory size in bytes.", "By", "", gauge),
	newMetric("process_open_fds", "Number of open file descriptors.", "1", "", gauge),
	newMetric("process_max_fds", "Maximum number of open file descriptors.", "1", "", gauge),
	newMetric("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "s", "", gauge),
}

type procValues struct {
	cpu, rss, vsize, fds, maxFDs, start float64
}

func (p *procValues) value(name string) float64 {
	switch name {
	case "process_cpu_seconds":
		return p.cpu
	case "process_resident_memory_bytes":
		return p.rss
	case "process_virtual_memory_bytes":
		return p.vsize
	case "process_open_fds":
		return p.fds
	case "process_max_fds":
		return p.maxFDs
	case "process_start_time_seconds":
		return p.start
	}
	return 0
}

// userHZ is the unit of /proc/self/stat's times: sysconf(_SC_CLK_TCK),
// 100 on every Linux architecture Go supports (client_golang's procfs
// assumes the same).
const userHZ = 100

var errStat = errors.New("cannot parse /proc/self/stat")

func readProc(p *procValues) error {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	p.cpu = float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil {
		p.maxFDs = float64(rl.Cur)
	}
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return err
	}
	// Fields after the command (which may hold spaces) in parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return errStat
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): starttime is field 22, vsize 23, rss 24.
	if len(f) < 22 {
		return errStat
	}
	start, err1 := strconv.ParseUint(string(f[19]), 10, 64)
	vsize, err2 := strconv.ParseUint(string(f[20]), 10, 64)
	rss, err3 := strconv.ParseUint(string(f[21]), 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	p.vsize = float64(vsize)
	p.rss = float64(rss) * float64(os.Getpagesize())
	if p.start == 0 {
		bt, err := bootTime()
		if err != nil {
			return err
		}
		p.start = bt + float64(start)/userHZ
	}
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	p.fds = float64(len(names) - 1) // less the directory being listed
	return nil
}

// bootTime reads btime from /proc/stat.
func bootTime() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			return float64(n), err
		}
	}
	return float64(time.Now().Unix()), errors.New("no btime in /proc/stat")
}
