package jinja

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind uint8

const (
	tEOF tokKind = iota
	tText
	tBlockBegin
	tBlockEnd
	tVarBegin
	tVarEnd
	tName
	tString
	tInt
	tFloat
	tOp
)

type token struct {
	kind tokKind
	val  string
	line int
}

// lexer splits a template into text and tag tokens, applying jinja2's whitespace control
// with trim_blocks and lstrip_blocks on.
type lexer struct {
	src          string
	pos          int
	toks         []token
	lineStarting bool
}

// normalizeSource does what jinja2 does before lexing: every newline ("\r\n", "\r", "\n")
// becomes "\n" and one trailing newline is dropped (keep_trailing_newline is off).
func normalizeSource(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.TrimSuffix(s, "\n")
}

func lex(src string) ([]token, error) {
	l := &lexer{src: normalizeSource(src), lineStarting: true}
	for {
		done, err := l.step()
		if err != nil {
			return nil, err
		}
		if done {
			l.toks = append(l.toks, token{kind: tEOF, line: l.line(l.pos)})
			return l.toks, nil
		}
	}
}

func (l *lexer) line(pos int) int { return strings.Count(l.src[:min(pos, len(l.src))], "\n") + 1 }

func (l *lexer) errf(pos int, format string, a ...any) error {
	return fmt.Errorf("template line %d: %s", l.line(pos), fmt.Sprintf(format, a...))
}

// step lexes the text up to the next tag and the tag itself; done at the end of input.
func (l *lexer) step() (bool, error) {
	rest := l.src[l.pos:]
	open := -1
	for i := 0; i+1 < len(rest); i++ {
		if rest[i] == '{' && (rest[i+1] == '{' || rest[i+1] == '%' || rest[i+1] == '#') {
			open = i
			break
		}
	}
	if open < 0 {
		l.text(rest)
		l.pos = len(l.src)
		return true, nil
	}
	kind := rest[open+1]
	start := l.pos + open
	p := start + 2
	sign := byte(0)
	if p < len(l.src) && (l.src[p] == '-' || l.src[p] == '+') {
		sign = l.src[p]
		p++
	}
	text := rest[:open]
	switch {
	case sign == '-':
		text = strings.TrimRightFunc(text, isPySpace)
	case sign != '+' && kind != '{':
		lpos := strings.LastIndexByte(text, '\n') + 1
		if (lpos > 0 || l.lineStarting) && strings.TrimFunc(text[lpos:], isPySpace) == "" {
			text = text[:lpos]
		}
	}
	l.text(text)
	l.pos = p
	switch kind {
	case '#':
		return false, l.comment(start)
	case '%':
		return false, l.tag(tBlockBegin, start)
	default:
		return false, l.tag(tVarBegin, start)
	}
}

func (l *lexer) text(s string) {
	if s != "" {
		l.toks = append(l.toks, token{kind: tText, val: s, line: l.line(l.pos)})
	}
}

// after handles what follows a closing tag: "-" strips all whitespace, a block or comment
// end (trim_blocks) eats one newline unless the tag ends with "+".
func (l *lexer) after(sign byte, block bool) {
	from := l.pos
	switch {
	case sign == '-':
		for l.pos < len(l.src) {
			r, n := utf8.DecodeRuneInString(l.src[l.pos:])
			if !isPySpace(r) {
				break
			}
			l.pos += n
		}
	case block && sign != '+' && l.pos < len(l.src) && l.src[l.pos] == '\n':
		l.pos++
	}
	if l.pos > from {
		l.lineStarting = l.src[l.pos-1] == '\n'
	} else {
		l.lineStarting = false
	}
}

func (l *lexer) comment(start int) error {
	end := strings.Index(l.src[l.pos:], "#}")
	if end < 0 {
		return l.errf(start, "missing end of comment tag")
	}
	end += l.pos
	sign := byte(0)
	if end > l.pos && (l.src[end-1] == '-' || l.src[end-1] == '+') {
		sign = l.src[end-1]
	}
	l.pos = end + 2
	l.after(sign, true)
	return nil
}

// tag lexes the tokens of a {% %} or {{ }} tag through its end marker.
func (l *lexer) tag(begin tokKind, start int) error {
	endTok, closer := tBlockEnd, "%}"
	if begin == tVarBegin {
		endTok, closer = tVarEnd, "}}"
	}
	l.toks = append(l.toks, token{kind: begin, line: l.line(start)})
	first := len(l.toks)
	depth := 0
	for {
		for l.pos < len(l.src) {
			r, n := utf8.DecodeRuneInString(l.src[l.pos:])
			if !isPySpace(r) {
				break
			}
			l.pos += n
		}
		if l.pos >= len(l.src) {
			return l.errf(start, "unexpected end of template inside a tag")
		}
		rest := l.src[l.pos:]
		for _, sign := range []string{"-", "+", ""} {
			if sign == "+" && begin == tVarBegin {
				continue
			}
			if strings.HasPrefix(rest, sign+closer) && depth == 0 {
				l.pos += len(sign) + 2
				l.toks = append(l.toks, token{kind: endTok, line: l.line(l.pos)})
				var s byte
				if sign != "" {
					s = sign[0]
				}
				l.after(s, begin == tBlockBegin)
				if begin == tBlockBegin && len(l.toks) == first+2 && l.toks[first].kind == tName && l.toks[first].val == "raw" {
					return l.raw(start)
				}
				return nil
			}
		}
		t, err := l.exprToken()
		if err != nil {
			return err
		}
		if t.kind == tOp {
			switch t.val {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			}
		}
		l.toks = append(l.toks, t)
	}
}

// raw handles {% raw %}…{% endraw %}: the text between is output as is.
func (l *lexer) raw(start int) error {
	l.toks = l.toks[:len(l.toks)-3]
	i := l.pos
	for {
		j := strings.Index(l.src[i:], "{%")
		if j < 0 {
			return l.errf(start, "missing endraw")
		}
		j += i
		p := j + 2
		sign := byte(0)
		if p < len(l.src) && (l.src[p] == '-' || l.src[p] == '+') {
			sign = l.src[p]
			p++
		}
		body := strings.TrimLeftFunc(l.src[p:], isPySpace)
		if !strings.HasPrefix(body, "endraw") {
			i = j + 2
			continue
		}
		q := len(l.src) - len(body) + len("endraw")
		q += len(l.src[q:]) - len(strings.TrimLeftFunc(l.src[q:], isPySpace))
		var esign byte
		if q < len(l.src) && (l.src[q] == '-' || l.src[q] == '+') {
			esign = l.src[q]
			q++
		}
		if !strings.HasPrefix(l.src[q:], "%}") {
			return l.errf(j, "malformed endraw")
		}
		text := l.src[l.pos:j]
		if sign == '-' {
			text = strings.TrimRightFunc(text, isPySpace)
		}
		l.text(text)
		l.pos = q + 2
		l.after(esign, true)
		return nil
	}
}

var ops3 = []string{"//", "**", "==", "!=", ">=", "<="}

func (l *lexer) exprToken() (token, error) {
	rest := l.src[l.pos:]
	line := l.line(l.pos)
	c := rest[0]
	switch {
	case c == '_' || c < utf8.RuneSelf && unicode.IsLetter(rune(c)):
		n := 1
		for n < len(rest) && (rest[n] == '_' || rest[n] < utf8.RuneSelf && (unicode.IsLetter(rune(rest[n])) || unicode.IsDigit(rune(rest[n])))) {
			n++
		}
		l.pos += n
		return token{kind: tName, val: rest[:n], line: line}, nil
	case c >= '0' && c <= '9':
		return l.number(rest, line)
	case c == '\'' || c == '"':
		return l.str(rest, line)
	}
	for _, op := range ops3 {
		if strings.HasPrefix(rest, op) {
			l.pos += 2
			return token{kind: tOp, val: op, line: line}, nil
		}
	}
	if strings.IndexByte("+-*/%~()[]{}.,:|=<>", c) >= 0 {
		l.pos++
		return token{kind: tOp, val: string(c), line: line}, nil
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return token{}, l.errf(l.pos, "unexpected character %q", r)
}

func (l *lexer) number(rest string, line int) (token, error) {
	n := 0
	digits := func() {
		for n < len(rest) && (rest[n] >= '0' && rest[n] <= '9' || rest[n] == '_' && n > 0 && n+1 < len(rest) && rest[n+1] >= '0' && rest[n+1] <= '9') {
			n++
		}
	}
	digits()
	kind := tInt
	if n+1 < len(rest) && rest[n] == '.' && rest[n+1] >= '0' && rest[n+1] <= '9' {
		n++
		digits()
		kind = tFloat
	}
	if n < len(rest) && (rest[n] == 'e' || rest[n] == 'E') {
		m := n + 1
		if m < len(rest) && (rest[m] == '+' || rest[m] == '-') {
			m++
		}
		if m < len(rest) && rest[m] >= '0' && rest[m] <= '9' {
			n = m
			digits()
			kind = tFloat
		}
	}
	l.pos += n
	return token{kind: kind, val: strings.ReplaceAll(rest[:n], "_", ""), line: line}, nil
}

// str lexes a quoted string and decodes Python's escapes.
func (l *lexer) str(rest string, line int) (token, error) {
	q := rest[0]
	i := 1
	for i < len(rest) && rest[i] != q {
		if rest[i] == '\\' {
			i++
		}
		i++
	}
	if i >= len(rest) {
		return token{}, l.errf(l.pos, "unterminated string")
	}
	l.pos += i + 1
	s, err := unescape(rest[1:i])
	if err != nil {
		return token{}, l.errf(l.pos, "%v", err)
	}
	return token{kind: tString, val: s, line: line}, nil
}

// unescape decodes Python's unicode-escape sequences; unknown escapes stay as written.
func unescape(s string) (string, error) {
	if strings.IndexByte(s, '\\') < 0 {
		return s, nil
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'n':
			sb.WriteByte('\n')
		case 't':
			sb.WriteByte('\t')
		case 'r':
			sb.WriteByte('\r')
		case '\\', '\'', '"':
			sb.WriteByte(e)
		case '\n':
		case 'a':
			sb.WriteByte('\a')
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'v':
			sb.WriteByte('\v')
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+n >= len(s) {
				return "", fmt.Errorf("truncated \\%c escape", e)
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil || v > unicode.MaxRune {
				return "", fmt.Errorf("bad \\%c escape", e)
			}
			sb.WriteRune(rune(v))
			i += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 32)
			sb.WriteRune(rune(v))
			i = j - 1
		default:
			sb.WriteByte('\\')
			sb.WriteByte(e)
		}
	}
	return sb.String(), nil
}

// isPySpace is Python's str.isspace for one character.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}
