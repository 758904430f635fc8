package testbackend

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill the server if the test process dies
// without running its cleanups (a panic in another goroutine, a timeout).
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
