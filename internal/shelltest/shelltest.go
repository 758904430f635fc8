// Package shelltest runs the shell commands a document gives, as its
// reader would type them, for the tests that hold the documents to what
// the commands do (the README's, the migration guide's).
package shelltest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Offline is the environment of a command that must not reach the
// network or a go.work: the module proxy off.
var Offline = []string{"GOPROXY=off", "GOWORK=off"}

// Run runs script with sh -e in dir, the process's environment plus env,
// and returns its exit code and combined output. A command that hangs is
// killed after five minutes, failing t (no test asserts how long one
// takes).
func Run(t testing.TB, dir string, env []string, script string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-e", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%q did not finish:\n%s", script, out.String())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}
