package runmetrics

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"
)

// ProcessMetrics are the process's metrics, named, described and typed
// as client_golang v1.25.0's process collector
// (collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
// names them once exported to Prometheus, and read from the same sources
// as its procfs reads them. Linux only (from /proc/self); empty elsewhere.
var ProcessMetrics = []Metric{
	newMetric("process_cpu_seconds", "Total user and system CPU time spent in seconds.", "s", "", counter),
	newMetric("process_resident_memory_bytes", "Resident memory size in bytes.", "By", "", gauge),
	newMetric("process_virtual_memory_bytes", "Virtual memory size in bytes.", "By", "", gauge),
	newMetric("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", "By", "", gauge),
	newMetric("process_open_fds", "Number of open file descriptors.", "1", "", gauge),
	newMetric("process_max_fds", "Maximum number of open file descriptors.", "1", "", gauge),
	newMetric("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "s", "", gauge),
	newMetric("process_network_receive_bytes", "Number of bytes received by the process over the network.", "By", "", counter),
	newMetric("process_network_transmit_bytes", "Number of bytes sent by the process over the network.", "By", "", counter),
}

// procValues are the process's values of one snapshot, by source: each
// source that could not be read leaves its metrics out of that snapshot
// (client_golang's process collector leaves them out likewise).
type procValues struct {
	cpu, rss, vsize, start float64 // /proc/self/stat
	fds                    float64 // /proc/self/fd
	maxFDs, maxVsize       float64 // getrlimit
	netIn, netOut          float64 // /proc/self/net/netstat
	statOK, fdsOK, limOK   bool
	netOK                  bool
	bootTime               float64 // /proc/stat's btime, read once
	buf                    []byte  // the files' contents, reused
}

func (p *procValues) value(name string) (float64, bool) {
	switch name {
	case "process_cpu_seconds":
		return p.cpu, p.statOK
	case "process_resident_memory_bytes":
		return p.rss, p.statOK
	case "process_virtual_memory_bytes":
		return p.vsize, p.statOK
	case "process_start_time_seconds":
		return p.start, p.statOK
	case "process_open_fds":
		return p.fds, p.fdsOK
	case "process_max_fds":
		return p.maxFDs, p.limOK
	case "process_virtual_memory_max_bytes":
		return p.maxVsize, p.limOK
	case "process_network_receive_bytes":
		return p.netIn, p.netOK
	case "process_network_transmit_bytes":
		return p.netOut, p.netOK
	}
	return 0, false
}

// userHZ is the unit of /proc/self/stat's times: sysconf(_SC_CLK_TCK),
// 100 on every Linux architecture Go supports (client_golang's procfs
// assumes the same).
const userHZ = 100

var (
	errStat    = errors.New("cannot parse /proc/self/stat")
	errNetstat = errors.New("cannot parse /proc/self/net/netstat")
)

// readProc reads the process's values, each from client_golang's source
// (procfs v0.22.0, which its process collector uses): /proc/self/stat for
// the CPU time (utime+stime in clock ticks, so the same 10 ms steps),
// memory sizes and start time; the size /proc/self/fd reports (Linux 6.2
// and later: the open descriptor count; a listing before); the soft
// limits RLIMIT_NOFILE and RLIMIT_AS, which /proc/self/limits shows;
// IpExt's InOctets and OutOctets in /proc/self/net/netstat, the counts of
// the process's network namespace. It returns the errors of the sources
// it could not read.
func readProc(p *procValues) error {
	var errs []error
	p.statOK, p.fdsOK, p.limOK, p.netOK = false, false, false, false
	if err := p.readStat(); err != nil {
		errs = append(errs, err)
	} else {
		p.statOK = true
	}
	if n, err := openFDs(); err != nil {
		errs = append(errs, err)
	} else {
		p.fds, p.fdsOK = float64(n), true
	}
	var nofile, as syscall.Rlimit
	err1 := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile)
	err2 := syscall.Getrlimit(syscall.RLIMIT_AS, &as)
	if err := errors.Join(err1, err2); err != nil {
		errs = append(errs, err)
	} else {
		p.maxFDs, p.maxVsize, p.limOK = float64(nofile.Cur), float64(as.Cur), true
	}
	if err := p.readNetstat(); err != nil {
		errs = append(errs, err)
	} else {
		p.netOK = true
	}
	return errors.Join(errs...)
}

// readFile reads the file at path into p.buf, reused from one snapshot
// to the next, and returns its contents (valid until the next readFile).
func (p *procValues) readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if p.buf == nil {
		p.buf = make([]byte, 0, 4096)
	}
	b := p.buf[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	p.buf = b
	return b, nil
}

func (p *procValues) readStat() error {
	b, err := p.readFile("/proc/self/stat")
	if err != nil {
		return err
	}
	// Fields after the command (which may hold spaces) in parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return errStat
	}
	var f [22][]byte
	n := 0
	for field := range bytes.FieldsSeq(b[i+1:]) {
		if n == len(f) {
			break
		}
		f[n] = field
		n++
	}
	// f[0] is field 3 (state): utime is field 14, stime 15, starttime 22,
	// vsize 23, rss 24.
	if n < len(f) {
		return errStat
	}
	utime, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	vsize, err4 := strconv.ParseUint(string(f[20]), 10, 64)
	rss, err5 := strconv.ParseInt(string(f[21]), 10, 64)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return err
	}
	p.cpu = float64(utime+stime) / userHZ
	p.vsize = float64(vsize)
	p.rss = float64(rss * int64(os.Getpagesize()))
	if p.bootTime == 0 {
		bt, err := p.readBootTime()
		if err != nil {
			return err
		}
		p.bootTime = bt
	}
	p.start = p.bootTime + float64(start)/userHZ
	return nil
}

// readBootTime reads btime from /proc/stat.
func (p *procValues) readBootTime() (float64, error) {
	b, err := p.readFile("/proc/stat")
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

// openFDs counts the open file descriptors: the size of /proc/self/fd,
// which Linux 6.2 and later report as that count (procfs's fast path),
// or else a listing, less the descriptor the listing itself holds.
func openFDs() (int, error) {
	if st, err := os.Stat("/proc/self/fd"); err == nil && st.Size() > 0 {
		return int(st.Size()), nil
	}
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0, err
	}
	return len(names) - 1, nil // less the directory being listed
}

// readNetstat reads IpExt's InOctets and OutOctets, 0 when the kernel
// has no such line (as procfs leaves them nil, which client_golang
// exports as 0).
func (p *procValues) readNetstat() error {
	b, err := p.readFile("/proc/self/net/netstat")
	if err != nil {
		return err
	}
	p.netIn, p.netOut = 0, 0
	var names []byte
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("IpExt: "))
		if !ok {
			continue
		}
		if names == nil { // the first IpExt line names the fields of the second
			names = rest
			continue
		}
		values := rest
		for {
			var name, value []byte
			name, names, _ = bytes.Cut(names, []byte(" "))
			value, values, _ = bytes.Cut(values, []byte(" "))
			if len(name) == 0 || len(value) == 0 {
				return nil
			}
			var dst *float64
			switch string(name) {
			case "InOctets":
				dst = &p.netIn
			case "OutOctets":
				dst = &p.netOut
			default:
				continue
			}
			v, err := strconv.ParseFloat(string(value), 64)
			if err != nil {
				return errNetstat
			}
			*dst = v
		}
	}
	return nil
}
