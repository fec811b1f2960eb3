package jinja

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Value is a template value: nil (Python None), bool, int64, float64, string, List, Tuple,
// *Dict, *Undefined, *Namespace, *loopInfo, or a callable (*function, *macro).
type Value = any

// List is a Python list. Templates cannot change it (immutable sandbox).
type List []Value

// Tuple is a Python tuple.
type Tuple []Value

// Undefined is a missing variable, attribute or item. It prints as "" and is false, but
// any other use (attribute, arithmetic, call) is an error, as jinja2's Undefined.
type Undefined struct {
	// hint says what is missing, for error messages.
	hint string
	// unsafe marks an attribute the sandbox refuses (calling it is a security error).
	unsafe bool
}

func (u *Undefined) err() error {
	if u.unsafe {
		return fmt.Errorf("security error: %s", u.hint)
	}
	return fmt.Errorf("undefined: %s", u.hint)
}

// Namespace is the object namespace() returns; {% set ns.x = … %} writes it.
type Namespace struct{ d *Dict }

// Dict is a Python dict: insertion-ordered.
type Dict struct {
	keys []Value
	vals []Value
	idx  map[dictKey]int
}

type dictKey struct {
	kind byte
	s    string
}

// NewDict returns an empty dict.
func NewDict() *Dict { return &Dict{idx: map[dictKey]int{}} }

func keyOf(k Value) (dictKey, error) {
	switch x := k.(type) {
	case string:
		return dictKey{'s', x}, nil
	case bool:
		if x {
			return dictKey{'i', "1"}, nil
		}
		return dictKey{'i', "0"}, nil
	case int64:
		return dictKey{'i', strconv.FormatInt(x, 10)}, nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e18 {
			return dictKey{'i', strconv.FormatInt(int64(x), 10)}, nil
		}
		return dictKey{'f', strconv.FormatFloat(x, 'g', -1, 64)}, nil
	case nil:
		return dictKey{'n', ""}, nil
	case Tuple:
		var sb strings.Builder
		for _, e := range x {
			ek, err := keyOf(e)
			if err != nil {
				return dictKey{}, err
			}
			sb.WriteByte(ek.kind)
			sb.WriteString(strconv.Quote(ek.s))
		}
		return dictKey{'t', sb.String()}, nil
	}
	return dictKey{}, fmt.Errorf("unhashable type: '%s'", typeName(k))
}

// Set sets d[k] = v, keeping the key's first position.
func (d *Dict) Set(k string, v Value) { _ = d.set(k, v) }

func (d *Dict) set(k, v Value) error {
	dk, err := keyOf(k)
	if err != nil {
		return err
	}
	if i, ok := d.idx[dk]; ok {
		d.vals[i] = v
		return nil
	}
	d.idx[dk] = len(d.keys)
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
	return nil
}

// Get returns d[k].
func (d *Dict) Get(k Value) (Value, bool) {
	dk, err := keyOf(k)
	if err != nil {
		return nil, false
	}
	i, ok := d.idx[dk]
	if !ok {
		return nil, false
	}
	return d.vals[i], true
}

// Len is the number of keys.
func (d *Dict) Len() int { return len(d.keys) }

func (d *Dict) copyDict() *Dict {
	n := NewDict()
	for i, k := range d.keys {
		_ = n.set(k, d.vals[i])
	}
	return n
}

func typeName(v Value) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case List:
		return "list"
	case Tuple:
		return "tuple"
	case *Dict:
		return "dict"
	case *Undefined:
		return "Undefined"
	case *Namespace:
		return "Namespace"
	case *loopInfo:
		return "LoopContext"
	}
	return "function"
}

// truthy is Python's bool(v).
func truthy(v Value) bool {
	switch x := v.(type) {
	case nil, *Undefined:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case List:
		return len(x) > 0
	case Tuple:
		return len(x) > 0
	case *Dict:
		return x.Len() > 0
	}
	return true
}

// toStr is Python's str(v) (jinja2 prints Undefined as "").
func toStr(v Value) string {
	switch x := v.(type) {
	case string:
		return x
	case *Undefined:
		return ""
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return pyFloat(x)
	}
	return repr(v)
}

// repr is Python's repr(v).
func repr(v Value) string {
	var sb strings.Builder
	writeRepr(&sb, v, 0)
	return sb.String()
}

func writeRepr(sb *strings.Builder, v Value, depth int) {
	if depth > 100 {
		sb.WriteString("...")
		return
	}
	switch x := v.(type) {
	case string:
		sb.WriteString(pyStrRepr(x))
	case List:
		sb.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeRepr(sb, e, depth+1)
		}
		sb.WriteByte(']')
	case Tuple:
		sb.WriteByte('(')
		for i, e := range x {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeRepr(sb, e, depth+1)
		}
		if len(x) == 1 {
			sb.WriteByte(',')
		}
		sb.WriteByte(')')
	case *Dict:
		sb.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeRepr(sb, k, depth+1)
			sb.WriteString(": ")
			writeRepr(sb, x.vals[i], depth+1)
		}
		sb.WriteByte('}')
	case *Namespace:
		sb.WriteString("<Namespace ")
		writeRepr(sb, x.d, depth+1)
		sb.WriteByte('>')
	case *Undefined:
		sb.WriteString("Undefined")
	case nil, bool, int64, float64:
		sb.WriteString(toStr(x))
	default:
		sb.WriteString("<function>")
	}
}

// pyStrRepr quotes s as Python's repr does.
func pyStrRepr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var sb strings.Builder
	sb.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ':
			switch {
			case r < 0x100:
				fmt.Fprintf(&sb, `\x%02x`, r)
			case r < 0x10000:
				fmt.Fprintf(&sb, `\u%04x`, r)
			default:
				fmt.Fprintf(&sb, `\U%08x`, r)
			}
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte(q)
	return sb.String()
}

// pyFloat is Python's repr(float).
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if f != 0 && (exp < -4 || exp >= 16) {
		mant, ex, _ := strings.Cut(e, "e")
		if len(ex) == 2 { // "+5" → "+05"
			ex = ex[:1] + "0" + ex[1:]
		}
		return mant + "e" + ex
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}
