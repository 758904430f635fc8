package migration_test

import (
	"bytes"
	"github.com/zerostat/zerostat/internal/shelltest"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The migration doc's shell steps, run verbatim with sh in a module of
// their own beside a "clone" of zerostat (../zerostat, a link to this
// repository), as a reader runs them: the mechanical steps on before/,
// and the plug-in rewrite on a file that imports ochttp beside stats.
// GOPROXY=off: nothing may come from the network.

// docBlock returns the first ```sh block of the doc's section heading.
func docBlock(t *testing.T, heading string) string {
	t.Helper()
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s: no %q section", docPath, heading)
	}
	_, block, ok := strings.Cut(sec, "\n```sh\n")
	block, _, ok2 := strings.Cut(block, "\n```\n")
	if !ok || !ok2 {
		t.Fatalf("%s: no sh block under %q", docPath, heading)
	}
	return block + "\n"
}

// docProject makes dir/zerostat (a link to this repository) and dir/app, a
// module holding files, and returns dir/app.
func docProject(t *testing.T, files map[string][]byte) string {
	t.Helper()
	for _, tool := range []string{"go", "sh", "sed", "grep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on PATH: %v", tool, err)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(root, filepath.Join(dir, "zerostat")); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "app")
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	files["go.mod"] = []byte("module example.com/app\n\ngo 1.26\n")
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(app, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return app
}

// runSh runs script with sh -e in dir, offline (shelltest.Run), and
// returns its exit code and combined output.
func runSh(t *testing.T, dir, script string) (int, string) {
	t.Helper()
	return shelltest.Run(t, dir, append(shelltest.Offline, "GOFLAGS="+os.Getenv("GOFLAGS")), script)
}

// TestDocMechanicalStepsRun runs the mechanical steps on before/: the
// result is after/, gofmt-clean, and builds against the clone; without the
// replace line, go mod tidy cannot find zerostat.
func TestDocMechanicalStepsRun(t *testing.T) {
	block := docBlock(t, "## The mechanical steps")
	const replace = "go mod edit -replace github.com/zerostat/zerostat=../zerostat"
	var without []string
	for _, l := range strings.SplitAfter(block, "\n") {
		if !strings.HasPrefix(l, replace) {
			without = append(without, l)
		}
	}
	if len(without) != strings.Count(block, "\n") {
		t.Fatalf("%s: the mechanical steps have no %q line before go mod tidy:\n%s", docPath, replace, block)
	}
	if !strings.Contains(block, replace+" ") || strings.Index(block, replace) > strings.Index(block, "go mod tidy") {
		t.Fatalf("%s: %q must come before go mod tidy:\n%s", docPath, replace, block)
	}
	before, err := os.ReadFile(beforePath)
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(afterPath)
	if err != nil {
		t.Fatal(err)
	}

	app := docProject(t, map[string][]byte{"service.go": before})
	code, out := runSh(t, app, block)
	if code != 0 {
		t.Fatalf("the doc's mechanical steps: exit %d:\n%s", code, out)
	}
	got, err := os.ReadFile(filepath.Join(app, "service.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, after) {
		t.Errorf("the doc's mechanical steps on before/service.go do not give after/service.go:\n%s", got)
	}
	if code, out := runSh(t, app, "go build ./... && test -z \"$(gofmt -l .)\""); code != 0 {
		t.Errorf("after the mechanical steps, the module does not build or is not gofmt-clean (exit %d):\n%s", code, out)
	}

	app = docProject(t, map[string][]byte{"service.go": before})
	code, out = runSh(t, app, strings.Join(without, ""))
	if code == 0 || !strings.Contains(out, "github.com/zerostat/zerostat") {
		t.Errorf("without the replace, go mod tidy offline: exit %d; want a failure naming github.com/zerostat/zerostat:\n%s", code, out)
	}
}

// TestDocPluginRewriteIsGofmtClean runs the plug-in rewrite on a file that
// the mechanical steps already rewrote (stats from zerostat, ochttp still
// OpenCensus's): the sed alone leaves the imports out of order; the block,
// which ends with gofmt -w, leaves a gofmt-clean file that builds.
func TestDocPluginRewriteIsGofmtClean(t *testing.T) {
	block := docBlock(t, "## Plug-ins: ochttp, ocgrpc, runmetrics and Prometheus's collectors")
	if !strings.HasSuffix(block, "\ngofmt -w $files\n") {
		t.Fatalf("%s: the plug-in rewrite does not end with gofmt -w $files:\n%s", docPath, block)
	}
	src := []byte(`package app

import (
	"net/http"

	"github.com/zerostat/zerostat/stats"
	"go.opencensus.io/plugin/ochttp"
)

var Bytes = stats.Int64("example.com/bytes", "Bytes", stats.UnitBytes)

func Handler() http.Handler { return &ochttp.Handler{Handler: http.NotFoundHandler()} }
`)
	if f, err := format.Source(src); err != nil || !bytes.Equal(f, src) {
		t.Fatalf("the sample is not gofmt-clean before the rewrite (%v)", err)
	}

	sedOnly := strings.TrimSuffix(block, "gofmt -w $files\n")
	app := docProject(t, map[string][]byte{"app.go": src})
	if code, out := runSh(t, app, "files=app.go\n"+sedOnly); code != 0 {
		t.Fatalf("the plug-in sed: exit %d:\n%s", code, out)
	}
	if code, out := runSh(t, app, "test -z \"$(gofmt -l .)\""); code == 0 {
		t.Fatalf("the sed alone left a gofmt-clean file; the sample no longer shows why gofmt -w is needed:\n%s", out)
	}

	app = docProject(t, map[string][]byte{"app.go": src})
	code, out := runSh(t, app, "files=app.go\n"+block+
		"go mod edit -replace github.com/zerostat/zerostat=../zerostat\ngo mod tidy\ngo build ./...\ntest -z \"$(gofmt -l .)\"\n")
	if code != 0 {
		t.Fatalf("the plug-in rewrite, then tidy, build and gofmt -l: exit %d:\n%s", code, out)
	}
	got, _ := os.ReadFile(filepath.Join(app, "app.go"))
	if !bytes.Contains(got, []byte(`"github.com/zerostat/zerostat/plugin/zhttp"`)) || !bytes.Contains(got, []byte("&zhttp.Handler{")) {
		t.Errorf("the rewritten file does not use zhttp:\n%s", got)
	}
}
