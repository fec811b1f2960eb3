package jinja

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RaisedError is an error the template raised with raise_exception(message).
type RaisedError struct{ Message string }

func (e *RaisedError) Error() string { return "template raised: " + e.Message }

// now is the clock strftime_now reads (local time, as transformers' datetime.now()).
var now = time.Now

var globals = map[string]Value{
	"range": &function{name: "range", fn: pyRange},
	"namespace": &function{name: "namespace", fn: func(args []Value, kw *Dict) (Value, error) {
		d := NewDict()
		if len(args) == 1 {
			src, ok := args[0].(*Dict)
			if !ok {
				return nil, fmt.Errorf("namespace() takes a mapping")
			}
			d = src.copyDict()
		} else if len(args) > 1 {
			return nil, fmt.Errorf("namespace() takes at most one positional argument")
		}
		for i, k := range kw.keys {
			_ = d.set(k, kw.vals[i])
		}
		return &Namespace{d: d}, nil
	}},
	"dict": &function{name: "dict", fn: func(args []Value, kw *Dict) (Value, error) {
		d := NewDict()
		if len(args) == 1 {
			src, ok := args[0].(*Dict)
			if !ok {
				return nil, fmt.Errorf("dict() takes a mapping")
			}
			d = src.copyDict()
		}
		for i, k := range kw.keys {
			_ = d.set(k, kw.vals[i])
		}
		return d, nil
	}},
	"raise_exception": &function{name: "raise_exception", fn: func(args []Value, _ *Dict) (Value, error) {
		msg := ""
		if len(args) > 0 {
			msg = toStr(args[0])
		}
		return nil, &RaisedError{Message: msg}
	}},
	"strftime_now": &function{name: "strftime_now", fn: func(args []Value, _ *Dict) (Value, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("strftime_now takes one format")
		}
		f, ok := args[0].(string)
		if !ok {
			return nil, fmt.Errorf("strftime_now format must be a string")
		}
		return Strftime(now(), f), nil
	}},
}

func pyRange(args []Value, _ *Dict) (Value, error) {
	var ns [3]int64
	ns[2] = 1
	for i, a := range args {
		n, _, fl, ok := num(a)
		if !ok || fl || i > 2 {
			return nil, fmt.Errorf("range() takes up to three integers")
		}
		ns[i] = n
	}
	start, stop, step := int64(0), ns[0], ns[2]
	switch len(args) {
	case 0:
		return nil, fmt.Errorf("range expected at least 1 argument")
	case 2, 3:
		start, stop = ns[0], ns[1]
	}
	if step == 0 {
		return nil, fmt.Errorf("range() arg 3 must not be zero")
	}
	out := List{}
	for i := start; step > 0 && i < stop || step < 0 && i > stop; i += step {
		if len(out) >= maxRange {
			return nil, fmt.Errorf("range too big, maximum size is %d", maxRange)
		}
		out = append(out, i)
	}
	return out, nil
}

// Strftime formats t as Python's time.strftime does with glibc (C locale), including
// glibc's "%-d" (no padding).
func Strftime(t time.Time, f string) string {
	var sb strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			sb.WriteByte(f[i])
			continue
		}
		i++
		noPad := false
		if f[i] == '-' && i+1 < len(f) {
			noPad = true
			i++
		}
		num := func(n, width int) {
			s := strconv.Itoa(n)
			if !noPad {
				for len(s) < width {
					s = "0" + s
				}
			}
			sb.WriteString(s)
		}
		switch f[i] {
		case 'Y':
			num(t.Year(), 4)
		case 'y':
			num(t.Year()%100, 2)
		case 'm':
			num(int(t.Month()), 2)
		case 'd':
			num(t.Day(), 2)
		case 'e':
			s := strconv.Itoa(t.Day())
			if len(s) < 2 && !noPad {
				s = " " + s
			}
			sb.WriteString(s)
		case 'H':
			num(t.Hour(), 2)
		case 'I':
			num((t.Hour()+11)%12+1, 2)
		case 'M':
			num(t.Minute(), 2)
		case 'S':
			num(t.Second(), 2)
		case 'j':
			num(t.YearDay(), 3)
		case 'p':
			sb.WriteString(t.Format("PM"))
		case 'a':
			sb.WriteString(t.Format("Mon"))
		case 'A':
			sb.WriteString(t.Format("Monday"))
		case 'b', 'h':
			sb.WriteString(t.Format("Jan"))
		case 'B':
			sb.WriteString(t.Format("January"))
		case 'Z':
			sb.WriteString(t.Format("MST"))
		case 'z':
			sb.WriteString(t.Format("-0700"))
		case 'F':
			sb.WriteString(t.Format("2006-01-02"))
		case 'T':
			sb.WriteString(t.Format("15:04:05"))
		case '%':
			sb.WriteByte('%')
		default:
			sb.WriteByte('%')
			sb.WriteByte(f[i])
		}
	}
	return sb.String()
}

// StrftimeFunc returns a strftime_now that reads clock instead of the local time (tests).
func StrftimeFunc(clock func() time.Time) Value {
	return &function{name: "strftime_now", fn: func(args []Value, _ *Dict) (Value, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("strftime_now takes one format")
		}
		f, ok := args[0].(string)
		if !ok {
			return nil, fmt.Errorf("strftime_now format must be a string")
		}
		return Strftime(clock(), f), nil
	}}
}
