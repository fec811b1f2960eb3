package jinja

import (
	"fmt"
	"math"
	"strings"
)

// num returns v as a number: ints (bools count as ints) and floats.
func num(v Value) (i int64, f float64, isFloat, ok bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, 1, false, true
		}
		return 0, 0, false, true
	case int64:
		return x, float64(x), false, true
	case float64:
		return 0, x, true, true
	}
	return 0, 0, false, false
}

func opErr(op string, l, r Value) error {
	if u, ok := l.(*Undefined); ok {
		return u.err()
	}
	if u, ok := r.(*Undefined); ok {
		return u.err()
	}
	return fmt.Errorf("unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(l), typeName(r))
}

func binary(op string, l, r Value) (Value, error) {
	if op == "~" {
		s := toStr(l) + toStr(r)
		if len(s) > maxOutput {
			return nil, fmt.Errorf("string exceeds %d bytes", maxOutput)
		}
		return s, nil
	}
	li, lf, lfl, lok := num(l)
	ri, rf, rfl, rok := num(r)
	if lok && rok {
		return arith(op, li, lf, lfl, ri, rf, rfl)
	}
	switch op {
	case "+":
		return add(l, r)
	case "*":
		if s, ok := l.(string); ok && rok && !rfl {
			return repeat(s, ri)
		}
		if s, ok := r.(string); ok && lok && !lfl {
			return repeat(s, li)
		}
		if xs, ok := l.(List); ok && rok && !rfl {
			return repeatList(xs, ri)
		}
	case "%":
		if s, ok := l.(string); ok {
			return percentFormat(s, r)
		}
	}
	return nil, opErr(op, l, r)
}

func add(l, r Value) (Value, error) {
	switch a := l.(type) {
	case string:
		if b, ok := r.(string); ok {
			if len(a)+len(b) > maxOutput {
				return nil, fmt.Errorf("string exceeds %d bytes", maxOutput)
			}
			return a + b, nil
		}
	case List:
		if b, ok := r.(List); ok {
			return append(append(List{}, a...), b...), nil
		}
	case Tuple:
		if b, ok := r.(Tuple); ok {
			return append(append(Tuple{}, a...), b...), nil
		}
	}
	if _, ok := l.(string); ok {
		if _, ok := r.(*Undefined); !ok {
			return nil, fmt.Errorf("can only concatenate str (not \"%s\") to str", typeName(r))
		}
	}
	return nil, opErr("+", l, r)
}

func repeat(s string, n int64) (Value, error) {
	if n <= 0 {
		return "", nil
	}
	if n > maxOutput || int64(len(s))*n > maxOutput {
		return nil, fmt.Errorf("string exceeds %d bytes", maxOutput)
	}
	return strings.Repeat(s, int(n)), nil
}

func repeatList(xs List, n int64) (Value, error) {
	if n <= 0 || len(xs) == 0 {
		return List{}, nil
	}
	if n > maxRange || int64(len(xs))*n > maxRange {
		return nil, fmt.Errorf("list too long")
	}
	var out List
	for range n {
		out = append(out, xs...)
	}
	return out, nil
}

func arith(op string, li int64, lf float64, lfl bool, ri int64, rf float64, rfl bool) (Value, error) {
	fl := lfl || rfl
	switch op {
	case "+":
		if fl {
			return lf + rf, nil
		}
		return li + ri, nil
	case "-":
		if fl {
			return lf - rf, nil
		}
		return li - ri, nil
	case "*":
		if fl {
			return lf * rf, nil
		}
		return li * ri, nil
	case "/":
		if rf == 0 {
			return nil, fmt.Errorf("division by zero")
		}
		return lf / rf, nil
	case "//", "%":
		if rf == 0 {
			return nil, fmt.Errorf("integer division or modulo by zero")
		}
		if fl {
			q := math.Floor(lf / rf)
			if op == "//" {
				return q, nil
			}
			return lf - q*rf, nil
		}
		q := li / ri
		if (li%ri != 0) && ((li < 0) != (ri < 0)) {
			q--
		}
		if op == "//" {
			return q, nil
		}
		return li - q*ri, nil
	case "**":
		if !fl && ri >= 0 {
			res := int64(1)
			for range min(ri, 64) {
				res *= li
			}
			return res, nil
		}
		return math.Pow(lf, rf), nil
	}
	return nil, fmt.Errorf("unknown operator %s", op)
}

func unary(op string, v Value) (Value, error) {
	if op == "not" {
		return !truthy(v), nil
	}
	i, f, fl, ok := num(v)
	if !ok {
		if u, isU := v.(*Undefined); isU {
			return nil, u.err()
		}
		return nil, fmt.Errorf("bad operand type for unary %s: '%s'", op, typeName(v))
	}
	switch {
	case op == "+" && fl:
		return f, nil
	case op == "+":
		return i, nil
	case fl:
		return -f, nil
	}
	return -i, nil
}

// equal is Python's ==.
func equal(a, b Value) bool {
	ai, af, afl, aok := num(a)
	bi, bf, bfl, bok := num(b)
	if aok && bok {
		if afl || bfl {
			return af == bf
		}
		return ai == bi
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case List:
		y, ok := b.(List)
		return ok && equalSeq(x, y)
	case Tuple:
		y, ok := b.(Tuple)
		return ok && equalSeq(x, y)
	case *Dict:
		y, ok := b.(*Dict)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.keys {
			v, ok := y.Get(k)
			if !ok || !equal(x.vals[i], v) {
				return false
			}
		}
		return true
	case *Undefined:
		_, ok := b.(*Undefined)
		return ok
	}
	return a == b
}

func equalSeq(a, b []Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// less is Python's <; mismatched types are an error.
func less(a, b Value) (bool, error) {
	_, af, _, aok := num(a)
	_, bf, _, bok := num(b)
	if aok && bok {
		return af < bf, nil
	}
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			return x < y, nil
		}
	}
	xa, aseq := asSeq(a)
	xb, bseq := asSeq(b)
	if aseq && bseq {
		for i := 0; i < len(xa) && i < len(xb); i++ {
			if !equal(xa[i], xb[i]) {
				return less(xa[i], xb[i])
			}
		}
		return len(xa) < len(xb), nil
	}
	return false, opErr("<", a, b)
}

func asSeq(v Value) ([]Value, bool) {
	switch x := v.(type) {
	case List:
		return x, true
	case Tuple:
		return x, true
	}
	return nil, false
}

func compare(op string, a, b Value) (bool, error) {
	switch op {
	case "==":
		return equal(a, b), nil
	case "!=":
		return !equal(a, b), nil
	case "<":
		return less(a, b)
	case ">":
		return less(b, a)
	case "<=":
		lt, err := less(a, b)
		return lt || err == nil && equal(a, b), err
	case ">=":
		lt, err := less(b, a)
		return lt || err == nil && equal(a, b), err
	case "in", "not in":
		in, err := contains2(b, a)
		return in == (op == "in"), err
	}
	return false, fmt.Errorf("unknown comparison %s", op)
}

// contains2 is Python's `x in container`.
func contains2(container, x Value) (bool, error) {
	switch c := container.(type) {
	case string:
		s, ok := x.(string)
		if !ok {
			return false, fmt.Errorf("'in <string>' requires string as left operand, not %s", typeName(x))
		}
		return strings.Contains(c, s), nil
	case List, Tuple:
		xs, _ := asSeq(c)
		for _, e := range xs {
			if equal(e, x) {
				return true, nil
			}
		}
		return false, nil
	case *Dict:
		_, ok := c.Get(x)
		return ok, nil
	case *Undefined:
		return false, nil
	}
	return false, fmt.Errorf("argument of type '%s' is not iterable", typeName(container))
}

// slice is Python's obj[start:stop:step] for lists, tuples and strings.
func slice(obj, start, stop, step Value) (Value, error) {
	var items []Value
	var runes []rune
	n := 0
	switch x := obj.(type) {
	case List:
		items, n = x, len(x)
	case Tuple:
		items, n = x, len(x)
	case string:
		runes = []rune(x)
		n = len(runes)
	case *Undefined:
		return nil, x.err()
	default:
		return nil, fmt.Errorf("'%s' object is not subscriptable", typeName(obj))
	}
	st := int64(1)
	if step != nil {
		s, ok := step.(int64)
		if !ok || s == 0 {
			return nil, fmt.Errorf("slice step must be a non-zero integer")
		}
		st = s
	}
	idx, err := sliceIndices(n, start, stop, st)
	if err != nil {
		return nil, err
	}
	if runes != nil || obj == "" {
		out := make([]rune, 0, len(idx))
		for _, i := range idx {
			out = append(out, runes[i])
		}
		return string(out), nil
	}
	out := make([]Value, 0, len(idx))
	for _, i := range idx {
		out = append(out, items[i])
	}
	if _, ok := obj.(Tuple); ok {
		return Tuple(out), nil
	}
	return List(out), nil
}

func sliceIndices(n int, start, stop Value, step int64) ([]int, error) {
	bound := func(v Value, def int64) (int64, error) {
		if v == nil {
			return def, nil
		}
		i, _, fl, ok := num(v)
		if !ok || fl {
			return 0, fmt.Errorf("slice indices must be integers or None")
		}
		if i < 0 {
			i += int64(n)
			if i < 0 {
				if step < 0 {
					return -1, nil
				}
				return 0, nil
			}
		}
		if i >= int64(n) {
			if step < 0 {
				return int64(n) - 1, nil
			}
			return int64(n), nil
		}
		return i, nil
	}
	var lo, hi int64
	var err error
	if step > 0 {
		lo, err = bound(start, 0)
		if err == nil {
			hi, err = bound(stop, int64(n))
		}
	} else {
		lo, err = bound(start, int64(n)-1)
		if err == nil {
			hi, err = bound(stop, -1)
		}
	}
	if err != nil {
		return nil, err
	}
	var out []int
	for i := lo; (step > 0 && i < hi) || (step < 0 && i > hi); i += step {
		out = append(out, int(i))
		if step > 0 && step >= hi-i || step < 0 && step <= hi-i {
			break
		}
	}
	return out, nil
}
