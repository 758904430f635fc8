package main

import (
	"bytes"
	"context"
	"github.com/zerostat/zerostat/internal/shelltest"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/receiver"
	"github.com/zerostat/zerostat/exporter/wire"
)

// TestMain runs main itself when the test binary is started by
// runQuickstart, so the program is tested as a process, exit and all.
func TestMain(m *testing.M) {
	if os.Getenv("ZEROSTAT_QUICKSTART_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runQuickstart runs the program with args and returns its exit code and
// standard error. A program that hangs is killed after a minute (no test
// asserts how long it takes).
func runQuickstart(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ZEROSTAT_QUICKSTART_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("quickstart %q did not exit: %s", args, stderr.String())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

func TestQuickstartExportsToReceiver(t *testing.T) {
	var mu sync.Mutex
	var got []*wire.Payload
	srv := httptest.NewServer(&receiver.Handler{OnPayload: func(p *wire.Payload) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
	}})
	defer srv.Close()

	code, stderr := runQuickstart(t, "-to", srv.URL+"/")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	// Stop returned after the receiver answered: the final snapshot is in.
	found := false
	for _, p := range got {
		for _, v := range p.Views {
			if v.Name == "http/latency" && len(v.Rows) == 1 && v.Rows[0].Count == 1 && v.Rows[0].Sum == 4.2 &&
				len(v.Rows[0].Values) == 1 && v.Rows[0].Values[0] == "/users" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no snapshot with http/latency{http.route=/users} count 1, sum 4.2 among %d payloads", len(got))
	}
}

func TestQuickstartWithoutReceiver(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/"
	ln.Close() // nothing listens there now

	// What the README says: Stop's error, one line, and not the
	// exporter's "exports failing" warning (skipped while stopping).
	code, stderr := runQuickstart(t, "-to", url)
	if code != 0 || !strings.Contains(stderr, "sending request") || !strings.Contains(stderr, "connection refused") {
		t.Errorf("exit %d, stderr %q; want 0 and Stop's error", code, stderr)
	}
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || strings.Contains(stderr, "exports failing") {
		t.Errorf("stderr %q; want Stop's error alone, on one line", stderr)
	}
}

// TestReadmeUseIsThisProgram: the README's Use snippet is this file from
// "package main" on, so what the README shows is what this test runs.
func TestReadmeUseIsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, use, ok := strings.Cut(string(readme), "\n## Use\n")
	_, snippet, ok2 := strings.Cut(use, "```go\n")
	snippet, _, ok3 := strings.Cut(snippet, "```\n")
	_, prog, ok4 := strings.Cut(string(src), "\npackage main\n")
	if !ok || !ok2 || !ok3 || !ok4 {
		t.Fatal("README.md has no ```go block under ## Use, or main.go no package clause")
	}
	if prog = "package main\n" + prog; snippet != prog {
		t.Errorf("README's Use snippet differs from examples/quickstart/main.go; paste the file from \"package main\" on.\nREADME:\n%s\nmain.go:\n%s", snippet, prog)
	}
}

// TestReadmeReplaceCommand runs the README's command for depending on a
// local clone, verbatim, in a module of its own beside ../zerostat (a
// link to this repository) holding this program, offline (GOPROXY=off):
// the module must then build. The migration guide's go mod tidy step
// relies on the same replace.
func TestReadmeReplaceCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod tidy and go build in a new module")
	}
	for _, tool := range []string{"go", "sh"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on PATH: %v", tool, err)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, use, _ := strings.Cut(string(readme), "\n## Use\n")
	use, _, _ = strings.Cut(use, "```go\n")
	_, command, ok := strings.Cut(strings.Join(strings.Fields(use), " "), "`go mod edit -replace ")
	command, _, ok2 := strings.Cut(command, "`")
	if !ok || !ok2 {
		t.Fatal("README.md's Use section gives no `go mod edit -replace ...` command before its program")
	}
	command = "go mod edit -replace " + command

	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(root, filepath.Join(dir, "zerostat")); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "app")
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"go.mod": []byte("module example.com/app\n\ngo 1.26\n"), "main.go": src} {
		if err := os.WriteFile(filepath.Join(app, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, out := shelltest.Run(t, app, shelltest.Offline, command+"\ngo build -o quickstart .\n"); code != 0 {
		t.Fatalf("%s, then go build, in a module of its own: exit %d\n%s", command, code, out)
	}
}
