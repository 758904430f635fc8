package main

import (
	"bytes"
	"github.com/zerostat/zerostat/internal/shelltest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The README's commands for benchgate (README.md, "benchgate, on this
// repository or any Go project") are run here as a reader runs them: the
// one for this repository from its root, the ones for another project in
// a copy of testdata/sample, with benchgate installed by the README's own
// `go -C … install`.

const readmeSection = "### benchgate, on this repository or any Go project\n"

// repoRoot is the zerostat repository's root, three levels up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// readmeBlocks returns the fenced blocks (```sh or ```text) of the README's
// benchgate section, in order, each with its final newline.
func readmeBlocks(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "\n"+readmeSection)
	if !ok {
		t.Fatalf("README.md has no %q section", strings.TrimSpace(readmeSection))
	}
	var blocks []string
	var block strings.Builder
	fenced := false
	for _, line := range strings.SplitAfter(sec, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			if fenced {
				blocks = append(blocks, block.String())
				block.Reset()
			}
			fenced = !fenced
		case fenced:
			block.WriteString(line)
		case strings.HasPrefix(line, "#"): // the next heading
			return blocks
		}
	}
	if fenced {
		t.Fatal("README.md: unterminated block in the benchgate section")
	}
	return blocks
}

// shell runs script with sh -e in dir (shelltest.Run).
func shell(t *testing.T, dir string, env []string, script string) (int, string) {
	t.Helper()
	return shelltest.Run(t, dir, env, script)
}

func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH:", err)
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on PATH:", err)
	}
}

// TestReadmeCommandFromRoot runs the README's command for this repository
// from its root, verbatim: it must find benchgate (benchmarks/ is a module
// of its own) and pass the sample's rules on the sample's output.
func TestReadmeCommandFromRoot(t *testing.T) {
	needGo(t)
	blocks := readmeBlocks(t)
	if len(blocks) != 3 {
		t.Fatalf("README's benchgate section has %d blocks; want 3 (from the root, on your own project, a rules file)", len(blocks))
	}
	line := strings.TrimSpace(blocks[0])
	if !strings.Contains(line, "benchgate -rules ") || strings.Contains(line, "\n") {
		t.Fatalf("README's first benchgate block %q; want one command that runs benchgate", line)
	}
	code, out := shell(t, repoRoot(t), nil, line)
	if code != 0 || !strings.Contains(out, "benchgate: all rules hold") ||
		!strings.Contains(out, "line 2: ratio Sum/n=10000 ns/op >= 100 x Sum/n=10") {
		t.Errorf("%s: exit %d; want 0 with every rule checked:\n%s", line, code, out)
	}

	// What the README says make gate runs is what scripts/gate.sh runs.
	gate, err := os.ReadFile(filepath.Join(repoRoot(t), "scripts", "gate.sh"))
	if err != nil {
		t.Fatal(err)
	}
	const gateCmd = "cd benchmarks && go run ./cmd/benchgate -rules gate.rules -baseline testdata/baseline.txt out/gate.txt"
	readme, _ := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if !strings.Contains(string(gate), gateCmd) || !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), gateCmd) {
		t.Errorf("README.md and scripts/gate.sh should both give make gate's check as %q", gateCmd)
	}
}

// TestReadmeRulesAreTheSample: the rules file the README shows is the
// sample's bench.rules, which the other tests run.
func TestReadmeRulesAreTheSample(t *testing.T) {
	blocks := readmeBlocks(t)
	rules, err := os.ReadFile("testdata/sample/bench.rules")
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 || blocks[2] != string(rules) {
		t.Fatalf("README's rules block differs from testdata/sample/bench.rules; paste the file.\nREADME blocks: %q\nfile: %q", blocks, rules)
	}
	if _, err := ParseRules(bytes.NewReader(rules)); err != nil {
		t.Fatal(err)
	}
}

// TestReadmeOwnProject runs the README's commands for another project in
// a copy of testdata/sample, outside this repository: `go -C <clone>/benchmarks
// install` (GOBIN a temporary directory put first on PATH), the go test
// run, benchgate on its output; then with the run as its own baseline, so
// that the regress rule is evaluated too.
func TestReadmeOwnProject(t *testing.T) {
	needGo(t)
	if testing.Short() {
		t.Skip("builds benchgate and runs a project's benchmarks")
	}
	blocks := readmeBlocks(t)
	if len(blocks) != 3 {
		t.Fatalf("README's benchgate section has %d blocks; want 3", len(blocks))
	}
	script := blocks[1]
	if !strings.Contains(script, "/path/to/zerostat/benchmarks install ./cmd/benchgate") {
		t.Fatalf("README's second benchgate block %q does not install benchgate from /path/to/zerostat", script)
	}
	script = strings.ReplaceAll(script, "/path/to/zerostat", repoRoot(t))

	tmp := t.TempDir()
	project, bin := filepath.Join(tmp, "project"), filepath.Join(tmp, "bin")
	if err := os.Mkdir(project, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"go.mod", "sum_test.go", "bench.rules"} {
		b, err := os.ReadFile(filepath.Join("testdata", "sample", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{
		"GOBIN=" + bin,
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		// The README's go test line runs each benchmark for the default
		// second, six times; a short -benchtime keeps this test quick, and
		// the sample's ratio (about 1000x against a bound of 100x) holds at it.
		"GOFLAGS=" + strings.TrimSpace(os.Getenv("GOFLAGS")+" -benchtime=50ms"),
		"GOWORK=off",
	}
	code, out := shell(t, project, env, script)
	if code != 0 || !strings.Contains(out, "benchgate: all rules hold") ||
		!strings.Contains(out, "no baseline given") {
		t.Fatalf("the README's commands for another project: exit %d; want 0, all rules held:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(bin, "benchgate")); err != nil {
		t.Errorf("benchgate not installed into GOBIN: %v", err)
	}
	results, err := os.ReadFile(filepath.Join(project, "new.txt"))
	if err != nil || !bytes.Contains(results, []byte("pkg: example.com/sample")) {
		t.Fatalf("new.txt (%v):\n%s", err, results)
	}

	code, out = shell(t, project, env, "benchgate -rules bench.rules -baseline new.txt new.txt")
	if code != 0 || !strings.Contains(out, "line 3: regress Sum/* ns/op +20%") || strings.Contains(out, "no baseline") {
		t.Errorf("with the run as its own baseline: exit %d; want 0 with the regress rule checked:\n%s", code, out)
	}

	// A broken rule is exit 1, naming it.
	if err := os.WriteFile(filepath.Join(project, "strict.rules"), []byte("ratio Sum/n=10 ns/op >= 100 x Sum/n=10000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = shell(t, project, env, "benchgate -rules strict.rules new.txt")
	if code != 1 || !strings.Contains(out, "line 1: ratio Sum/n=10 ns/op >= 100 x Sum/n=10000") {
		t.Errorf("a broken rule: exit %d; want 1 naming it:\n%s", code, out)
	}
}
