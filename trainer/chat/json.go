package chat

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mass-dev/mass/errclass"
)

// Kind is the type of a JSON value.
type Kind uint8

// JSON value kinds.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is a JSON value that keeps object key order, so that it can be written back the way
// Python's json.dumps writes a dict loaded from the same text.
type Value struct {
	Kind    Kind
	Bool    bool
	Num     string // the literal as written
	Str     string
	Items   []Value
	Members []Member
}

// Member is one key of an object, in order.
type Member struct {
	Key   string
	Value Value
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 512

// ErrSyntax reports malformed JSON (class errclass.ErrInvalid).
var ErrSyntax = errclass.New("invalid json", errclass.ErrInvalid)

// ParseJSON parses one JSON value (surrounding whitespace allowed).
func ParseJSON(s string) (Value, error) {
	p := parser{s: s}
	p.ws()
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	p.ws()
	if p.i != len(s) {
		return Value{}, p.errf("trailing data")
	}
	return v, nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *Value) UnmarshalJSON(b []byte) error {
	x, err := ParseJSON(string(b))
	if err != nil {
		return err
	}
	*v = x
	return nil
}

// Get returns the member named key of an object.
func (v Value) Get(key string) (Value, bool) {
	for _, m := range v.Members {
		if m.Key == key {
			return m.Value, true
		}
	}
	return Value{}, false
}

type parser struct {
	s string
	i int
}

func (p *parser) errf(format string, a ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrSyntax, p.i, fmt.Sprintf(format, a...))
}

func (p *parser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, p.errf("nesting deeper than %d", maxDepth)
	}
	if p.i >= len(p.s) {
		return Value{}, p.errf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		return Value{Kind: String, Str: s}, err
	case c == 't':
		return p.lit("true", Value{Kind: Bool, Bool: true})
	case c == 'f':
		return p.lit("false", Value{Kind: Bool})
	case c == 'n':
		return p.lit("null", Value{Kind: Null})
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return Value{}, p.errf("unexpected %q", c)
	}
}

func (p *parser) lit(word string, v Value) (Value, error) {
	if !strings.HasPrefix(p.s[p.i:], word) {
		return Value{}, p.errf("bad literal")
	}
	p.i += len(word)
	return v, nil
}

func (p *parser) object(depth int) (Value, error) {
	p.i++
	v := Value{Kind: Object, Members: []Member{}}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return v, nil
	}
	for {
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return Value{}, p.errf("want object key")
		}
		k, err := p.str()
		if err != nil {
			return Value{}, err
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return Value{}, p.errf("want ':'")
		}
		p.i++
		p.ws()
		x, err := p.value(depth + 1)
		if err != nil {
			return Value{}, err
		}
		// A repeated key keeps its first position and the last value, as a Python dict does.
		dup := false
		for j := range v.Members {
			if v.Members[j].Key == k {
				v.Members[j].Value, dup = x, true
				break
			}
		}
		if !dup {
			v.Members = append(v.Members, Member{Key: k, Value: x})
		}
		p.ws()
		if p.i >= len(p.s) {
			return Value{}, p.errf("unterminated object")
		}
		if p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.s[p.i] == '}' {
			p.i++
			return v, nil
		}
		return Value{}, p.errf("want ',' or '}'")
	}
}

func (p *parser) array(depth int) (Value, error) {
	p.i++
	v := Value{Kind: Array, Items: []Value{}}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return v, nil
	}
	for {
		p.ws()
		x, err := p.value(depth + 1)
		if err != nil {
			return Value{}, err
		}
		v.Items = append(v.Items, x)
		p.ws()
		if p.i >= len(p.s) {
			return Value{}, p.errf("unterminated array")
		}
		if p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.s[p.i] == ']' {
			p.i++
			return v, nil
		}
		return Value{}, p.errf("want ',' or ']'")
	}
}

func (p *parser) number() (Value, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return Value{}, p.errf("bad number")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return Value{}, p.errf("bad fraction")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return Value{}, p.errf("bad exponent")
		}
	}
	return Value{Kind: Number, Num: p.s[start:p.i]}, nil
}

func (p *parser) str() (string, error) {
	p.i++ // opening quote
	var sb strings.Builder
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			sb.WriteString(p.s[start:p.i])
			p.i++
			return sb.String(), nil
		case c == '\\':
			sb.WriteString(p.s[start:p.i])
			if err := p.escape(&sb); err != nil {
				return "", err
			}
			start = p.i
		case c < 0x20:
			return "", p.errf("control character in string")
		case c >= utf8.RuneSelf:
			r, w := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && w == 1 {
				return "", p.errf("invalid UTF-8")
			}
			p.i += w
		default:
			p.i++
		}
	}
	return "", p.errf("unterminated string")
}

func (p *parser) escape(sb *strings.Builder) error {
	p.i++
	if p.i >= len(p.s) {
		return p.errf("unterminated escape")
	}
	c := p.s[p.i]
	p.i++
	switch c {
	case '"', '\\', '/':
		sb.WriteByte(c)
	case 'b':
		sb.WriteByte('\b')
	case 'f':
		sb.WriteByte('\f')
	case 'n':
		sb.WriteByte('\n')
	case 'r':
		sb.WriteByte('\r')
	case 't':
		sb.WriteByte('\t')
	case 'u':
		r, err := p.hex4()
		if err != nil {
			return err
		}
		if utf16.IsSurrogate(r) && strings.HasPrefix(p.s[p.i:], `\u`) {
			save := p.i
			p.i += 2
			r2, err := p.hex4()
			if err == nil && utf16.DecodeRune(r, r2) != utf8.RuneError {
				r = utf16.DecodeRune(r, r2)
			} else {
				p.i = save
			}
		}
		if utf16.IsSurrogate(r) {
			r = utf8.RuneError // a lone surrogate cannot be UTF-8 encoded
		}
		sb.WriteRune(r)
	default:
		return p.errf("bad escape \\%c", c)
	}
	return nil
}

func (p *parser) hex4() (rune, error) {
	if p.i+4 > len(p.s) {
		return 0, p.errf("short \\u escape")
	}
	n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, p.errf("bad \\u escape")
	}
	p.i += 4
	return rune(n), nil
}
