package trainflags

import (
	"fmt"
	"reflect"
	"strings"
)

// Args renders the set fields of the struct v points to (or v) that carry a `flag:"name"`
// tag: non-zero numbers and strings, non-nil pointers, non-empty lists, true bools. Every
// tag must name a declared flag (Arg panics otherwise; a test walks each tagged type).
func Args(v any) []string {
	rv := reflect.Indirect(reflect.ValueOf(v))
	var out []string
	for i := 0; i < rv.NumField(); i++ {
		name := rv.Type().Field(i).Tag.Get("flag")
		if name == "" {
			continue
		}
		fv := rv.Field(i)
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				continue
			}
			out = append(out, Arg(name, fv.Elem().Interface())...)
			continue
		}
		if fv.IsZero() || (fv.Kind() == reflect.Slice && fv.Len() == 0) {
			continue
		}
		out = append(out, Arg(name, fv.Interface())...)
	}
	return out
}

// Tags returns the flag names tagged on the struct type of v, for tests.
func Tags(v any) []string {
	t := reflect.Indirect(reflect.ValueOf(v)).Type()
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if n := t.Field(i).Tag.Get("flag"); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// Setter reads a command's flags by name (urfave/cli's Context satisfies it).
type Setter interface {
	IsSet(name string) bool
	Int(name string) int
	Float64(name string) float64
	Uint64(name string) uint64
	String(name string) string
	Bool(name string) bool
}

// Fill sets the tagged fields of the struct dst points to from the flags set in c (unset
// flags leave their fields zero, so mass-train's defaults apply).
func Fill(c Setter, dst any) error {
	rv := reflect.ValueOf(dst).Elem()
	for i := 0; i < rv.NumField(); i++ {
		name := rv.Type().Field(i).Tag.Get("flag")
		if name == "" || !c.IsSet(name) {
			continue
		}
		f, ok := Lookup(name)
		if !ok {
			return fmt.Errorf("trainflags: field %s tags undeclared flag %q", rv.Type().Field(i).Name, name)
		}
		var val any
		switch f.Kind {
		case Int:
			val = c.Int(name)
		case Float:
			val = c.Float64(name)
		case Uint:
			val = c.Uint64(name)
		case String:
			val = c.String(name)
		case Bool:
			val = c.Bool(name)
		case List:
			val, ok = list(c.String(name), rv.Field(i).Type())
			if !ok {
				return fmt.Errorf("--%s %q: want comma-separated %s", name, c.String(name), rv.Field(i).Type().Elem())
			}
		}
		if err := set(rv.Field(i), reflect.ValueOf(val)); err != nil {
			return fmt.Errorf("--%s: %w", name, err)
		}
	}
	return nil
}

func list(s string, t reflect.Type) (any, bool) {
	parts := strings.Split(s, ",")
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Int {
		out := make([]int, len(parts))
		for i, p := range parts {
			if _, err := fmt.Sscan(strings.TrimSpace(p), &out[i]); err != nil {
				return nil, false
			}
		}
		return out, true
	}
	return parts, true
}

// set stores val in field (through a new pointer for pointer fields).
func set(field, val reflect.Value) error {
	if field.Kind() == reflect.Pointer {
		p := reflect.New(field.Type().Elem())
		if !val.Type().ConvertibleTo(p.Elem().Type()) {
			return fmt.Errorf("value %v does not fit %s", val, field.Type())
		}
		p.Elem().Set(val.Convert(p.Elem().Type()))
		field.Set(p)
		return nil
	}
	if !val.Type().ConvertibleTo(field.Type()) {
		return fmt.Errorf("value %v does not fit %s", val, field.Type())
	}
	field.Set(val.Convert(field.Type()))
	return nil
}
