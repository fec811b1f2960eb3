package jinja

import (
	"fmt"
	"slices"
	"strconv"
)

type parser struct {
	toks []token
	i    int
	// depth bounds expression nesting so a hostile template cannot exhaust the stack.
	depth int
}

const maxParseDepth = 200

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}

func (p *parser) errf(format string, a ...any) error {
	return fmt.Errorf("template line %d: %s", p.peek().line, fmt.Sprintf(format, a...))
}

func (p *parser) isOp(v string) bool   { t := p.peek(); return t.kind == tOp && t.val == v }
func (p *parser) isName(v string) bool { t := p.peek(); return t.kind == tName && t.val == v }

func (p *parser) skipOp(v string) bool {
	if p.isOp(v) {
		p.next()
		return true
	}
	return false
}

func (p *parser) skipName(v string) bool {
	if p.isName(v) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expectOp(v string) error {
	if !p.skipOp(v) {
		return p.errf("expected %q, got %s", v, describe(p.peek()))
	}
	return nil
}

func (p *parser) expectName() (string, error) {
	t := p.peek()
	if t.kind != tName {
		return "", p.errf("expected a name, got %s", describe(t))
	}
	p.next()
	return t.val, nil
}

func (p *parser) expectKind(k tokKind) error {
	if p.peek().kind != k {
		return p.errf("unexpected %s", describe(p.peek()))
	}
	p.next()
	return nil
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of template"
	case tBlockEnd:
		return "end of statement block"
	case tVarEnd:
		return "end of print statement"
	case tString:
		return strconv.Quote(t.val)
	}
	return "'" + t.val + "'"
}

func parse(toks []token) ([]node, error) {
	p := &parser{toks: toks}
	body, end, err := p.body()
	if err != nil {
		return nil, err
	}
	if end != "" {
		return nil, p.errf("unexpected '%s'", end)
	}
	return body, nil
}

// body parses nodes until end of input or a block tag named in ends, which it consumes
// up to the tag name and returns.
func (p *parser) body(ends ...string) ([]node, string, error) {
	var out []node
	for {
		t := p.next()
		switch t.kind {
		case tEOF:
			if len(ends) > 0 {
				return nil, "", p.errf("missing {%% %s %%}", ends[len(ends)-1])
			}
			return out, "", nil
		case tText:
			out = append(out, &textNode{t.val})
		case tVarBegin:
			e, err := p.tuple(true)
			if err != nil {
				return nil, "", err
			}
			if err := p.expectKind(tVarEnd); err != nil {
				return nil, "", err
			}
			out = append(out, &outputNode{e})
		case tBlockBegin:
			name := p.peek()
			if name.kind != tName {
				return nil, "", p.errf("expected a statement name, got %s", describe(name))
			}
			if slices.Contains(ends, name.val) {
				p.next()
				return out, name.val, nil
			}
			n, err := p.statement()
			if err != nil {
				return nil, "", err
			}
			if n != nil {
				out = append(out, n)
			}
		default:
			return nil, "", p.errf("unexpected %s", describe(t))
		}
	}
}

func (p *parser) statement() (node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxParseDepth {
		return nil, p.errf("blocks nested too deeply")
	}
	name := p.next().val
	var n node
	var err error
	switch name {
	case "if":
		n, err = p.ifStmt()
	case "for":
		n, err = p.forStmt()
	case "set":
		n, err = p.setStmt()
	case "macro":
		n, err = p.macroStmt()
	case "call":
		n, err = p.callStmt()
	case "filter":
		n, err = p.filterStmt()
	case "generation":
		n, err = p.blockStmt("endgeneration", func(b []node) node { return &generationNode{b} })
	case "break", "continue":
		n = &loopCtlNode{brk: name == "break"}
		err = p.expectKind(tBlockEnd)
	default:
		return nil, p.errf("unknown tag '%s'", name)
	}
	return n, err
}

func (p *parser) blockStmt(end string, mk func([]node) node) (node, error) {
	if err := p.expectKind(tBlockEnd); err != nil {
		return nil, err
	}
	b, _, err := p.body(end)
	if err != nil {
		return nil, err
	}
	return mk(b), p.expectKind(tBlockEnd)
}

func (p *parser) ifStmt() (node, error) {
	n := &ifNode{}
	for {
		c, err := p.tuple(true)
		if err != nil {
			return nil, err
		}
		if err := p.expectKind(tBlockEnd); err != nil {
			return nil, err
		}
		b, end, err := p.body("elif", "else", "endif")
		if err != nil {
			return nil, err
		}
		n.conds, n.bodies = append(n.conds, c), append(n.bodies, b)
		switch end {
		case "elif":
			continue
		case "else":
			if err := p.expectKind(tBlockEnd); err != nil {
				return nil, err
			}
			b, _, err := p.body("endif")
			if err != nil {
				return nil, err
			}
			n.bodies = append(n.bodies, b)
		}
		return n, p.expectKind(tBlockEnd)
	}
}

func (p *parser) targets() ([]string, error) {
	paren := p.skipOp("(")
	var names []string
	for {
		n, err := p.expectName()
		if err != nil {
			return nil, err
		}
		names = append(names, n)
		if !p.skipOp(",") || p.isName("in") || p.isOp("=") || p.isOp(")") {
			break
		}
	}
	if paren {
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
	}
	return names, nil
}

func (p *parser) forStmt() (node, error) {
	n := &forNode{}
	var err error
	if n.targets, err = p.targets(); err != nil {
		return nil, err
	}
	if !p.skipName("in") {
		return nil, p.errf("expected 'in', got %s", describe(p.peek()))
	}
	if n.iter, err = p.tuple(false); err != nil {
		return nil, err
	}
	if p.skipName("if") {
		if n.filter, err = p.expression(true); err != nil {
			return nil, err
		}
	}
	if p.isName("recursive") {
		return nil, p.errf("recursive loops are not supported")
	}
	if err := p.expectKind(tBlockEnd); err != nil {
		return nil, err
	}
	body, end, err := p.body("else", "endfor")
	if err != nil {
		return nil, err
	}
	n.body = body
	if end == "else" {
		if err := p.expectKind(tBlockEnd); err != nil {
			return nil, err
		}
		if n.els, _, err = p.body("endfor"); err != nil {
			return nil, err
		}
	}
	return n, p.expectKind(tBlockEnd)
}

func (p *parser) setStmt() (node, error) {
	n := &setNode{}
	first, err := p.expectName()
	if err != nil {
		return nil, err
	}
	n.targets = []string{first}
	if p.skipOp(".") {
		if n.attr, err = p.expectName(); err != nil {
			return nil, err
		}
	} else if p.skipOp(",") {
		more, err := p.targets()
		if err != nil {
			return nil, err
		}
		n.targets = append(n.targets, more...)
	}
	if p.skipOp("=") {
		if n.value, err = p.tuple(true); err != nil {
			return nil, err
		}
		return n, p.expectKind(tBlockEnd)
	}
	if n.attr != "" || len(n.targets) > 1 {
		return nil, p.errf("a block set assigns one name")
	}
	if err := p.expectKind(tBlockEnd); err != nil {
		return nil, err
	}
	if n.body, _, err = p.body("endset"); err != nil {
		return nil, err
	}
	return n, p.expectKind(tBlockEnd)
}

func (p *parser) macroStmt() (node, error) {
	n := &macroNode{}
	var err error
	if n.name, err = p.expectName(); err != nil {
		return nil, err
	}
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	for !p.skipOp(")") {
		if len(n.params) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		name, err := p.expectName()
		if err != nil {
			return nil, err
		}
		n.params = append(n.params, name)
		if p.skipOp("=") {
			d, err := p.expression(true)
			if err != nil {
				return nil, err
			}
			n.defaults = append(n.defaults, d)
		} else if len(n.defaults) > 0 {
			return nil, p.errf("non-default argument follows default argument")
		}
	}
	if err := p.expectKind(tBlockEnd); err != nil {
		return nil, err
	}
	if n.body, _, err = p.body("endmacro"); err != nil {
		return nil, err
	}
	return n, p.expectKind(tBlockEnd)
}

func (p *parser) callStmt() (node, error) {
	e, err := p.expression(true)
	if err != nil {
		return nil, err
	}
	c, ok := e.(*callExpr)
	if !ok {
		return nil, p.errf("expected a call")
	}
	n, err := p.blockStmt("endcall", func(b []node) node { return &callBlockNode{call: c, body: b} })
	return n, err
}

func (p *parser) filterStmt() (node, error) {
	f, err := p.filter(nil)
	if err != nil {
		return nil, err
	}
	return p.blockStmt("endfilter", func(b []node) node { return &filterBlockNode{filter: f, body: b} })
}
