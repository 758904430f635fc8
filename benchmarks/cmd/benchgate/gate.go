package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// Rule kinds.
const (
	kindAlloc   = "alloc"   // every sample of a metric at most a ceiling
	kindRatio   = "ratio"   // a median at most (or at least) k times another's
	kindRegress = "regress" // no significant slowdown beyond a percentage
)

// Rule is one line of a rules file.
type Rule struct {
	Line    int
	Kind    string
	Pattern string // benchmark name glob (alloc, regress) or name (ratio)
	Unit    string // as written by go test: ns/op, B/op, allocs/op, custom
	Op      string // "<=" or ">=" (alloc: "<=")
	Limit   float64
	Other   string // ratio: the benchmark compared with
	re      *regexp.Regexp
}

func (r *Rule) String() string {
	switch r.Kind {
	case kindAlloc:
		return fmt.Sprintf("%s %s %s <= %g", r.Kind, r.Pattern, r.Unit, r.Limit)
	case kindRatio:
		return fmt.Sprintf("%s %s %s %s %g x %s", r.Kind, r.Pattern, r.Unit, r.Op, r.Limit, r.Other)
	}
	return fmt.Sprintf("%s %s %s +%g%%", r.Kind, r.Pattern, r.Unit, r.Limit)
}

// ParseRules reads a rules file:
//
//	alloc   GLOB UNIT <= N           every sample of UNIT for every matching benchmark <= N
//	ratio   NAME UNIT <= K x OTHER    median(NAME) <= K * median(OTHER)  (or >=)
//	regress GLOB UNIT +P%             vs the baseline: no slowdown over P% with p < alpha
//
// Names omit the "Benchmark" prefix and the "-GOMAXPROCS" suffix; in a
// GLOB, * matches any run of characters (slashes included). # starts a
// comment.
func ParseRules(r io.Reader) ([]*Rule, error) {
	var rules []*Rule
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("rules line %d: %s: %q", n, fmt.Sprintf(format, args...), strings.TrimSpace(line))
		}
		rule := &Rule{Line: n, Kind: f[0]}
		switch f[0] {
		case kindAlloc:
			if len(f) != 5 || f[3] != "<=" {
				return nil, bad("want: alloc GLOB UNIT <= N")
			}
			rule.Pattern, rule.Unit, rule.Op = f[1], f[2], f[3]
			v, err := strconv.ParseFloat(f[4], 64)
			if err != nil || v < 0 {
				return nil, bad("bad ceiling %q", f[4])
			}
			rule.Limit = v
		case kindRatio:
			if len(f) != 7 || (f[3] != "<=" && f[3] != ">=") || f[5] != "x" {
				return nil, bad("want: ratio NAME UNIT <=|>= K x OTHER")
			}
			rule.Pattern, rule.Unit, rule.Op, rule.Other = f[1], f[2], f[3], f[6]
			v, err := strconv.ParseFloat(f[4], 64)
			if err != nil || !(v > 0) {
				return nil, bad("bad factor %q", f[4])
			}
			rule.Limit = v
		case kindRegress:
			if len(f) != 4 || !strings.HasPrefix(f[3], "+") || !strings.HasSuffix(f[3], "%") {
				return nil, bad("want: regress GLOB UNIT +P%%")
			}
			rule.Pattern, rule.Unit = f[1], f[2]
			v, err := strconv.ParseFloat(strings.TrimSuffix(f[3][1:], "%"), 64)
			if err != nil || v < 0 {
				return nil, bad("bad percentage %q", f[3])
			}
			rule.Limit = v
		default:
			return nil, bad("unknown rule kind %q (want alloc, ratio or regress)", f[0])
		}
		rule.re = globRE(rule.Pattern)
		rules = append(rules, rule)
	}
	return rules, sc.Err()
}

func globRE(glob string) *regexp.Regexp {
	return regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(glob), `\*`, ".*") + "$")
}

// Samples maps benchmark name (no prefix, no -GOMAXPROCS) and unit to the
// values of every run.
type Samples map[string]map[string][]float64

// ReadResults reads `go test -bench` output (any number of runs, files
// concatenated) with benchfmt.
func ReadResults(r io.Reader, name string, into Samples) error {
	br := benchfmt.NewReader(r, name)
	for br.Scan() {
		res, ok := br.Result().(*benchfmt.Result)
		if !ok {
			continue // unit metadata, syntax errors of non-benchmark lines
		}
		bench := benchName(res.Name)
		if into[bench] == nil {
			into[bench] = map[string][]float64{}
		}
		for _, v := range res.Values {
			// Rules use the units go test writes; benchfmt keeps them in
			// OrigUnit only when it normalised the unit (ns/op -> sec/op).
			unit, val := v.OrigUnit, v.OrigValue
			if unit == "" {
				unit, val = v.Unit, v.Value
			}
			into[bench][unit] = append(into[bench][unit], val)
		}
	}
	return br.Err()
}

func benchName(n benchfmt.Name) string {
	base, parts := n.Parts()
	var b bytes.Buffer
	b.Write(base)
	for _, p := range parts {
		if len(p) > 0 && p[0] == '-' { // -GOMAXPROCS
			continue
		}
		b.Write(p)
	}
	return b.String()
}

// Verdicts.
const (
	Pass = "ok"
	Fail = "FAIL"
	Warn = "~"
)

// Check is the outcome of one rule on one benchmark.
type Check struct {
	Rule    *Rule
	Bench   string
	Got     string // what was measured
	Verdict string
	Why     string
}

const confidence = 0.95

// Evaluate applies the rules to the new samples (and, for regress rules,
// the baseline; nil when there is none). A rule that matches no benchmark
// is a failure: a renamed benchmark must not silently disable its gate.
func Evaluate(rules []*Rule, cur, base Samples) []Check {
	var out []Check
	thr := benchmath.DefaultThresholds
	for _, r := range rules {
		names := matching(cur, r)
		if len(names) == 0 {
			out = append(out, Check{Rule: r, Verdict: Fail, Why: "no benchmark matches " + r.Pattern + " with unit " + r.Unit})
			continue
		}
		switch r.Kind {
		case kindAlloc:
			for _, n := range names {
				vals := cur[n][r.Unit]
				worst := max(vals...)
				c := Check{Rule: r, Bench: n, Got: fmt.Sprintf("max %g over %d runs", worst, len(vals)), Verdict: Pass}
				if worst > r.Limit {
					c.Verdict, c.Why = Fail, fmt.Sprintf("%s %g > %g", r.Unit, worst, r.Limit)
				}
				out = append(out, c)
			}
		case kindRatio:
			a, b := cur[r.Pattern][r.Unit], cur[r.Other][r.Unit]
			if len(names) != 1 || len(b) == 0 {
				out = append(out, Check{Rule: r, Bench: r.Pattern, Verdict: Fail,
					Why: fmt.Sprintf("ratio rules need exactly one benchmark on each side with unit %s (%s: %d runs, %s: %d runs)", r.Unit, r.Pattern, len(a), r.Other, len(b))})
				continue
			}
			sa := benchmath.AssumeNothing.Summary(benchmath.NewSample(a, &thr), confidence)
			sb := benchmath.AssumeNothing.Summary(benchmath.NewSample(b, &thr), confidence)
			out = append(out, ratioCheck(r, sa, sb))
		case kindRegress:
			if base == nil {
				out = append(out, Check{Rule: r, Bench: r.Pattern, Verdict: Warn, Why: "no baseline given (-baseline); skipped"})
				continue
			}
			for _, n := range names {
				old := base[n][r.Unit]
				if len(old) == 0 {
					out = append(out, Check{Rule: r, Bench: n, Verdict: Warn, Why: "not in the baseline; skipped"})
					continue
				}
				out = append(out, regressCheck(r, n, old, cur[n][r.Unit], &thr))
			}
		}
	}
	return out
}

func matching(s Samples, r *Rule) []string {
	var names []string
	for n, units := range s {
		if len(units[r.Unit]) > 0 && r.re.MatchString(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func max(vs ...float64) float64 {
	m := math.Inf(-1)
	for _, v := range vs {
		m = math.Max(m, v)
	}
	return m
}

// ratioCheck judges median(A) op K*median(B). The medians decide; the 95%
// confidence intervals keep noise from failing the build: a violation by
// the medians that the intervals do not confirm (the interval of the ratio
// still reaches the limit) is reported as inconclusive, not as a failure.
func ratioCheck(r *Rule, a, b benchmath.Summary) Check {
	ratio := a.Center / b.Center
	lo, hi := a.Lo/b.Hi, a.Hi/b.Lo // the ratio's interval, conservatively
	c := Check{Rule: r, Bench: r.Pattern,
		Got: fmt.Sprintf("%.3gx (%.3g..%.3g) = %.4g / %.4g %s", ratio, lo, hi, a.Center, b.Center, r.Unit)}
	violated := ratio > r.Limit
	confirmed := lo > r.Limit
	if r.Op == ">=" {
		violated, confirmed = ratio < r.Limit, hi < r.Limit
	}
	switch {
	case !violated:
		c.Verdict = Pass
	case confirmed:
		c.Verdict, c.Why = Fail, fmt.Sprintf("ratio %.3g is not %s %g, beyond the confidence interval", ratio, r.Op, r.Limit)
	default:
		c.Verdict, c.Why = Warn, fmt.Sprintf("median ratio %.3g is not %s %g, but within the noise; rerun with more -count", ratio, r.Op, r.Limit)
	}
	return c
}

// regressCheck fails when new is significantly slower than old (the
// Mann-Whitney U test benchstat uses, p < alpha) by more than the rule's
// percentage.
func regressCheck(r *Rule, name string, old, cur []float64, thr *benchmath.Thresholds) Check {
	so, sn := benchmath.NewSample(old, thr), benchmath.NewSample(cur, thr)
	mo := benchmath.AssumeNothing.Summary(so, confidence).Center
	mn := benchmath.AssumeNothing.Summary(sn, confidence).Center
	cmp := benchmath.AssumeNothing.Compare(so, sn)
	delta := (mn/mo - 1) * 100
	c := Check{Rule: r, Bench: name, Got: fmt.Sprintf("%.4g -> %.4g %s (%+.1f%%, p=%.3f n=%d+%d)", mo, mn, r.Unit, delta, cmp.P, len(old), len(cur)), Verdict: Pass}
	if cmp.P < cmp.Alpha && delta > r.Limit {
		c.Verdict, c.Why = Fail, fmt.Sprintf("%+.1f%% slower (p=%.3f < %.2f), over the +%g%% allowed", delta, cmp.P, cmp.Alpha, r.Limit)
	}
	return c
}

// Report writes the checks as a table and returns the number of failures.
func Report(w io.Writer, checks []Check) int {
	fails := 0
	tw := newTable(w)
	tw.row("RULE", "BENCHMARK", "MEASURED", "VERDICT")
	for _, c := range checks {
		v := c.Verdict
		if c.Why != "" {
			v += ": " + c.Why
		}
		tw.row(fmt.Sprintf("line %d: %s", c.Rule.Line, c.Rule), c.Bench, c.Got, v)
		if c.Verdict == Fail {
			fails++
		}
	}
	tw.flush()
	return fails
}
