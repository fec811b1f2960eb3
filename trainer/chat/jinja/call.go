package jinja

import "fmt"

// function is a built-in callable: a global, a bound method or loop.cycle.
type function struct {
	name string
	fn   func(args []Value, kw *Dict) (Value, error)
}

// macro is a {% macro %} definition with the scope it was defined in.
type macro struct {
	node    *macroNode
	closure *frame
	// caller is the body of a {% call %} block, passed as caller().
	caller *macro
}

func (r *renderer) call(fn Value, args []Value, kw *Dict) (Value, error) {
	switch f := fn.(type) {
	case *function:
		return f.fn(args, kw)
	case *macro:
		return r.callMacro(f, args, kw)
	case *Undefined:
		return nil, f.err()
	}
	return nil, fmt.Errorf("'%s' object is not callable", typeName(fn))
}

func (r *renderer) callMacro(m *macro, args []Value, kw *Dict) (Value, error) {
	r.depth++
	defer func() { r.depth-- }()
	if r.depth > maxCallDepth {
		return nil, fmt.Errorf("macro calls nested deeper than %d", maxCallDepth)
	}
	n := m.node
	if len(args) > len(n.params) {
		return nil, fmt.Errorf("macro '%s' takes not more than %d argument(s)", n.name, len(n.params))
	}
	f := newFrame(m.closure)
	for i, p := range n.params {
		if i < len(args) {
			f.vars[p] = args[i]
			continue
		}
		if v, ok := kw.Get(p); ok {
			f.vars[p] = v
			continue
		}
		if d := i - (len(n.params) - len(n.defaults)); d >= 0 {
			v, err := r.eval(f, n.defaults[d])
			if err != nil {
				return nil, err
			}
			f.vars[p] = v
			continue
		}
		f.vars[p] = &Undefined{hint: fmt.Sprintf("parameter '%s' was not provided", p)}
	}
	for _, k := range kw.keys {
		name, _ := k.(string)
		if !contains(n.params, name) {
			return nil, fmt.Errorf("macro '%s' takes no keyword argument '%s'", n.name, name)
		}
	}
	if m.caller != nil {
		f.vars["caller"] = m.caller
	}
	return r.capture(f, n.body)
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func (r *renderer) callBlock(f *frame, n *callBlockNode) error {
	fn, err := r.eval(f, n.call.fn)
	if err != nil {
		return err
	}
	m, ok := fn.(*macro)
	if !ok {
		return fmt.Errorf("{%% call %%} needs a macro")
	}
	args, kw, err := r.evalArgs(f, n.call.args, n.call.kwargs)
	if err != nil {
		return err
	}
	body := &macro{node: &macroNode{name: "caller", body: n.body}, closure: f}
	v, err := r.callMacro(&macro{node: m.node, closure: m.closure, caller: body}, args, kw)
	if err != nil {
		return err
	}
	return r.write(toStr(v))
}

func (r *renderer) evalArgs(f *frame, args []expr, kws []kwarg) ([]Value, *Dict, error) {
	vals := make([]Value, len(args))
	for i, a := range args {
		v, err := r.eval(f, a)
		if err != nil {
			return nil, nil, err
		}
		vals[i] = v
	}
	kw := NewDict()
	for _, k := range kws {
		v, err := r.eval(f, k.e)
		if err != nil {
			return nil, nil, err
		}
		kw.Set(k.name, v)
	}
	return vals, kw, nil
}
