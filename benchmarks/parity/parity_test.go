// Package parity compares the exported API of OpenCensus's tag, stats,
// stats/view, resource and resource/resourcekeys (go.opencensus.io
// v0.24.0, the version this module requires) with zerostat's tag, stats,
// view, resource and resource/resourcekeys, identifier by identifier and
// signature by signature, and fails on any difference that the migration
// guide (docs/migrating-from-opencensus.md, its "API differences" table)
// does not list with a reason — and on any listed difference that no
// longer exists. Both APIs are read from the compiled packages (go list
// -export, go/types), so the comparison follows either side as it changes.
package parity

import (
	"bufio"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pairs maps each OpenCensus package to its zerostat counterpart, under
// the short name both are written with in the guide.
var pairs = []struct{ short, oc, zs string }{
	{"tag", "go.opencensus.io/tag", "github.com/zerostat/zerostat/tag"},
	{"stats", "go.opencensus.io/stats", "github.com/zerostat/zerostat/stats"},
	{"view", "go.opencensus.io/stats/view", "github.com/zerostat/zerostat/view"},
	{"resource", "go.opencensus.io/resource", "github.com/zerostat/zerostat/resource"},
	{"resourcekeys", "go.opencensus.io/resource/resourcekeys", "github.com/zerostat/zerostat/resource/resourcekeys"},
}

// shortName is how a package is written in signatures: the paired
// packages by their short name (so equal signatures print equal), any
// other by its path.
func shortName(p *types.Package) string {
	for _, pr := range pairs {
		if p.Path() == pr.oc || p.Path() == pr.zs {
			return pr.short
		}
	}
	return p.Path()
}

// loadPackages type-checks the packages from their export data, built by
// the go command in this module (which requires both SDKs).
func loadPackages(t *testing.T, paths []string) map[string]*types.Package {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, paths...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -export: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	for line := range strings.Lines(string(out)) {
		path, file, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if ok && file != "" {
			exports[path] = file
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %q", path)
		}
		return os.Open(f)
	})
	pkgs := map[string]*types.Package{}
	for _, p := range paths {
		pkg, err := imp.Import(p)
		if err != nil {
			t.Fatalf("import %s: %v", p, err)
		}
		pkgs[p] = pkg
	}
	return pkgs
}

// api returns the package's exported identifiers — package-level names,
// the methods of its named types (value and pointer method sets), the
// methods of its interfaces and the fields of its structs — each with its
// signature as the guide's table names it ("view.Meter.Find").
func api(pkg *types.Package, short string) map[string]string {
	q := shortName
	m := map[string]string{}
	sc := pkg.Scope()
	for _, name := range sc.Names() {
		obj := sc.Lookup(name)
		if !obj.Exported() {
			continue
		}
		id := short + "." + name
		switch o := obj.(type) {
		case *types.TypeName:
			m[id] = "type " + types.TypeString(o.Type().Underlying(), q)
			if _, isIface := o.Type().Underlying().(*types.Interface); isIface {
				m[id] = "interface"
			}
			if _, isStruct := o.Type().Underlying().(*types.Struct); isStruct {
				m[id] = "struct"
			}
			if o.IsAlias() {
				m[id] = "= " + types.TypeString(o.Type(), q)
			}
			named, ok := o.Type().(*types.Named)
			if !ok {
				continue
			}
			switch u := named.Underlying().(type) {
			case *types.Interface:
				for i := 0; i < u.NumMethods(); i++ {
					f := u.Method(i)
					if f.Exported() {
						m[id+"."+f.Name()] = sig(f.Type(), q)
					}
				}
			case *types.Struct:
				for i := 0; i < u.NumFields(); i++ {
					f := u.Field(i)
					if f.Exported() {
						m[id+"."+f.Name()] = "field " + types.TypeString(f.Type(), q)
					}
				}
			}
			if _, isIface := named.Underlying().(*types.Interface); isIface {
				continue
			}
			ms := types.NewMethodSet(types.NewPointer(named))
			for i := 0; i < ms.Len(); i++ {
				f := ms.At(i).Obj()
				if !f.Exported() || len(ms.At(i).Index()) > 1 {
					continue // promoted methods belong to the embedded type
				}
				recv := "*"
				if types.NewMethodSet(named).Lookup(f.Pkg(), f.Name()) != nil {
					recv = ""
				}
				m[id+"."+f.Name()] = recv + sig(f.Type(), q)
			}
		case *types.Func:
			m[id] = sig(o.Type(), q)
		case *types.Var:
			m[id] = "var " + types.TypeString(o.Type(), q)
		case *types.Const:
			m[id] = "const " + types.TypeString(o.Type(), q)
		}
	}
	return m
}

// sig prints a function type without parameter names (a renamed parameter
// is no API difference).
func sig(t types.Type, q types.Qualifier) string {
	s, ok := t.(*types.Signature)
	if !ok {
		return types.TypeString(t, q)
	}
	unnamed := func(tu *types.Tuple) *types.Tuple {
		vs := make([]*types.Var, tu.Len())
		for i := range vs {
			vs[i] = types.NewParam(token.NoPos, nil, "", tu.At(i).Type())
		}
		return types.NewTuple(vs...)
	}
	return types.TypeString(types.NewSignatureType(nil, nil, nil, unnamed(s.Params()), unnamed(s.Results()), s.Variadic()), q)
}

// diff is one difference between the APIs.
type diff struct {
	id, kind string // kind: missing, differs, added
	oc, zs   string
}

func diffs(t *testing.T) []diff {
	var paths []string
	for _, p := range pairs {
		paths = append(paths, p.oc, p.zs)
	}
	pkgs := loadPackages(t, paths)
	var out []diff
	for _, p := range pairs {
		oc, zs := api(pkgs[p.oc], p.short), api(pkgs[p.zs], p.short)
		for id, sig := range oc {
			switch z, ok := zs[id]; {
			case !ok:
				out = append(out, diff{id, "missing", sig, ""})
			case z != sig:
				out = append(out, diff{id, "differs", sig, z})
			}
		}
		for id, sig := range zs {
			if _, ok := oc[id]; !ok {
				out = append(out, diff{id, "added", "", sig})
			}
		}
	}
	slices.SortFunc(out, func(a, b diff) int { return strings.Compare(a.id, b.id) })
	return out
}

const guide = "../../docs/migrating-from-opencensus.md"

// listed reads the guide's "API differences" table: rows of
// | `identifier` | kind | reason |.
func listed(t *testing.T) map[string][2]string {
	t.Helper()
	f, err := os.Open(filepath.FromSlash(guide))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string][2]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "### ") {
			in = strings.Contains(line, "API differences")
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			t.Errorf("guide: API differences row %q: got %d cells; want 3 (identifier, kind, reason)", line, len(cells))
			continue
		}
		id := strings.Trim(strings.TrimSpace(cells[0]), "`")
		kind, reason := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
		if _, dup := rows[id]; dup {
			t.Errorf("guide: %s is listed twice", id)
		}
		rows[id] = [2]string{kind, reason}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("guide %s: no \"API differences\" table found", guide)
	}
	return rows
}

// TestAPIParity fails on a difference the guide does not list with its
// kind and a reason, and on a listed difference that is gone.
func TestAPIParity(t *testing.T) {
	ds := diffs(t)
	rows := listed(t)
	seen := map[string]bool{}
	for _, d := range ds {
		seen[d.id] = true
		r, ok := rows[d.id]
		switch {
		case !ok:
			t.Errorf("%s is %s and not in the guide's API differences table:\n\tOpenCensus: %s\n\tzerostat:   %s\n\tadd: | `%s` | %s | <reason> |",
				d.id, d.kind, d.oc, d.zs, d.id, d.kind)
		case r[0] != d.kind:
			t.Errorf("%s: the guide says %q; it is %s (OpenCensus: %s; zerostat: %s)", d.id, r[0], d.kind, d.oc, d.zs)
		case len(r[1]) < 10:
			t.Errorf("%s: the guide gives no reason (%q)", d.id, r[1])
		}
	}
	for id := range rows {
		if !seen[id] {
			t.Errorf("the guide lists %s as %s, but the APIs no longer differ there: remove the row", id, rows[id][0])
		}
	}
}

// TestAPIParityCounts logs the tally (go test -v) the issue counts.
func TestAPIParityCounts(t *testing.T) {
	var ids []string
	for _, p := range pairs {
		ids = append(ids, p.oc)
	}
	pkgs := loadPackages(t, ids)
	total := 0
	for _, p := range pairs {
		total += len(api(pkgs[p.oc], p.short))
	}
	n := map[string]int{}
	for _, d := range diffs(t) {
		n[d.kind]++
		t.Logf("%-8s %s\n\tOpenCensus: %s\n\tzerostat:   %s", d.kind, d.id, d.oc, d.zs)
	}
	t.Logf("OpenCensus identifiers: %d; missing %d, differ %d; zerostat adds %d", total, n["missing"], n["differs"], n["added"])
	if total == 0 {
		t.Fatal("no OpenCensus identifiers read")
	}
}
