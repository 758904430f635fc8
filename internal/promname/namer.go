package promname

import (
	"errors"
	"slices"
	"strings"

	"github.com/zerostat/zerostat/internal/core"
)

// CollisionError says that a view is left out of an output because one of
// its metric's names is already another view's.
type CollisionError struct {
	View, With string // the view left out and the view keeping the name
	Name       string // the sample name both would carry
}

func (e *CollisionError) Error() string {
	return "promname: view " + quote(e.View) + " is left out: its metric name " + quote(e.Name) +
		" is view " + quote(e.With) + "'s (rename one of the views)"
}

func quote(s string) string { return `"` + s + `"` }

// Namer names the registered views for one output and refuses the views
// whose names collide with an earlier view's ("a.b" and "a_b" both
// "a_b"; a Count "x" and a LastValue "x_total"): of two colliding views
// the one registered first keeps its name, and the other is left out of
// the output, reported by Err and by Sync's count, until the first is
// unregistered. Output is then never invalid: no two "# TYPE" blocks of
// one name, no duplicate remote-write series.
//
// Not safe for concurrent use: its owner (a handler, a writer) serialises
// calls. Steady-state cost of Sync: one map lookup per view, no
// allocation.
type Namer struct {
	opts    Options
	fams    map[*core.View]*Family // every view seen, admitted or refused
	owners  map[string]*Family     // sample names of the admitted families
	refused map[*Family]*CollisionError
	seen    map[*core.View]uint64
	gen     uint64
	fresh   []*Family
}

// NewNamer returns a namer naming views with o.
func NewNamer(o Options) *Namer {
	return &Namer{
		opts:    o,
		fams:    map[*core.View]*Family{},
		owners:  map[string]*Family{},
		refused: map[*Family]*CollisionError{},
		seen:    map[*core.View]uint64{},
	}
}

// Sync brings the namer up to date with views, the registered views:
// views seen for the first time are named and admitted or refused, views
// no longer registered are forgotten (freeing their names), and refused
// views whose rival is gone are admitted. It returns how many views were
// newly refused.
func (n *Namer) Sync(views []*core.View) (refused int) {
	n.gen++
	n.fresh = n.fresh[:0]
	for _, v := range views {
		n.seen[v] = n.gen
		if _, ok := n.fams[v]; !ok {
			f := NewFamily(v, n.opts)
			n.fams[v] = f
			n.fresh = append(n.fresh, f)
		}
	}
	if len(n.fams) == len(views) && len(n.fresh) == 0 {
		return 0 // steady state
	}
	gone := false
	var wasRefused map[*core.Aggregator]bool // of views gone: a successor (GrowView) was refused already
	for v, f := range n.fams {
		if n.seen[v] != n.gen {
			if n.refused[f] != nil {
				if wasRefused == nil {
					wasRefused = map[*core.Aggregator]bool{}
				}
				wasRefused[v.Agg] = true
			}
			delete(n.fams, v)
			delete(n.seen, v)
			delete(n.refused, f)
			for _, name := range f.Names() {
				if n.owners[name] == f {
					delete(n.owners, name)
				}
			}
			gone = true
		}
	}
	if gone { // a rival may have left: retry the refused
		for f := range n.refused {
			n.fresh = append(n.fresh, f)
		}
	}
	// The earlier registered view wins, whatever the order of names.
	slices.SortFunc(n.fresh, func(a, b *Family) int {
		if c := a.View.Agg.Start().Compare(b.View.Agg.Start()); c != 0 {
			return c
		}
		return strings.Compare(a.View.Name, b.View.Name)
	})
	for _, f := range n.fresh {
		_, was := n.refused[f]
		was = was || wasRefused[f.View.Agg]
		delete(n.refused, f)
		if err := n.admit(f); err != nil {
			n.refused[f] = err
			if !was {
				refused++
			}
		}
	}
	return refused
}

// admit gives f its names, or returns the collision that prevents it.
func (n *Namer) admit(f *Family) *CollisionError {
	names := f.Names()
	for _, name := range names {
		if o := n.owners[name]; o != nil && o != f {
			return &CollisionError{View: f.View.Name, With: o.View.Name, Name: name}
		}
	}
	for _, name := range names {
		n.owners[name] = f
	}
	return nil
}

// Family returns the naming of v, or nil when v is refused (or was not in
// the last Sync).
func (n *Namer) Family(v *core.View) *Family {
	f := n.fams[v]
	if f == nil || n.refused[f] != nil {
		return nil
	}
	return f
}

// Err returns the collisions of the views refused now, joined, ordered by
// view name; nil when there are none.
func (n *Namer) Err() error {
	if len(n.refused) == 0 {
		return nil
	}
	errs := make([]*CollisionError, 0, len(n.refused))
	for _, e := range n.refused {
		errs = append(errs, e)
	}
	slices.SortFunc(errs, func(a, b *CollisionError) int { return strings.Compare(a.View, b.View) })
	joined := make([]error, len(errs))
	for i, e := range errs {
		joined[i] = e
	}
	return errors.Join(joined...)
}
