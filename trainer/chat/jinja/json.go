package jinja

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// jsonOpts are json.dumps's options as transformers' tojson filter passes them.
type jsonOpts struct {
	ensureASCII bool
	indent      string // "" with hasIndent false: no indent
	hasIndent   bool
	itemSep     string
	keySep      string
	sortKeys    bool
}

// toJSON is transformers' tojson: json.dumps(x, ensure_ascii=False, indent=None,
// separators=None, sort_keys=False) unless the template passes other values.
func toJSON(v Value, args []Value, kw *Dict) (Value, error) {
	o := jsonOpts{itemSep: ", ", keySep: ": "}
	get := func(i int, name string) (Value, bool) {
		if i < len(args) {
			return args[i], true
		}
		return kw.Get(name)
	}
	if x, ok := get(0, "ensure_ascii"); ok {
		o.ensureASCII = truthy(x)
	}
	if x, ok := get(1, "indent"); ok && x != nil {
		o.hasIndent = true
		o.itemSep = ","
		switch n := x.(type) {
		case int64:
			o.indent = strings.Repeat(" ", int(max(0, min(n, 1000))))
		case string:
			o.indent = n
		default:
			return nil, fmt.Errorf("tojson: indent must be an int or a string")
		}
	}
	if x, ok := get(2, "separators"); ok && x != nil {
		seps, ok := asSeq(x)
		if !ok || len(seps) != 2 {
			return nil, fmt.Errorf("tojson: separators must be a pair of strings")
		}
		a, ok1 := seps[0].(string)
		b, ok2 := seps[1].(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("tojson: separators must be a pair of strings")
		}
		o.itemSep, o.keySep = a, b
	}
	if x, ok := get(3, "sort_keys"); ok {
		o.sortKeys = truthy(x)
	}
	var sb strings.Builder
	if err := o.write(&sb, v, 0); err != nil {
		return nil, err
	}
	return sb.String(), nil
}

func (o *jsonOpts) newline(sb *strings.Builder, level int) {
	if o.hasIndent {
		sb.WriteByte('\n')
		for range level {
			sb.WriteString(o.indent)
		}
	}
}

func (o *jsonOpts) write(sb *strings.Builder, v Value, level int) error {
	if level > 200 {
		return fmt.Errorf("tojson: value nested too deeply")
	}
	if sb.Len() > maxOutput {
		return fmt.Errorf("tojson: output exceeds %d bytes", maxOutput)
	}
	switch x := v.(type) {
	case nil:
		sb.WriteString("null")
	case bool:
		sb.WriteString(map[bool]string{true: "true", false: "false"}[x])
	case int64:
		sb.WriteString(strconv.FormatInt(x, 10))
	case float64:
		s := pyFloat(x)
		switch s {
		case "inf":
			s = "Infinity"
		case "-inf":
			s = "-Infinity"
		case "nan":
			s = "NaN"
		}
		sb.WriteString(s)
	case string:
		writeJSONString(sb, x, o.ensureASCII)
	case List, Tuple:
		xs, _ := asSeq(x)
		return o.writeList(sb, xs, level)
	case *Dict:
		return o.writeDict(sb, x, level)
	default:
		//lint:ignore ST1005 Python's own message, which a template's error shows
		return fmt.Errorf("Object of type %s is not JSON serializable", typeName(v))
	}
	return nil
}

func (o *jsonOpts) writeList(sb *strings.Builder, xs []Value, level int) error {
	if len(xs) == 0 {
		sb.WriteString("[]")
		return nil
	}
	sb.WriteByte('[')
	for i, e := range xs {
		if i > 0 {
			sb.WriteString(o.itemSep)
		}
		o.newline(sb, level+1)
		if err := o.write(sb, e, level+1); err != nil {
			return err
		}
	}
	o.newline(sb, level)
	sb.WriteByte(']')
	return nil
}

func (o *jsonOpts) writeDict(sb *strings.Builder, d *Dict, level int) error {
	if d.Len() == 0 {
		sb.WriteString("{}")
		return nil
	}
	type kv struct {
		k string
		v Value
	}
	items := make([]kv, 0, d.Len())
	for i, k := range d.keys {
		var ks string
		switch x := k.(type) {
		case string:
			ks = x
		case nil:
			ks = "null"
		case bool:
			ks = map[bool]string{true: "true", false: "false"}[x]
		case int64, float64:
			var b strings.Builder
			_ = o.write(&b, x, 0)
			ks = b.String()
		default:
			return fmt.Errorf("keys must be str, int, float, bool or None, not %s", typeName(k))
		}
		items = append(items, kv{ks, d.vals[i]})
	}
	if o.sortKeys {
		sort.SliceStable(items, func(i, j int) bool { return items[i].k < items[j].k })
	}
	sb.WriteByte('{')
	for i, it := range items {
		if i > 0 {
			sb.WriteString(o.itemSep)
		}
		o.newline(sb, level+1)
		writeJSONString(sb, it.k, o.ensureASCII)
		sb.WriteString(o.keySep)
		if err := o.write(sb, it.v, level+1); err != nil {
			return err
		}
	}
	o.newline(sb, level)
	sb.WriteByte('}')
	return nil
}

// writeJSONString writes s as json.dumps does (ensure_ascii escapes non-ASCII as \uXXXX,
// with surrogate pairs above U+FFFF).
func writeJSONString(sb *strings.Builder, s string, ascii bool) {
	sb.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			sb.WriteString(`\"`)
		case r == '\\':
			sb.WriteString(`\\`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == '\b':
			sb.WriteString(`\b`)
		case r == '\f':
			sb.WriteString(`\f`)
		case r < 0x20 || ascii && r > 0x7e:
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(sb, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(sb, `\u%04x`, r)
			}
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
}
