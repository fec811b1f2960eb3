package jinja

import (
	"fmt"
	"unicode/utf8"
)

// unsafeMethods are the methods the immutable sandbox refuses: they would change a value.
var unsafeMethods = map[string]bool{
	"append": true, "extend": true, "insert": true, "pop": true, "remove": true, "reverse": true,
	"sort": true, "clear": true, "update": true, "setdefault": true, "popitem": true,
	"add": true, "discard": true, "difference_update": true, "intersection_update": true,
}

func missingAttr(obj Value, name string) *Undefined {
	return &Undefined{hint: fmt.Sprintf("'%s object' has no attribute '%s'", typeName(obj), name)}
}

// getattr is jinja2's obj.name: a Python attribute (a method) first, then obj["name"].
func getattr(obj Value, name string) (Value, error) {
	if u, ok := obj.(*Undefined); ok {
		return nil, u.err()
	}
	if len(name) > 0 && name[0] == '_' {
		return &Undefined{hint: fmt.Sprintf("access to attribute '%s' of '%s' object is unsafe", name, typeName(obj)), unsafe: true}, nil
	}
	switch x := obj.(type) {
	case *Undefined:
		return nil, x.err()
	case *Dict:
		if m := dictMethod(x, name); m != nil {
			return m, nil
		}
		if unsafeMethods[name] && name != "append" && name != "extend" && name != "insert" && name != "remove" && name != "reverse" && name != "sort" {
			return &Undefined{hint: fmt.Sprintf("access to attribute '%s' of 'dict' object is unsafe", name), unsafe: true}, nil
		}
		if v, ok := x.Get(name); ok {
			return v, nil
		}
	case string:
		if m := strMethod(x, name); m != nil {
			return m, nil
		}
	case List, Tuple:
		xs, _ := asSeq(x)
		if m := seqMethod(xs, name); m != nil {
			return m, nil
		}
	case *Namespace:
		if v, ok := x.d.Get(name); ok {
			return v, nil
		}
	case *loopInfo:
		return x.attr(name), nil
	case nil:
		return &Undefined{hint: fmt.Sprintf("'None' has no attribute '%s'", name)}, nil
	}
	if unsafeMethods[name] {
		switch obj.(type) {
		case List, *Dict:
			return &Undefined{hint: fmt.Sprintf("access to attribute '%s' of '%s' object is unsafe", name, typeName(obj)), unsafe: true}, nil
		}
	}
	return missingAttr(obj, name), nil
}

// getitem is jinja2's obj[key]: the item first, then for a string key the attribute.
func getitem(obj, key Value) (Value, error) {
	switch x := obj.(type) {
	case *Undefined:
		return nil, x.err()
	case *Dict:
		if v, ok := x.Get(key); ok {
			return v, nil
		}
	case List, Tuple:
		xs, _ := asSeq(x)
		if i, _, fl, ok := num(key); ok && !fl {
			if i < 0 {
				i += int64(len(xs))
			}
			if i >= 0 && i < int64(len(xs)) {
				return xs[i], nil
			}
			return &Undefined{hint: "list index out of range"}, nil
		}
	case string:
		if i, _, fl, ok := num(key); ok && !fl {
			n := int64(utf8.RuneCountInString(x))
			if i < 0 {
				i += n
			}
			if i >= 0 && i < n {
				return string([]rune(x)[i]), nil
			}
			return &Undefined{hint: "string index out of range"}, nil
		}
	case *Namespace:
		if v, ok := x.d.Get(key); ok {
			return v, nil
		}
	case *loopInfo:
		if s, ok := key.(string); ok {
			return x.attr(s), nil
		}
	}
	if s, ok := key.(string); ok {
		return getattr(obj, s)
	}
	return &Undefined{hint: fmt.Sprintf("'%s object' has no item %s", typeName(obj), repr(key))}, nil
}

func method(name string, fn func(args []Value, kw *Dict) (Value, error)) *function {
	return &function{name: name, fn: fn}
}

func dictMethod(d *Dict, name string) *function {
	switch name {
	case "items":
		return method("dict.items", func([]Value, *Dict) (Value, error) {
			out := make(List, d.Len())
			for i, k := range d.keys {
				out[i] = Tuple{k, d.vals[i]}
			}
			return out, nil
		})
	case "keys":
		return method("dict.keys", func([]Value, *Dict) (Value, error) { return append(List{}, d.keys...), nil })
	case "values":
		return method("dict.values", func([]Value, *Dict) (Value, error) { return append(List{}, d.vals...), nil })
	case "get":
		return method("dict.get", func(args []Value, _ *Dict) (Value, error) {
			if len(args) == 0 || len(args) > 2 {
				return nil, fmt.Errorf("get expected 1 or 2 arguments, got %d", len(args))
			}
			if v, ok := d.Get(args[0]); ok {
				return v, nil
			}
			if len(args) == 2 {
				return args[1], nil
			}
			return nil, nil
		})
	case "copy":
		return method("dict.copy", func([]Value, *Dict) (Value, error) { return d.copyDict(), nil })
	}
	return nil
}

func seqMethod(xs []Value, name string) *function {
	switch name {
	case "index":
		return method("list.index", func(args []Value, _ *Dict) (Value, error) {
			if len(args) != 1 {
				return nil, fmt.Errorf("index expected 1 argument")
			}
			for i, x := range xs {
				if equal(x, args[0]) {
					return int64(i), nil
				}
			}
			return nil, fmt.Errorf("%s is not in list", repr(args[0]))
		})
	case "count":
		return method("list.count", func(args []Value, _ *Dict) (Value, error) {
			if len(args) != 1 {
				return nil, fmt.Errorf("count expected 1 argument")
			}
			n := int64(0)
			for _, x := range xs {
				if equal(x, args[0]) {
					n++
				}
			}
			return n, nil
		})
	}
	return nil
}
