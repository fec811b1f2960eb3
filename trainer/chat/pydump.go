package chat

import (
	"math"
	"strconv"
	"strings"
)

// AppendPython appends v as Python's json.dumps(v, ensure_ascii=False) writes it: ", " and
// ": " separators, key order kept, non-ASCII unescaped, floats in repr form.
func (v Value) AppendPython(b []byte) []byte {
	switch v.Kind {
	case Null:
		return append(b, "null"...)
	case Bool:
		if v.Bool {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case Number:
		return appendPyNumber(b, v.Num)
	case String:
		return AppendPyString(b, v.Str)
	case Array:
		b = append(b, '[')
		for i, x := range v.Items {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = x.AppendPython(b)
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		for i, m := range v.Members {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = AppendPyString(b, m.Key)
			b = append(b, ": "...)
			b = m.Value.AppendPython(b)
		}
		return append(b, '}')
	}
}

// Python returns v in json.dumps form.
func (v Value) Python() string { return string(v.AppendPython(nil)) }

// AppendPyString appends s as a JSON string the way json.dumps(ensure_ascii=False) does.
func AppendPyString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendPyNumber writes a number literal as Python's json round trip does: integers as
// written (but "-0" is 0), floats in repr form.
func appendPyNumber(b []byte, lit string) []byte {
	if !strings.ContainsAny(lit, ".eE") {
		if lit == "-0" {
			return append(b, '0')
		}
		return append(b, lit...)
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !math.IsInf(f, 0) {
		return append(b, lit...)
	}
	return appendPyFloat(b, f)
}

func appendPyFloat(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	case math.IsNaN(f):
		return append(b, "NaN"...)
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if f != 0 && (exp < -4 || exp >= 16) {
		return append(b, e...)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	b = append(b, s...)
	if !strings.ContainsAny(s, ".") {
		b = append(b, ".0"...)
	}
	return b
}
