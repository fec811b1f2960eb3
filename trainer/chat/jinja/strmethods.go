package jinja

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

func strArg(args []Value, i int, what string) (string, bool, error) {
	if i >= len(args) || args[i] == nil {
		return "", false, nil
	}
	s, ok := args[i].(string)
	if !ok {
		return "", false, fmt.Errorf("%s arg must be None or str, not %s", what, typeName(args[i]))
	}
	return s, true, nil
}

func intArg(args []Value, i int, def int64) (int64, error) {
	if i >= len(args) {
		return def, nil
	}
	n, _, fl, ok := num(args[i])
	if !ok || fl {
		return 0, fmt.Errorf("'%s' object cannot be interpreted as an integer", typeName(args[i]))
	}
	return n, nil
}

// pyStrip is Python's str.strip/lstrip/rstrip: whitespace without chars, else any of chars.
func pyStrip(s string, chars string, has bool, left, right bool) string {
	cut := isPySpace
	if has {
		cut = func(r rune) bool { return strings.ContainsRune(chars, r) }
	}
	if left {
		s = strings.TrimLeftFunc(s, cut)
	}
	if right {
		s = strings.TrimRightFunc(s, cut)
	}
	return s
}

func strMethod(s, name string) *function {
	fn := strMethods[name]
	if fn == nil {
		return nil
	}
	return method("str."+name, func(args []Value, kw *Dict) (Value, error) { return fn(s, args, kw) })
}

type strFn func(s string, args []Value, kw *Dict) (Value, error)

var strMethods map[string]strFn

func init() {
	strip := func(left, right bool) strFn {
		return func(s string, args []Value, _ *Dict) (Value, error) {
			chars, has, err := strArg(args, 0, "strip")
			return pyStrip(s, chars, has, left, right), err
		}
	}
	simple := func(f func(string) Value) strFn {
		return func(s string, _ []Value, _ *Dict) (Value, error) { return f(s), nil }
	}
	strMethods = map[string]strFn{
		"strip":      strip(true, true),
		"lstrip":     strip(true, false),
		"rstrip":     strip(false, true),
		"split":      func(s string, a []Value, kw *Dict) (Value, error) { return pySplit(s, a, kw, false) },
		"rsplit":     func(s string, a []Value, kw *Dict) (Value, error) { return pySplit(s, a, kw, true) },
		"startswith": func(s string, a []Value, _ *Dict) (Value, error) { return affix(s, a, strings.HasPrefix) },
		"endswith":   func(s string, a []Value, _ *Dict) (Value, error) { return affix(s, a, strings.HasSuffix) },
		"replace":    pyReplace,
		"upper":      simple(func(s string) Value { return strings.ToUpper(s) }),
		"lower":      simple(func(s string) Value { return strings.ToLower(s) }),
		"title":      simple(func(s string) Value { return pyTitle(s) }),
		"capitalize": simple(func(s string) Value { return pyCapitalize(s) }),
		"find":       func(s string, a []Value, _ *Dict) (Value, error) { return pyFind(s, a, false, false) },
		"rfind":      func(s string, a []Value, _ *Dict) (Value, error) { return pyFind(s, a, true, false) },
		"index":      func(s string, a []Value, _ *Dict) (Value, error) { return pyFind(s, a, false, true) },
		"rindex":     func(s string, a []Value, _ *Dict) (Value, error) { return pyFind(s, a, true, true) },
		"count": func(s string, a []Value, _ *Dict) (Value, error) {
			sub, has, err := strArg(a, 0, "count")
			if err != nil || !has {
				return nil, fmt.Errorf("count() takes a string")
			}
			if sub == "" {
				return int64(utf8.RuneCountInString(s) + 1), nil
			}
			return int64(strings.Count(s, sub)), nil
		},
		"join": func(s string, a []Value, _ *Dict) (Value, error) {
			if len(a) != 1 {
				return nil, fmt.Errorf("join() takes exactly one argument")
			}
			items, err := iterate(a[0])
			if err != nil {
				return nil, err
			}
			parts := make([]string, len(items))
			for i, it := range items {
				str, ok := it.(string)
				if !ok {
					return nil, fmt.Errorf("sequence item %d: expected str instance, %s found", i, typeName(it))
				}
				parts[i] = str
			}
			return strings.Join(parts, s), nil
		},
		"splitlines": simple(func(s string) Value { return pySplitlines(s) }),
		"isdigit":    simple(func(s string) Value { return allRunes(s, unicode.IsDigit) }),
		"isalpha":    simple(func(s string) Value { return allRunes(s, unicode.IsLetter) }),
		"isalnum": simple(func(s string) Value {
			return allRunes(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
		}),
		"isspace":      simple(func(s string) Value { return allRunes(s, isPySpace) }),
		"isupper":      simple(func(s string) Value { return strings.ToUpper(s) == s && strings.ToLower(s) != s }),
		"islower":      simple(func(s string) Value { return strings.ToLower(s) == s && strings.ToUpper(s) != s }),
		"removeprefix": func(s string, a []Value, _ *Dict) (Value, error) { return trimAffix(s, a, strings.TrimPrefix) },
		"removesuffix": func(s string, a []Value, _ *Dict) (Value, error) { return trimAffix(s, a, strings.TrimSuffix) },
		"format":       pyFormat,
	}
}

func allRunes(s string, f func(rune) bool) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !f(r) {
			return false
		}
	}
	return true
}

func trimAffix(s string, a []Value, f func(string, string) string) (Value, error) {
	x, has, err := strArg(a, 0, "affix")
	if err != nil || !has {
		return nil, fmt.Errorf("expected a string argument")
	}
	return f(s, x), nil
}

func affix(s string, args []Value, f func(string, string) bool) (Value, error) {
	if len(args) < 1 {
		return nil, fmt.Errorf("startswith/endswith takes at least 1 argument")
	}
	var opts []Value
	switch x := args[0].(type) {
	case string:
		opts = []Value{x}
	case Tuple:
		opts = x
	default:
		return nil, fmt.Errorf("startswith first arg must be str or a tuple of str, not %s", typeName(args[0]))
	}
	for _, o := range opts {
		p, ok := o.(string)
		if !ok {
			return nil, fmt.Errorf("tuple for startswith must only contain str, not %s", typeName(o))
		}
		if f(s, p) {
			return true, nil
		}
	}
	return false, nil
}

func pySplit(s string, args []Value, kw *Dict, right bool) (Value, error) {
	if v, ok := kw.Get("sep"); ok {
		args = append([]Value{v}, args...)
	}
	sep, has, err := strArg(args, 0, "sep")
	if err != nil {
		return nil, err
	}
	maxSplit, err := intArg(args, 1, -1)
	if v, ok := kw.Get("maxsplit"); ok {
		maxSplit, err = intArg([]Value{v}, 0, -1)
	}
	if err != nil {
		return nil, err
	}
	var parts []string
	switch {
	case has && sep == "":
		return nil, fmt.Errorf("empty separator")
	case has && maxSplit < 0:
		parts = strings.Split(s, sep)
	case has && !right:
		parts = strings.SplitN(s, sep, int(maxSplit)+1)
	case has:
		parts = rsplitN(s, sep, int(maxSplit))
	default:
		parts = splitSpace(s, int(maxSplit), right)
	}
	out := make(List, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

func rsplitN(s, sep string, n int) []string {
	var out []string
	for n > 0 {
		i := strings.LastIndex(s, sep)
		if i < 0 {
			break
		}
		out = append([]string{s[i+len(sep):]}, out...)
		s = s[:i]
		n--
	}
	return append([]string{s}, out...)
}

// splitSpace is str.split() without a separator: runs of whitespace, none empty.
func splitSpace(s string, n int, right bool) []string {
	if n < 0 {
		return strings.FieldsFunc(s, isPySpace)
	}
	var out []string
	if !right {
		for n > 0 {
			s = strings.TrimLeftFunc(s, isPySpace)
			i := strings.IndexFunc(s, isPySpace)
			if s == "" || i < 0 {
				break
			}
			out = append(out, s[:i])
			s = s[i:]
			n--
		}
		if s = strings.TrimLeftFunc(s, isPySpace); s != "" {
			out = append(out, s)
		}
		return out
	}
	for n > 0 {
		s = strings.TrimRightFunc(s, isPySpace)
		i := strings.LastIndexFunc(s, isPySpace)
		if s == "" || i < 0 {
			break
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		out = append([]string{s[i+w:]}, out...)
		s = s[:i]
		n--
	}
	if s = strings.TrimRightFunc(s, isPySpace); s != "" {
		out = append([]string{s}, out...)
	}
	return out
}

func pyReplace(s string, args []Value, _ *Dict) (Value, error) {
	if len(args) < 2 {
		return nil, fmt.Errorf("replace expected at least 2 arguments")
	}
	old, ok1 := args[0].(string)
	nw, ok2 := args[1].(string)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("replace arguments must be str")
	}
	n, err := intArg(args, 2, -1)
	if err != nil {
		return nil, err
	}
	out := strings.Replace(s, old, nw, int(n))
	if len(out) > maxOutput {
		return nil, fmt.Errorf("string exceeds %d bytes", maxOutput)
	}
	return out, nil
}

func pyFind(s string, args []Value, right, raise bool) (Value, error) {
	sub, has, err := strArg(args, 0, "find")
	if err != nil || !has {
		return nil, fmt.Errorf("find() takes a string")
	}
	i := strings.Index(s, sub)
	if right {
		i = strings.LastIndex(s, sub)
	}
	if i < 0 {
		if raise {
			return nil, fmt.Errorf("substring not found")
		}
		return int64(-1), nil
	}
	return int64(utf8.RuneCountInString(s[:i])), nil
}

func pyTitle(s string) string {
	var sb strings.Builder
	prevCased := false
	for _, r := range s {
		if unicode.IsLetter(r) {
			if prevCased {
				sb.WriteRune(unicode.ToLower(r))
			} else {
				sb.WriteRune(unicode.ToTitle(r))
			}
			prevCased = true
			continue
		}
		prevCased = false
		sb.WriteRune(r)
	}
	return sb.String()
}

func pyCapitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToTitle(r)) + strings.ToLower(s[n:])
}

func pySplitlines(s string) List {
	var out List
	for s != "" {
		i := strings.IndexAny(s, "\n\r\v\f\x1c\x1d\x1e\u0085\u2028\u2029")
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i])
		_, w := utf8.DecodeRuneInString(s[i:])
		if strings.HasPrefix(s[i:], "\r\n") {
			w = 2
		}
		s = s[i+w:]
	}
	return out
}

// pyFormat is str.format with {} / {0} / {name} fields and no format specs.
func pyFormat(s string, args []Value, kw *Dict) (Value, error) {
	var sb strings.Builder
	auto := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '{' && i+1 < len(s) && s[i+1] == '{' || c == '}' && i+1 < len(s) && s[i+1] == '}' {
			sb.WriteByte(c)
			i++
			continue
		}
		if c != '{' {
			sb.WriteByte(c)
			continue
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("single '{' encountered in format string")
		}
		field := s[i+1 : i+j]
		i += j
		var v Value
		switch {
		case field == "":
			if auto >= len(args) {
				return nil, fmt.Errorf("replacement index %d out of range", auto)
			}
			v = args[auto]
			auto++
		case field[0] >= '0' && field[0] <= '9':
			k, err := intArg([]Value{parseIntOr(field)}, 0, 0)
			if err != nil || k >= int64(len(args)) {
				return nil, fmt.Errorf("replacement index %s out of range", field)
			}
			v = args[k]
		default:
			x, ok := kw.Get(field)
			if !ok {
				return nil, fmt.Errorf("KeyError: %s", pyStrRepr(field))
			}
			v = x
		}
		sb.WriteString(toStr(v))
	}
	return sb.String(), nil
}

func parseIntOr(s string) Value {
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return s
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// percentFormat is "…" % args with %s, %d, %r, %i and %%.
func percentFormat(s string, arg Value) (Value, error) {
	args, isTuple := arg.(Tuple)
	if !isTuple {
		args = Tuple{arg}
	}
	var sb strings.Builder
	k := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			sb.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			return nil, fmt.Errorf("incomplete format")
		}
		i++
		if s[i] == '%' {
			sb.WriteByte('%')
			continue
		}
		if k >= len(args) {
			return nil, fmt.Errorf("not enough arguments for format string")
		}
		v := args[k]
		k++
		switch s[i] {
		case 's':
			sb.WriteString(toStr(v))
		case 'r':
			sb.WriteString(repr(v))
		case 'd', 'i':
			n, f, fl, ok := num(v)
			if !ok {
				return nil, fmt.Errorf("%%d format: a real number is required, not %s", typeName(v))
			}
			if fl {
				n = int64(f)
			}
			fmt.Fprintf(&sb, "%d", n)
		default:
			return nil, fmt.Errorf("unsupported format character '%c'", s[i])
		}
	}
	if k < len(args) {
		return nil, fmt.Errorf("not all arguments converted during string formatting")
	}
	return sb.String(), nil
}
