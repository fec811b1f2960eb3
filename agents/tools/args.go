package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// ErrArgs classifies a malformed tool call; its message is shown to the model.
var ErrArgs = errors.New("invalid tool call")

// Args are the parsed, type-checked arguments of one call.
type Args struct {
	vals map[string]any
}

// Parse checks a call of tool name with JSON-text arguments against the
// tool's schema. Errors wrap ErrArgs and say what to fix.
func Parse(name, arguments string) (Spec, Args, error) {
	spec, ok := Lookup(name)
	if !ok {
		return Spec{}, Args{}, fmt.Errorf("%w: unknown tool %q", ErrArgs, name)
	}
	args, err := ParseFor(spec, arguments)
	return spec, args, err
}

// ParseFor parses arguments against spec.
func ParseFor(spec Spec, arguments string) (Args, error) {
	text := strings.TrimSpace(arguments)
	if text == "" {
		text = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return Args{}, fmt.Errorf("%w: %s arguments are not a JSON object: %v", ErrArgs, spec.Name, err)
	}
	if raw == nil {
		return Args{}, fmt.Errorf("%w: %s arguments must be a JSON object, got null", ErrArgs, spec.Name)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Args{}, fmt.Errorf("%w: %s arguments have trailing data after the JSON object", ErrArgs, spec.Name)
	}
	vals, err := parseObject(spec.Params, raw, "")
	if err != nil {
		return Args{}, fmt.Errorf("%w: %s: %v", ErrArgs, spec.Name, err)
	}
	return Args{vals: vals}, nil
}

// parseObject checks the fields of raw against ps; where names the
// enclosing value in messages ("" at the top level). raw is consumed.
func parseObject(ps []Param, raw map[string]any, where string) (map[string]any, error) {
	vals := map[string]any{}
	for _, p := range ps {
		v, ok := raw[p.Name]
		for _, al := range p.Aliases {
			if av, aok := raw[al]; aok {
				if ok {
					return nil, fmt.Errorf("give %q only once (%q is another name for it)", where+p.Name, al)
				}
				v, ok = av, true
				delete(raw, al)
			}
		}
		delete(raw, p.Name)
		if !ok || v == nil {
			if p.Required {
				return nil, fmt.Errorf("missing required parameter %q (%s)", where+p.Name, p.Type)
			}
			continue
		}
		cv, err := convert(Param{Name: where + p.Name, Type: p.Type, Enum: p.Enum, NonEmpty: p.NonEmpty, Items: p.Items, Props: p.Props}, v)
		if err != nil {
			return nil, err
		}
		vals[p.Name] = cv
	}
	if len(raw) > 0 {
		keys := make([]string, 0, len(raw))
		for k := range raw {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return nil, fmt.Errorf("unknown parameter %q (known: %s)", where+keys[0], paramNames(ps))
	}
	return vals, nil
}

func convert(p Param, v any) (any, error) {
	switch p.Type {
	case TString:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("parameter %q must be a string, got %s", p.Name, jsonType(v))
		}
		if p.NonEmpty && strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("parameter %q must not be empty", p.Name)
		}
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, s) {
			return nil, fmt.Errorf("parameter %q must be one of %s, got %q", p.Name, strings.Join(p.Enum, ", "), s)
		}
		return s, nil
	case TBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("parameter %q must be a boolean, got %s", p.Name, jsonType(v))
		}
		return b, nil
	case TInteger, TNumber:
		return convertNumber(p, v)
	case TArray:
		return convertArray(p, v)
	case TObject:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("parameter %q must be an object, got %s", p.Name, jsonType(v))
		}
		return parseObject(p.Props, m, p.Name+".")
	}
	return nil, fmt.Errorf("parameter %q has unsupported schema type %s", p.Name, p.Type)
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "null"
}

func paramNames(ps []Param) string {
	var b bytes.Buffer
	for i, p := range ps {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Name)
	}
	return b.String()
}

// String returns a string argument, "" when absent.
func (a Args) String(name string) string { s, _ := a.vals[name].(string); return s }

// Int returns an integer argument and whether it was given.
func (a Args) Int(name string) (int64, bool) { n, ok := a.vals[name].(int64); return n, ok }

// Bool returns a boolean argument, false when absent.
func (a Args) Bool(name string) bool { b, _ := a.vals[name].(bool); return b }

// Has reports whether the argument was given.
func (a Args) Has(name string) bool { _, ok := a.vals[name]; return ok }

// Strings returns a string-array argument, nil when absent.
func (a Args) Strings(name string) []string {
	xs, _ := a.vals[name].([]any)
	var out []string
	for _, x := range xs {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Value returns an argument as parsed (strings, bools, int64, float64,
// []any and map[string]any), nil when absent.
func (a Args) Value(name string) any { return a.vals[name] }

func convertNumber(p Param, v any) (any, error) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, fmt.Errorf("parameter %q must be a%s %s, got %s", p.Name, map[bool]string{true: "n"}[p.Type == TInteger], p.Type, jsonType(v))
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) {
		return nil, fmt.Errorf("parameter %q: number %s is out of range", p.Name, n)
	}
	if p.Type == TNumber {
		return f, nil
	}
	if f != math.Trunc(f) || f < -(1<<53) || f > 1<<53 {
		return nil, fmt.Errorf("parameter %q must be an integer, got %s", p.Name, n)
	}
	return int64(f), nil

}

func convertArray(p Param, v any) (any, error) {
	xs, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("parameter %q must be an array, got %s", p.Name, jsonType(v))
	}
	out := make([]any, len(xs))
	for i, x := range xs {
		item := *p.Items
		item.Name = fmt.Sprintf("%s[%d]", p.Name, i)
		if x == nil {
			return nil, fmt.Errorf("parameter %q must not be null", item.Name)
		}
		cv, err := convert(item, x)
		if err != nil {
			return nil, err
		}
		out[i] = cv
	}
	return out, nil
}
