package jinja

import (
	"fmt"
	"strings"
)

type testFn func(v Value, args []Value) (bool, error)

var tests map[string]testFn

func one(args []Value, name string) (Value, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("test %s takes one argument", name)
	}
	return args[0], nil
}

func cmpTest(op string) testFn {
	return func(v Value, args []Value) (bool, error) {
		o, err := one(args, op)
		if err != nil {
			return false, err
		}
		return compare(op, v, o)
	}
}

func kindTest(f func(Value) bool) testFn {
	return func(v Value, _ []Value) (bool, error) { return f(v), nil }
}

func init() {
	isInt := func(v Value) bool { _, ok := v.(int64); return ok }
	tests = map[string]testFn{
		"defined":   kindTest(func(v Value) bool { _, u := v.(*Undefined); return !u }),
		"undefined": kindTest(func(v Value) bool { _, u := v.(*Undefined); return u }),
		"none":      kindTest(func(v Value) bool { return v == nil }),
		"boolean":   kindTest(func(v Value) bool { _, ok := v.(bool); return ok }),
		"true":      kindTest(func(v Value) bool { b, ok := v.(bool); return ok && b }),
		"false":     kindTest(func(v Value) bool { b, ok := v.(bool); return ok && !b }),
		"integer":   kindTest(isInt),
		"float":     kindTest(func(v Value) bool { _, ok := v.(float64); return ok }),
		"number":    kindTest(func(v Value) bool { _, _, _, ok := num(v); return ok }),
		"string":    kindTest(func(v Value) bool { _, ok := v.(string); return ok }),
		"mapping":   kindTest(func(v Value) bool { _, ok := v.(*Dict); return ok }),
		"iterable": kindTest(func(v Value) bool {
			switch v.(type) {
			case string, List, Tuple, *Dict, *Undefined:
				return true
			}
			return false
		}),
		"sequence": kindTest(func(v Value) bool {
			switch v.(type) {
			case string, List, Tuple, *Dict:
				return true
			}
			return false
		}),
		"callable": kindTest(func(v Value) bool {
			switch v.(type) {
			case *function, *macro:
				return true
			}
			return false
		}),
		"odd":  func(v Value, _ []Value) (bool, error) { return intTest(v, func(n int64) bool { return n%2 != 0 }) },
		"even": func(v Value, _ []Value) (bool, error) { return intTest(v, func(n int64) bool { return n%2 == 0 }) },
		"divisibleby": func(v Value, args []Value) (bool, error) {
			d, err := one(args, "divisibleby")
			if err != nil {
				return false, err
			}
			m, err := binary("%", v, d)
			return err == nil && equal(m, int64(0)), err
		},
		"lower": kindTest(func(v Value) bool { s, ok := v.(string); return ok && strings.ToLower(s) == s }),
		"upper": kindTest(func(v Value) bool { s, ok := v.(string); return ok && strings.ToUpper(s) == s }),
		"eq":    cmpTest("=="), "equalto": cmpTest("=="), "==": cmpTest("=="),
		"ne": cmpTest("!="), "!=": cmpTest("!="),
		"lt": cmpTest("<"), "lessthan": cmpTest("<"), "<": cmpTest("<"),
		"le": cmpTest("<="), "<=": cmpTest("<="),
		"gt": cmpTest(">"), "greaterthan": cmpTest(">"), ">": cmpTest(">"),
		"ge": cmpTest(">="), ">=": cmpTest(">="),
		"in":      cmpTest("in"),
		"sameas":  sameas,
		"escaped": kindTest(func(Value) bool { return false }),
	}
}

func intTest(v Value, f func(int64) bool) (bool, error) {
	n, _, fl, ok := num(v)
	if !ok || fl {
		if u, isU := v.(*Undefined); isU {
			return false, u.err()
		}
		return false, fmt.Errorf("odd/even need an integer, not %s", typeName(v))
	}
	return f(n), nil
}

// sameas is Python's `is`: identity for None, booleans and small values.
func sameas(v Value, args []Value) (bool, error) {
	o, err := one(args, "sameas")
	if err != nil {
		return false, err
	}
	switch x := v.(type) {
	case nil:
		return o == nil, nil
	case bool:
		y, ok := o.(bool)
		return ok && x == y, nil
	case int64, string:
		return v == o, nil
	}
	return false, nil
}
