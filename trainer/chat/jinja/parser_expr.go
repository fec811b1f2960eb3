package jinja

import (
	"strconv"
)

// tuple parses an expression, or a tuple when commas follow.
func (p *parser) tuple(withCond bool) (expr, error) {
	e, err := p.expression(withCond)
	if err != nil || !p.isOp(",") {
		return e, err
	}
	items := []expr{e}
	for p.skipOp(",") {
		if p.tupleEnds() {
			break
		}
		e, err := p.expression(withCond)
		if err != nil {
			return nil, err
		}
		items = append(items, e)
	}
	return &tupleExpr{items}, nil
}

func (p *parser) tupleEnds() bool {
	t := p.peek()
	return t.kind == tVarEnd || t.kind == tBlockEnd || t.kind == tEOF || t.kind == tOp && t.val == ")" ||
		t.kind == tName && (t.val == "if" || t.val == "recursive")
}

func (p *parser) expression(withCond bool) (expr, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxParseDepth {
		return nil, p.errf("expression nested too deeply")
	}
	e, err := p.or()
	if err != nil || !withCond {
		return e, err
	}
	for p.skipName("if") {
		c, err := p.or()
		if err != nil {
			return nil, err
		}
		var no expr
		if p.skipName("else") {
			if no, err = p.expression(true); err != nil {
				return nil, err
			}
		}
		e = &condExpr{cond: c, yes: e, no: no}
	}
	return e, nil
}

func (p *parser) or() (expr, error) {
	l, err := p.and()
	for err == nil && p.skipName("or") {
		var r expr
		r, err = p.and()
		l = &binExpr{op: "or", l: l, r: r}
	}
	return l, err
}

func (p *parser) and() (expr, error) {
	l, err := p.not()
	for err == nil && p.skipName("and") {
		var r expr
		r, err = p.not()
		l = &binExpr{op: "and", l: l, r: r}
	}
	return l, err
}

func (p *parser) not() (expr, error) {
	if p.skipName("not") {
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxParseDepth {
			return nil, p.errf("expression nested too deeply")
		}
		e, err := p.not()
		return &unaryExpr{op: "not", e: e}, err
	}
	return p.compare()
}

var cmpOps = map[string]bool{"==": true, "!=": true, "<": true, ">": true, "<=": true, ">=": true}

func (p *parser) compare() (expr, error) {
	first, err := p.math1()
	if err != nil {
		return nil, err
	}
	c := &cmpExpr{first: first}
	for {
		t := p.peek()
		var op string
		switch {
		case t.kind == tOp && cmpOps[t.val]:
			op = t.val
			p.next()
		case t.kind == tName && t.val == "in":
			op = "in"
			p.next()
		case t.kind == tName && t.val == "not" && p.toks[p.i+1].kind == tName && p.toks[p.i+1].val == "in":
			op = "not in"
			p.next()
			p.next()
		default:
			if len(c.ops) == 0 {
				return first, nil
			}
			return c, nil
		}
		r, err := p.math1()
		if err != nil {
			return nil, err
		}
		c.ops, c.rest = append(c.ops, op), append(c.rest, r)
	}
}

func (p *parser) binary(ops []string, sub func() (expr, error)) (expr, error) {
	l, err := sub()
	for err == nil {
		t := p.peek()
		found := ""
		for _, o := range ops {
			if t.kind == tOp && t.val == o {
				found = o
			}
		}
		if found == "" {
			break
		}
		p.next()
		var r expr
		r, err = sub()
		l = &binExpr{op: found, l: l, r: r}
	}
	return l, err
}

func (p *parser) math1() (expr, error)  { return p.binary([]string{"+", "-"}, p.concat) }
func (p *parser) concat() (expr, error) { return p.binary([]string{"~"}, p.math2) }
func (p *parser) math2() (expr, error) {
	return p.binary([]string{"*", "/", "//", "%"}, p.pow)
}
func (p *parser) pow() (expr, error) {
	return p.binary([]string{"**"}, func() (expr, error) { return p.unary(true) })
}

func (p *parser) unary(withFilter bool) (expr, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxParseDepth {
		return nil, p.errf("expression nested too deeply")
	}
	var e expr
	var err error
	switch {
	case p.skipOp("-"):
		var x expr
		x, err = p.unary(false)
		e = &unaryExpr{op: "-", e: x}
	case p.skipOp("+"):
		var x expr
		x, err = p.unary(false)
		e = &unaryExpr{op: "+", e: x}
	default:
		if e, err = p.primary(); err == nil {
			e, err = p.postfix(e)
		}
	}
	if err != nil || !withFilter {
		return e, err
	}
	return p.filterChain(e)
}

func (p *parser) primary() (expr, error) {
	t := p.next()
	switch t.kind {
	case tName:
		switch t.val {
		case "true", "True":
			return &constExpr{true}, nil
		case "false", "False":
			return &constExpr{false}, nil
		case "none", "None":
			return &constExpr{nil}, nil
		}
		return &nameExpr{t.val}, nil
	case tString:
		s := t.val
		for p.peek().kind == tString {
			s += p.next().val
		}
		return &constExpr{s}, nil
	case tInt:
		n, err := strconv.ParseInt(t.val, 10, 64)
		if err != nil {
			return nil, p.errf("integer %s out of range", t.val)
		}
		return &constExpr{n}, nil
	case tFloat:
		f, err := strconv.ParseFloat(t.val, 64)
		if err != nil {
			return nil, p.errf("bad float %s", t.val)
		}
		return &constExpr{f}, nil
	case tOp:
		switch t.val {
		case "(":
			if p.skipOp(")") {
				return &tupleExpr{}, nil
			}
			e, err := p.tuple(true)
			if err != nil {
				return nil, err
			}
			return e, p.expectOp(")")
		case "[":
			items, err := p.items("]")
			return &listExpr{items}, err
		case "{":
			return p.dict()
		}
	}
	p.i--
	return nil, p.errf("unexpected %s", describe(t))
}

func (p *parser) items(end string) ([]expr, error) {
	var items []expr
	for !p.skipOp(end) {
		if len(items) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if p.skipOp(end) {
				break
			}
		}
		e, err := p.expression(true)
		if err != nil {
			return nil, err
		}
		items = append(items, e)
	}
	return items, nil
}

func (p *parser) dict() (expr, error) {
	d := &dictExpr{}
	for !p.skipOp("}") {
		if len(d.keys) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if p.skipOp("}") {
				break
			}
		}
		k, err := p.expression(true)
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(":"); err != nil {
			return nil, err
		}
		v, err := p.expression(true)
		if err != nil {
			return nil, err
		}
		d.keys, d.vals = append(d.keys, k), append(d.vals, v)
	}
	return d, nil
}

func (p *parser) postfix(e expr) (expr, error) {
	for {
		var err error
		switch {
		case p.skipOp("."):
			t := p.next()
			switch t.kind {
			case tName:
				e = &attrExpr{obj: e, name: t.val}
			case tInt:
				n, _ := strconv.ParseInt(t.val, 10, 64)
				e = &itemExpr{obj: e, key: &constExpr{n}}
			default:
				return nil, p.errf("expected an attribute name after '.'")
			}
		case p.skipOp("["):
			e, err = p.subscript(e)
		case p.isOp("("):
			e, err = p.call(e)
		default:
			return e, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *parser) subscript(obj expr) (expr, error) {
	var parts [3]expr
	n, slice := 0, false
	for {
		if p.isOp(":") {
			p.next()
			slice = true
			n++
			if n > 2 {
				return nil, p.errf("too many ':' in a slice")
			}
			continue
		}
		if p.skipOp("]") {
			break
		}
		e, err := p.expression(true)
		if err != nil {
			return nil, err
		}
		parts[n] = e
	}
	if !slice {
		if parts[0] == nil {
			return nil, p.errf("empty subscript")
		}
		return &itemExpr{obj: obj, key: parts[0]}, nil
	}
	return &sliceExpr{obj: obj, start: parts[0], stop: parts[1], stp: parts[2]}, nil
}

func (p *parser) args() ([]expr, []kwarg, error) {
	if err := p.expectOp("("); err != nil {
		return nil, nil, err
	}
	var args []expr
	var kws []kwarg
	for !p.skipOp(")") {
		if len(args)+len(kws) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, nil, err
			}
			if p.skipOp(")") {
				break
			}
		}
		if p.peek().kind == tName && p.toks[p.i+1].kind == tOp && p.toks[p.i+1].val == "=" {
			name := p.next().val
			p.next()
			e, err := p.expression(true)
			if err != nil {
				return nil, nil, err
			}
			kws = append(kws, kwarg{name, e})
			continue
		}
		if len(kws) > 0 {
			return nil, nil, p.errf("positional argument follows keyword argument")
		}
		e, err := p.expression(true)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, e)
	}
	return args, kws, nil
}

func (p *parser) call(fn expr) (expr, error) {
	args, kws, err := p.args()
	return &callExpr{fn: fn, args: args, kwargs: kws}, err
}

func (p *parser) filterChain(e expr) (expr, error) {
	for {
		var err error
		switch {
		case p.skipOp("|"):
			e, err = p.filter(e)
		case p.skipName("is"):
			e, err = p.test(e)
		case p.isOp("("):
			e, err = p.call(e)
		default:
			return e, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// filter parses NAME[.NAME][(args)] after "|".
func (p *parser) filter(arg expr) (*filterExpr, error) {
	name, err := p.expectName()
	if err != nil {
		return nil, err
	}
	for p.skipOp(".") {
		n, err := p.expectName()
		if err != nil {
			return nil, err
		}
		name += "." + n
	}
	if _, ok := filters[name]; !ok {
		return nil, p.errf("no filter named '%s'", name)
	}
	f := &filterExpr{arg: arg, name: name}
	if p.isOp("(") {
		if f.args, f.kwargs, err = p.args(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (p *parser) test(arg expr) (expr, error) {
	neg := p.skipName("not")
	name, err := p.expectName()
	if err != nil {
		return nil, err
	}
	if _, ok := tests[name]; !ok {
		return nil, p.errf("no test named '%s'", name)
	}
	t := &testExpr{arg: arg, name: name, negate: neg}
	n := p.peek()
	switch {
	case p.isOp("("):
		args, kws, err := p.args()
		if err != nil {
			return nil, err
		}
		if len(kws) > 0 {
			return nil, p.errf("keyword arguments to tests are not supported")
		}
		t.args = args
	case n.kind == tName && n.val != "else" && n.val != "or" && n.val != "and" && n.val != "is",
		n.kind == tString, n.kind == tInt, n.kind == tFloat,
		n.kind == tOp && (n.val == "[" || n.val == "{"):
		a, err := p.primary()
		if err != nil {
			return nil, err
		}
		if a, err = p.postfix(a); err != nil {
			return nil, err
		}
		t.args = []expr{a}
	}
	return t, nil
}
