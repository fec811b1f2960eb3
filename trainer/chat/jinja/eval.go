package jinja

import (
	"errors"
	"fmt"
	"strings"
)

var (
	errBreak    = errors.New("break outside a loop")
	errContinue = errors.New("continue outside a loop")
)

// Limits that keep a hostile template from exhausting memory or the stack.
const (
	maxOutput    = 64 << 20
	maxCallDepth = 200
	maxRange     = 100000
	// maxSteps bounds statements and loop iterations in one render.
	maxSteps = 5_000_000
	// maxWork bounds the bytes of strings built in one render, printed or not.
	maxWork = 512 << 20
)

type frame struct {
	vars   map[string]Value
	parent *frame
}

func newFrame(parent *frame) *frame { return &frame{vars: map[string]Value{}, parent: parent} }

func (f *frame) lookup(name string) (Value, bool) {
	for ; f != nil; f = f.parent {
		if v, ok := f.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

type renderer struct {
	bufs  []*strings.Builder
	spans [][2]int
	depth int
	// total counts bytes written to every buffer.
	total int
	steps int
	work  int
}

// charge counts work done; a render that exceeds its budget stops with an error.
func (r *renderer) charge(v Value) error {
	r.steps++
	switch x := v.(type) {
	case string:
		r.work += len(x)
	case List:
		r.work += 8 * len(x)
	case Tuple:
		r.work += 8 * len(x)
	case *Dict:
		r.work += 8 * x.Len()
	}
	if r.steps > maxSteps || r.work > maxWork {
		return fmt.Errorf("template does too much work (over %d steps or %d bytes)", maxSteps, maxWork)
	}
	return nil
}

func (r *renderer) out() *strings.Builder { return r.bufs[len(r.bufs)-1] }

func (r *renderer) write(s string) error {
	r.total += len(s)
	if r.total > maxOutput {
		return fmt.Errorf("output exceeds %d bytes", maxOutput)
	}
	r.out().WriteString(s)
	return nil
}

// capture renders nodes into a fresh buffer and returns the text.
func (r *renderer) capture(f *frame, nodes []node) (string, error) {
	r.bufs = append(r.bufs, &strings.Builder{})
	err := r.exec(f, nodes)
	s := r.out().String()
	r.bufs = r.bufs[:len(r.bufs)-1]
	return s, err
}

func (r *renderer) exec(f *frame, nodes []node) error {
	for _, n := range nodes {
		if err := r.execOne(f, n); err != nil {
			return err
		}
	}
	return nil
}

func (r *renderer) execOne(f *frame, n node) error {
	if err := r.charge(nil); err != nil {
		return err
	}
	switch n := n.(type) {
	case *textNode:
		return r.write(n.s)
	case *outputNode:
		v, err := r.eval(f, n.e)
		if err != nil {
			return err
		}
		return r.write(toStr(v))
	case *ifNode:
		for i, c := range n.conds {
			v, err := r.eval(f, c)
			if err != nil {
				return err
			}
			if truthy(v) {
				return r.exec(f, n.bodies[i])
			}
		}
		if len(n.bodies) > len(n.conds) {
			return r.exec(f, n.bodies[len(n.conds)])
		}
		return nil
	case *forNode:
		return r.forLoop(f, n)
	case *setNode:
		return r.set(f, n)
	case *macroNode:
		f.vars[n.name] = &macro{node: n, closure: f}
		return nil
	case *callBlockNode:
		return r.callBlock(f, n)
	case *filterBlockNode:
		s, err := r.capture(f, n.body)
		if err != nil {
			return err
		}
		v, err := r.applyFilter(f, n.filter, s)
		if err != nil {
			return err
		}
		return r.write(toStr(v))
	case *generationNode:
		return r.generation(f, n)
	case *loopCtlNode:
		if n.brk {
			return errBreak
		}
		return errContinue
	}
	return fmt.Errorf("internal error: node %T", n)
}

// generation renders a {% generation %} block and records its byte span in the output
// (only for text written to the top-level output).
func (r *renderer) generation(f *frame, n *generationNode) error {
	start := r.out().Len()
	if err := r.exec(f, n.body); err != nil {
		return err
	}
	if len(r.bufs) == 1 {
		r.spans = append(r.spans, [2]int{start, r.out().Len()})
	}
	return nil
}

func (r *renderer) set(f *frame, n *setNode) error {
	var v Value
	var err error
	if n.body != nil {
		v, err = r.capture(f, n.body)
	} else {
		v, err = r.eval(f, n.value)
	}
	if err != nil {
		return err
	}
	if n.attr != "" {
		obj, _ := f.lookup(n.targets[0])
		ns, ok := obj.(*Namespace)
		if !ok {
			return fmt.Errorf("cannot assign attribute on non-namespace object")
		}
		ns.d.Set(n.attr, v)
		return nil
	}
	return assign(f, n.targets, v)
}

func assign(f *frame, targets []string, v Value) error {
	if len(targets) == 1 {
		f.vars[targets[0]] = v
		return nil
	}
	items, err := iterate(v)
	if err != nil {
		return err
	}
	if len(items) != len(targets) {
		return fmt.Errorf("cannot unpack %d values into %d names", len(items), len(targets))
	}
	for i, t := range targets {
		f.vars[t] = items[i]
	}
	return nil
}

func (r *renderer) forLoop(f *frame, n *forNode) error {
	it, err := r.eval(f, n.iter)
	if err != nil {
		return err
	}
	items, err := iterate(it)
	if err != nil {
		return err
	}
	lf := newFrame(f)
	if n.filter != nil {
		var kept []Value
		for _, item := range items {
			if err := assign(lf, n.targets, item); err != nil {
				return err
			}
			ok, err := r.eval(lf, n.filter)
			if err != nil {
				return err
			}
			if truthy(ok) {
				kept = append(kept, item)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		return r.exec(f, n.els)
	}
	loop := &loopInfo{items: items}
	for i, item := range items {
		if err := r.charge(nil); err != nil {
			return err
		}
		loop.i = i
		// Each iteration is its own scope: a {% set %} in one is gone in the next.
		it := newFrame(f)
		it.vars["loop"] = loop
		if err := assign(it, n.targets, item); err != nil {
			return err
		}
		err := r.exec(it, n.body)
		if errors.Is(err, errBreak) {
			break
		}
		if err != nil && !errors.Is(err, errContinue) {
			return err
		}
	}
	return nil
}

// iterate lists what a for loop visits: list items, dict keys, string characters.
func iterate(v Value) ([]Value, error) {
	switch x := v.(type) {
	case List:
		return x, nil
	case Tuple:
		return x, nil
	case *Dict:
		return append([]Value(nil), x.keys...), nil
	case string:
		var out []Value
		for _, c := range x {
			out = append(out, string(c))
		}
		return out, nil
	case *Undefined:
		if x.unsafe {
			return nil, x.err()
		}
		return nil, nil
	}
	return nil, fmt.Errorf("'%s' object is not iterable", typeName(v))
}

// loopInfo is the loop variable of a for loop.
type loopInfo struct {
	items []Value
	i     int
}

func (l *loopInfo) attr(name string) Value {
	n := len(l.items)
	switch name {
	case "index":
		return int64(l.i + 1)
	case "index0":
		return int64(l.i)
	case "revindex":
		return int64(n - l.i)
	case "revindex0":
		return int64(n - l.i - 1)
	case "first":
		return l.i == 0
	case "last":
		return l.i == n-1
	case "length":
		return int64(n)
	case "depth":
		return int64(1)
	case "depth0":
		return int64(0)
	case "previtem":
		if l.i > 0 {
			return l.items[l.i-1]
		}
		return &Undefined{hint: "there is no previous item"}
	case "nextitem":
		if l.i < n-1 {
			return l.items[l.i+1]
		}
		return &Undefined{hint: "there is no next item"}
	case "cycle":
		return &function{name: "loop.cycle", fn: func(args []Value, _ *Dict) (Value, error) {
			if len(args) == 0 {
				return nil, fmt.Errorf("no items for cycling given")
			}
			return args[l.i%len(args)], nil
		}}
	}
	return &Undefined{hint: fmt.Sprintf("'LoopContext' has no attribute '%s'", name)}
}
