package migration_test

import (
	"bytes"
	"go/format"
	"os"
	"regexp"
	"strings"
	"testing"
)

const (
	docPath    = "../../docs/migrating-from-opencensus.md"
	beforePath = "before/service.go"
	afterPath  = "after/service.go"
)

// sedExpr is one `-e 's#pattern#replacement#'` of the doc's rewrite.
type sedExpr struct {
	pattern     *regexp.Regexp
	replacement string
}

// mechanicalSteps returns the sed expressions of the first sh block under
// "## The mechanical steps" of the migration doc, and whether the block
// runs gofmt -w after them.
func mechanicalSteps(t *testing.T) ([]sedExpr, bool) {
	t.Helper()
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("reading the migration doc: %v", err)
	}
	s := string(doc)
	i := strings.Index(s, "\n## The mechanical steps\n")
	if i < 0 {
		t.Fatalf("%s: no \"## The mechanical steps\" section", docPath)
	}
	s = s[i:]
	start := strings.Index(s, "\n```sh\n")
	if start < 0 {
		t.Fatalf("%s: no sh block under \"## The mechanical steps\"", docPath)
	}
	s = s[start+len("\n```sh\n"):]
	end := strings.Index(s, "\n```")
	if end < 0 {
		t.Fatalf("%s: unterminated sh block", docPath)
	}
	block := s[:end]

	var exprs []sedExpr
	re := regexp.MustCompile(`-e 's#([^#]*)#([^#]*)#'`)
	for _, m := range re.FindAllStringSubmatch(block, -1) {
		// The patterns are sed basic regular expressions made only of
		// literal characters, quotes, slashes and '.', which mean the same
		// in Go's syntax.
		p, err := regexp.Compile(m[1])
		if err != nil {
			t.Fatalf("%s: sed pattern %q: %v", docPath, m[1], err)
		}
		if strings.ContainsAny(m[2], `&\`) {
			t.Fatalf("%s: sed replacement %q uses & or \\: not handled by this test", docPath, m[2])
		}
		exprs = append(exprs, sedExpr{pattern: p, replacement: m[2]})
	}
	gofmt := regexp.MustCompile(`(?m)^gofmt -w `).MatchString(block)
	return exprs, gofmt
}

// sed applies exprs as `sed -e ... -e ...` does: line by line, each
// expression in turn replacing its first match in the line.
func sed(src []byte, exprs []sedExpr) []byte {
	lines := strings.SplitAfter(string(src), "\n")
	for i, line := range lines {
		for _, e := range exprs {
			if loc := e.pattern.FindStringIndex(line); loc != nil {
				line = line[:loc[0]] + e.replacement + line[loc[1]:]
			}
		}
		lines[i] = line
	}
	return []byte(strings.Join(lines, ""))
}

// TestDocRewriteCoversImports checks the doc's rewrite maps exactly the three
// OpenCensus stats packages and the two resource packages to zerostat's.
func TestDocRewriteCoversImports(t *testing.T) {
	exprs, gofmt := mechanicalSteps(t)
	if !gofmt {
		t.Errorf("%s: the mechanical steps do not run gofmt -w after sed; the rewritten import block is then not gofmt-clean", docPath)
	}
	want := map[string]string{
		`"go.opencensus.io/stats/view"`:            `"github.com/zerostat/zerostat/view"`,
		`"go.opencensus.io/stats"`:                 `"github.com/zerostat/zerostat/stats"`,
		`"go.opencensus.io/tag"`:                   `"github.com/zerostat/zerostat/tag"`,
		`"go.opencensus.io/resource"`:              `"github.com/zerostat/zerostat/resource"`,
		`"go.opencensus.io/resource/resourcekeys"`: `"github.com/zerostat/zerostat/resource/resourcekeys"`,
	}
	got := map[string]string{}
	for _, e := range exprs {
		got[e.pattern.String()] = e.replacement
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d sed expressions %v; want the %d of %v", docPath, len(got), got, len(want), want)
	}
	for from, to := range want {
		if got[from] != to {
			t.Errorf("%s: sed maps %s to %q; want %s", docPath, from, got[from], to)
		}
		line := []byte("\t" + from + "\n")
		if r := sed(line, exprs); string(r) != "\t"+to+"\n" {
			t.Errorf("the rewrite turns the import line %q into %q; want %q", line, r, "\t"+to+"\n")
		}
	}
}

// TestAfterIsBeforeRewritten checks after/service.go is exactly
// before/service.go put through the doc's mechanical steps (sed, then
// gofmt), so the two programs cannot drift apart.
func TestAfterIsBeforeRewritten(t *testing.T) {
	before, err := os.ReadFile(beforePath)
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(afterPath)
	if err != nil {
		t.Fatal(err)
	}
	exprs, gofmt := mechanicalSteps(t)
	if len(exprs) == 0 {
		t.Fatalf("%s: no sed expressions found", docPath)
	}
	want := sed(before, exprs)
	if gofmt {
		if want, err = format.Source(want); err != nil {
			t.Fatalf("gofmt of the rewritten %s: %v", beforePath, err)
		}
	}
	if !bytes.Equal(want, after) {
		wl, al := strings.Split(string(want), "\n"), strings.Split(string(after), "\n")
		for i := 0; i < max(len(wl), len(al)); i++ {
			var w, a string
			if i < len(wl) {
				w = wl[i]
			}
			if i < len(al) {
				a = al[i]
			}
			if w != a {
				t.Fatalf("%s is not %s after the doc's rewrite: first difference at line %d:\n rewrite: %q\n   after: %q\n(edit %s, then run the doc's commands on a copy of it)",
					afterPath, beforePath, i+1, w, a, beforePath)
			}
		}
	}
	if bytes.Contains(after, []byte(`"go.opencensus.io/`)) {
		t.Errorf("%s still imports go.opencensus.io", afterPath)
	}
	if bytes.Contains(before, []byte(`"github.com/zerostat/zerostat/`)) {
		t.Errorf("%s imports zerostat", beforePath)
	}

	// The lines that differ are import lines only.
	imp := regexp.MustCompile(`^\t"(go\.opencensus\.io|github\.com/zerostat/zerostat)/[a-z/]+"$`)
	count := map[string]int{}
	for _, l := range strings.Split(string(before), "\n") {
		count[l]++
	}
	for _, l := range strings.Split(string(after), "\n") {
		count[l]--
	}
	n := 0
	for l, c := range count {
		if c != 0 {
			n++
			if !imp.MatchString(l) {
				t.Errorf("before/ and after/ differ in a line that is not an import: %q", l)
			}
		}
	}
	if n != 6 {
		t.Errorf("before/ and after/ differ in %d distinct lines; want 6 (3 imports each)", n)
	}
}
