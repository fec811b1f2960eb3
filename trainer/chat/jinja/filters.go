package jinja

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

type filterFn func(r *renderer, v Value, args []Value, kw *Dict) (Value, error)

var filters map[string]filterFn

func (r *renderer) applyFilter(f *frame, e *filterExpr, v Value) (Value, error) {
	args, kw, err := r.evalArgs(f, e.args, e.kwargs)
	if err != nil {
		return nil, err
	}
	return filters[e.name](r, v, args, kw)
}

func arg(args []Value, kw *Dict, i int, name string, def Value) Value {
	if i < len(args) {
		return args[i]
	}
	if v, ok := kw.Get(name); ok {
		return v
	}
	return def
}

func strFilter(f func(string) Value) filterFn {
	return func(_ *renderer, v Value, _ []Value, _ *Dict) (Value, error) { return f(toStr(v)), nil }
}

func init() {
	filters = map[string]filterFn{
		"tojson": func(_ *renderer, v Value, a []Value, kw *Dict) (Value, error) { return toJSON(v, a, kw) },
		"length": length, "count": length,
		"string":     func(_ *renderer, v Value, _ []Value, _ *Dict) (Value, error) { return toStr(v), nil },
		"upper":      strFilter(func(s string) Value { return strings.ToUpper(s) }),
		"lower":      strFilter(func(s string) Value { return strings.ToLower(s) }),
		"title":      strFilter(func(s string) Value { return pyTitle(s) }),
		"capitalize": strFilter(func(s string) Value { return pyCapitalize(s) }),
		"safe":       func(_ *renderer, v Value, _ []Value, _ *Dict) (Value, error) { return v, nil },
		"e":          strFilter(func(s string) Value { return htmlEscape(s) }),
		"escape":     strFilter(func(s string) Value { return htmlEscape(s) }),
		"trim": func(_ *renderer, v Value, a []Value, kw *Dict) (Value, error) {
			chars, has, err := strArg([]Value{arg(a, kw, 0, "chars", nil)}, 0, "chars")
			return pyStrip(toStr(v), chars, has, true, true), err
		},
		"wordcount": strFilter(func(s string) Value { return int64(len(strings.Fields(s))) }),
		"replace": func(_ *renderer, v Value, a []Value, _ *Dict) (Value, error) {
			return pyReplace(toStr(v), a, nil)
		},
		"join": join, "default": deflt, "d": deflt,
		"first": func(_ *renderer, v Value, _ []Value, _ *Dict) (Value, error) { return firstLast(v, true) },
		"last":  func(_ *renderer, v Value, _ []Value, _ *Dict) (Value, error) { return firstLast(v, false) },
		"list": func(_ *renderer, v Value, _ []Value, _ *Dict) (Value, error) {
			xs, err := iterate(v)
			return List(xs), err
		},
		"items": items, "dictsort": dictsort,
		"selectattr": selectAttr(true), "rejectattr": selectAttr(false),
		"select": selectItems(true), "reject": selectItems(false),
		"map": mapFilter, "int": toInt, "float": toFloat, "abs": absFilter,
		"indent": indent, "unique": unique, "sort": sortFilter, "reverse": reverse,
		"sum": sum, "min": minMax(true), "max": minMax(false), "round": round,
		"batch": batch, "attr": attrFilter, "center": center, "truncate": truncate,
	}
}

func length(_ *renderer, v Value, _ []Value, _ *Dict) (Value, error) {
	switch x := v.(type) {
	case string:
		return int64(utf8.RuneCountInString(x)), nil
	case List:
		return int64(len(x)), nil
	case Tuple:
		return int64(len(x)), nil
	case *Dict:
		return int64(x.Len()), nil
	case *Undefined:
		return int64(0), nil
	}
	return nil, fmt.Errorf("object of type '%s' has no len()", typeName(v))
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

func join(_ *renderer, v Value, a []Value, kw *Dict) (Value, error) {
	sep := toStr(arg(a, kw, 0, "d", ""))
	attr := arg(a, kw, 1, "attribute", nil)
	xs, err := iterate(v)
	if err != nil {
		return nil, err
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		if attr != nil {
			if x, err = attrPath(x, attr); err != nil {
				return nil, err
			}
		}
		parts[i] = toStr(x)
	}
	return strings.Join(parts, sep), nil
}

func deflt(_ *renderer, v Value, a []Value, kw *Dict) (Value, error) {
	d := arg(a, kw, 0, "default_value", "")
	boolean := truthy(arg(a, kw, 1, "boolean", false))
	if _, ok := v.(*Undefined); ok || boolean && !truthy(v) {
		return d, nil
	}
	return v, nil
}

func firstLast(v Value, first bool) (Value, error) {
	xs, err := iterate(v)
	if err != nil {
		return nil, err
	}
	if len(xs) == 0 {
		return &Undefined{hint: "no item in an empty sequence"}, nil
	}
	if first {
		return xs[0], nil
	}
	return xs[len(xs)-1], nil
}

func items(_ *renderer, v Value, _ []Value, _ *Dict) (Value, error) {
	switch x := v.(type) {
	case *Undefined:
		return List{}, nil
	case *Dict:
		return dictMethod(x, "items").fn(nil, nil)
	}
	return nil, fmt.Errorf("can only get item pairs from a mapping")
}

func dictsort(r *renderer, v Value, a []Value, kw *Dict) (Value, error) {
	d, ok := v.(*Dict)
	if !ok {
		return nil, fmt.Errorf("dictsort needs a mapping")
	}
	pairs, _ := items(r, d, nil, nil)
	byValue := toStr(arg(a, kw, 1, "by", "key")) == "value"
	return sortValues(pairs.(List), func(x Value) (Value, error) {
		t := x.(Tuple)
		if byValue {
			return lowerKey(t[1]), nil
		}
		return lowerKey(t[0]), nil
	}, truthy(arg(a, kw, 2, "reverse", false)))
}

func lowerKey(v Value) Value {
	if s, ok := v.(string); ok {
		return strings.ToLower(s)
	}
	return v
}

// attrPath follows a dotted attribute path ("function.name", "0") as jinja2's attribute
// arguments do.
func attrPath(v Value, path Value) (Value, error) {
	s, ok := path.(string)
	if !ok {
		return getitem(v, path)
	}
	for _, part := range strings.Split(s, ".") {
		var key Value = part
		if n, err := strconv.ParseInt(part, 10, 64); err == nil {
			key = n
		}
		var err error
		if v, err = getitem(v, key); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func selectAttr(keep bool) filterFn {
	return func(r *renderer, v Value, a []Value, _ *Dict) (Value, error) {
		if len(a) == 0 {
			return nil, fmt.Errorf("selectattr needs an attribute")
		}
		return filterSeq(v, keep, func(x Value) (bool, error) {
			y, err := attrPath(x, a[0])
			if err != nil {
				return false, err
			}
			return runTest(y, a[1:])
		})
	}
}

func selectItems(keep bool) filterFn {
	return func(r *renderer, v Value, a []Value, _ *Dict) (Value, error) {
		return filterSeq(v, keep, func(x Value) (bool, error) { return runTest(x, a) })
	}
}

// runTest applies a test named by args[0] (truthiness without one).
func runTest(v Value, args []Value) (bool, error) {
	if len(args) == 0 {
		return truthy(v), nil
	}
	name, _ := args[0].(string)
	t, ok := tests[name]
	if !ok {
		return false, fmt.Errorf("no test named %s", repr(args[0]))
	}
	return t(v, args[1:])
}

func filterSeq(v Value, keep bool, pred func(Value) (bool, error)) (Value, error) {
	xs, err := iterate(v)
	if err != nil {
		return nil, err
	}
	out := List{}
	for _, x := range xs {
		ok, err := pred(x)
		if err != nil {
			return nil, err
		}
		if ok == keep {
			out = append(out, x)
		}
	}
	return out, nil
}

func mapFilter(r *renderer, v Value, a []Value, kw *Dict) (Value, error) {
	xs, err := iterate(v)
	if err != nil {
		return nil, err
	}
	out := make(List, 0, len(xs))
	if at, ok := kw.Get("attribute"); ok {
		def, hasDef := kw.Get("default")
		for _, x := range xs {
			y, err := attrPath(x, at)
			if err != nil {
				return nil, err
			}
			if _, undef := y.(*Undefined); undef && hasDef {
				y = def
			}
			out = append(out, y)
		}
		return out, nil
	}
	if len(a) == 0 {
		return nil, fmt.Errorf("map needs a filter name or attribute=")
	}
	name, _ := a[0].(string)
	f, ok := filters[name]
	if !ok {
		return nil, fmt.Errorf("no filter named %s", repr(a[0]))
	}
	for _, x := range xs {
		y, err := f(r, x, a[1:], kw)
		if err != nil {
			return nil, err
		}
		out = append(out, y)
	}
	return out, nil
}

func toInt(_ *renderer, v Value, a []Value, kw *Dict) (Value, error) {
	def := arg(a, kw, 0, "default", int64(0))
	switch x := v.(type) {
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case int64:
		return x, nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return def, nil
		}
		return int64(x), nil
	case string:
		s := strings.TrimFunc(x, isPySpace)
		if n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64); err == nil {
			return n, nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return int64(f), nil
		}
	}
	return def, nil
}

func toFloat(_ *renderer, v Value, a []Value, kw *Dict) (Value, error) {
	def := arg(a, kw, 0, "default", 0.0)
	switch x := v.(type) {
	case bool, int64:
		_, f, _, _ := num(x)
		return f, nil
	case float64:
		return x, nil
	case string:
		if f, err := strconv.ParseFloat(strings.TrimFunc(x, isPySpace), 64); err == nil {
			return f, nil
		}
	}
	return def, nil
}

func absFilter(_ *renderer, v Value, _ []Value, _ *Dict) (Value, error) {
	i, f, fl, ok := num(v)
	switch {
	case !ok:
		return nil, fmt.Errorf("bad operand type for abs(): '%s'", typeName(v))
	case fl:
		return math.Abs(f), nil
	case i < 0:
		return -i, nil
	}
	return i, nil
}

func indent(_ *renderer, v Value, a []Value, kw *Dict) (Value, error) {
	w := arg(a, kw, 0, "width", int64(4))
	pad := ""
	switch x := w.(type) {
	case string:
		pad = x
	case int64:
		pad = strings.Repeat(" ", int(max(0, min(x, 1000))))
	}
	first := truthy(arg(a, kw, 1, "first", false))
	blank := truthy(arg(a, kw, 2, "blank", false))
	lines := pySplitlines(toStr(v) + "\n")
	var rv string
	if blank {
		parts := make([]string, len(lines))
		for i, l := range lines {
			parts[i] = toStr(l)
		}
		rv = strings.Join(parts, "\n"+pad)
	} else if len(lines) > 0 {
		rv = toStr(lines[0])
		rest := make([]string, 0, len(lines)-1)
		for _, l := range lines[1:] {
			if ls := toStr(l); ls != "" {
				rest = append(rest, pad+ls)
			} else {
				rest = append(rest, "")
			}
		}
		if len(rest) > 0 {
			rv += "\n" + strings.Join(rest, "\n")
		}
	}
	if first {
		rv = pad + rv
	}
	return rv, nil
}

func unique(_ *renderer, v Value, _ []Value, _ *Dict) (Value, error) {
	xs, err := iterate(v)
	if err != nil {
		return nil, err
	}
	out := List{}
	for _, x := range xs {
		dup := false
		for _, y := range out {
			if equal(lowerKey(x), lowerKey(y)) {
				dup = true
			}
		}
		if !dup {
			out = append(out, x)
		}
	}
	return out, nil
}

func sortFilter(_ *renderer, v Value, a []Value, kw *Dict) (Value, error) {
	xs, err := iterate(v)
	if err != nil {
		return nil, err
	}
	rev := truthy(arg(a, kw, 0, "reverse", false))
	cs := truthy(arg(a, kw, 1, "case_sensitive", false))
	at := arg(a, kw, 2, "attribute", nil)
	return sortValues(append(List{}, xs...), func(x Value) (Value, error) {
		if at != nil {
			var err error
			if x, err = attrPath(x, at); err != nil {
				return nil, err
			}
		}
		if !cs {
			return lowerKey(x), nil
		}
		return x, nil
	}, rev)
}

func sortValues(xs List, key func(Value) (Value, error), rev bool) (Value, error) {
	keys := make([]Value, len(xs))
	for i, x := range xs {
		k, err := key(x)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	var sortErr error
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := keys[idx[i]], keys[idx[j]]
		if rev {
			a, b = b, a
		}
		lt, err := less(a, b)
		if err != nil && sortErr == nil {
			sortErr = err
		}
		return lt
	})
	out := make(List, len(xs))
	for i, k := range idx {
		out[i] = xs[k]
	}
	return out, sortErr
}

func reverse(_ *renderer, v Value, _ []Value, _ *Dict) (Value, error) {
	if s, ok := v.(string); ok {
		return slice(s, nil, nil, int64(-1))
	}
	xs, err := iterate(v)
	if err != nil {
		return nil, err
	}
	out := make(List, len(xs))
	for i, x := range xs {
		out[len(xs)-1-i] = x
	}
	return out, nil
}

func sum(_ *renderer, v Value, a []Value, kw *Dict) (Value, error) {
	xs, err := iterate(v)
	if err != nil {
		return nil, err
	}
	at := arg(a, kw, 0, "attribute", nil)
	var total Value = arg(a, kw, 1, "start", int64(0))
	for _, x := range xs {
		if at != nil {
			if x, err = attrPath(x, at); err != nil {
				return nil, err
			}
		}
		if total, err = binary("+", total, x); err != nil {
			return nil, err
		}
	}
	return total, nil
}

func minMax(isMin bool) filterFn {
	return func(_ *renderer, v Value, a []Value, kw *Dict) (Value, error) {
		xs, err := iterate(v)
		if err != nil {
			return nil, err
		}
		if len(xs) == 0 {
			return &Undefined{hint: "no item in an empty sequence"}, nil
		}
		best := xs[0]
		for _, x := range xs[1:] {
			lt, err := less(lowerKey(x), lowerKey(best))
			if err != nil {
				return nil, err
			}
			if !isMin {
				lt, err = less(lowerKey(best), lowerKey(x))
				if err != nil {
					return nil, err
				}
			}
			if lt {
				best = x
			}
		}
		return best, nil
	}
}

func round(_ *renderer, v Value, a []Value, kw *Dict) (Value, error) {
	_, f, _, ok := num(v)
	if !ok {
		return nil, fmt.Errorf("round needs a number")
	}
	prec, err := intArg([]Value{arg(a, kw, 0, "precision", int64(0))}, 0, 0)
	if err != nil {
		return nil, err
	}
	p := math.Pow(10, float64(prec))
	switch toStr(arg(a, kw, 1, "method", "common")) {
	case "ceil":
		return math.Ceil(f*p) / p, nil
	case "floor":
		return math.Floor(f*p) / p, nil
	}
	return math.Round(f*p) / p, nil
}

func batch(_ *renderer, v Value, a []Value, kw *Dict) (Value, error) {
	xs, err := iterate(v)
	if err != nil {
		return nil, err
	}
	n, err := intArg([]Value{arg(a, kw, 0, "linecount", int64(1))}, 0, 1)
	if err != nil || n <= 0 {
		return nil, fmt.Errorf("batch needs a positive size")
	}
	n = min(n, int64(len(xs))+1)
	out := List{}
	for i := 0; i < len(xs); i += int(n) {
		out = append(out, append(List{}, xs[i:min(len(xs), i+int(n))]...))
	}
	return out, nil
}

func attrFilter(_ *renderer, v Value, a []Value, _ *Dict) (Value, error) {
	if len(a) != 1 {
		return nil, fmt.Errorf("attr needs a name")
	}
	return getattr(v, toStr(a[0]))
}

func center(_ *renderer, v Value, a []Value, kw *Dict) (Value, error) {
	s := toStr(v)
	w, err := intArg([]Value{arg(a, kw, 0, "width", int64(80))}, 0, 80)
	if err != nil {
		return nil, err
	}
	n := utf8.RuneCountInString(s)
	if int(w) <= n {
		return s, nil
	}
	total := int(min(w, 10000)) - n
	left := total / 2
	if total%2 == 1 && n%2 == 1 {
		left++
	}
	return strings.Repeat(" ", left) + s + strings.Repeat(" ", total-left), nil
}

func truncate(_ *renderer, v Value, a []Value, kw *Dict) (Value, error) {
	s := toStr(v)
	n, err := intArg([]Value{arg(a, kw, 0, "length", int64(255))}, 0, 255)
	if err != nil {
		return nil, err
	}
	end := toStr(arg(a, kw, 2, "end", "..."))
	r := []rune(s)
	if int64(len(r)) <= n+5 {
		return s, nil
	}
	cut := max(0, int(n)-utf8.RuneCountInString(end))
	if !truthy(arg(a, kw, 1, "killwords", false)) {
		if i := strings.LastIndex(string(r[:cut]), " "); i >= 0 {
			return string(r[:cut])[:i] + end, nil
		}
	}
	return string(r[:cut]) + end, nil
}
