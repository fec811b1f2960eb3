package jinja

import (
	"fmt"
)

func (r *renderer) eval(f *frame, e expr) (Value, error) {
	v, err := r.eval1(f, e)
	if err == nil {
		err = r.charge(v)
	}
	return v, err
}

func (r *renderer) eval1(f *frame, e expr) (Value, error) {
	switch e := e.(type) {
	case *constExpr:
		return e.v, nil
	case *nameExpr:
		if v, ok := f.lookup(e.name); ok {
			return v, nil
		}
		if v, ok := globals[e.name]; ok {
			return v, nil
		}
		return &Undefined{hint: fmt.Sprintf("'%s' is undefined", e.name)}, nil
	case *listExpr:
		return r.evalList(f, e.items)
	case *tupleExpr:
		l, err := r.evalList(f, e.items)
		return Tuple(l), err
	case *dictExpr:
		d := NewDict()
		for i, k := range e.keys {
			kv, err := r.eval(f, k)
			if err != nil {
				return nil, err
			}
			vv, err := r.eval(f, e.vals[i])
			if err != nil {
				return nil, err
			}
			if err := d.set(kv, vv); err != nil {
				return nil, err
			}
		}
		return d, nil
	case *attrExpr:
		obj, err := r.eval(f, e.obj)
		if err != nil {
			return nil, err
		}
		return getattr(obj, e.name)
	case *itemExpr:
		obj, err := r.eval(f, e.obj)
		if err != nil {
			return nil, err
		}
		key, err := r.eval(f, e.key)
		if err != nil {
			return nil, err
		}
		return getitem(obj, key)
	case *sliceExpr:
		return r.evalSlice(f, e)
	case *callExpr:
		fn, err := r.eval(f, e.fn)
		if err != nil {
			return nil, err
		}
		args, kw, err := r.evalArgs(f, e.args, e.kwargs)
		if err != nil {
			return nil, err
		}
		return r.call(fn, args, kw)
	case *filterExpr:
		v, err := r.eval(f, e.arg)
		if err != nil {
			return nil, err
		}
		return r.applyFilter(f, e, v)
	case *testExpr:
		return r.evalTest(f, e)
	}
	return r.evalOp(f, e)
}

func (r *renderer) evalList(f *frame, items []expr) (List, error) {
	out := make(List, len(items))
	for i, it := range items {
		v, err := r.eval(f, it)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (r *renderer) evalOp(f *frame, e expr) (Value, error) {
	switch e := e.(type) {
	case *binExpr:
		l, err := r.eval(f, e.l)
		if err != nil {
			return nil, err
		}
		switch e.op {
		case "and":
			if !truthy(l) {
				return l, nil
			}
			return r.eval(f, e.r)
		case "or":
			if truthy(l) {
				return l, nil
			}
			return r.eval(f, e.r)
		}
		rv, err := r.eval(f, e.r)
		if err != nil {
			return nil, err
		}
		return binary(e.op, l, rv)
	case *unaryExpr:
		v, err := r.eval(f, e.e)
		if err != nil {
			return nil, err
		}
		return unary(e.op, v)
	case *condExpr:
		c, err := r.eval(f, e.cond)
		if err != nil {
			return nil, err
		}
		if truthy(c) {
			return r.eval(f, e.yes)
		}
		if e.no == nil {
			return &Undefined{hint: "the inline if-expression evaluated to false and no else section was defined"}, nil
		}
		return r.eval(f, e.no)
	case *cmpExpr:
		return r.evalCmp(f, e)
	}
	return nil, fmt.Errorf("internal error: expression %T", e)
}

func (r *renderer) evalCmp(f *frame, e *cmpExpr) (Value, error) {
	l, err := r.eval(f, e.first)
	if err != nil {
		return nil, err
	}
	for i, op := range e.ops {
		rv, err := r.eval(f, e.rest[i])
		if err != nil {
			return nil, err
		}
		ok, err := compare(op, l, rv)
		if err != nil {
			return nil, err
		}
		if !ok {
			return false, nil
		}
		l = rv
	}
	return true, nil
}

func (r *renderer) evalSlice(f *frame, e *sliceExpr) (Value, error) {
	obj, err := r.eval(f, e.obj)
	if err != nil {
		return nil, err
	}
	var parts [3]Value
	for i, x := range []expr{e.start, e.stop, e.stp} {
		if x == nil {
			continue
		}
		if parts[i], err = r.eval(f, x); err != nil {
			return nil, err
		}
	}
	return slice(obj, parts[0], parts[1], parts[2])
}

func (r *renderer) evalTest(f *frame, e *testExpr) (Value, error) {
	v, err := r.eval(f, e.arg)
	if err != nil {
		return nil, err
	}
	args, _, err := r.evalArgs(f, e.args, nil)
	if err != nil {
		return nil, err
	}
	ok, err := tests[e.name](v, args)
	if err != nil {
		return nil, err
	}
	return ok != e.negate, nil
}
