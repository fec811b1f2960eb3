package jinja

import (
	"fmt"
)

// Template is a compiled template; safe for concurrent Render calls.
type Template struct {
	body []node
}

// Result is a rendering: the text and the byte spans {% generation %} blocks produced.
type Result struct {
	Text       string
	Generation [][2]int
}

// Compile parses a template source as jinja2 would with trim_blocks and lstrip_blocks.
func Compile(src string) (*Template, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	body, err := parse(toks)
	if err != nil {
		return nil, err
	}
	return &Template{body: body}, nil
}

// Render renders the template with vars as the top-level variables. Any error Python
// would raise (raise_exception included) is returned; no partial text is.
func (t *Template) Render(vars map[string]Value) (*Result, error) {
	root := newFrame(nil)
	for k, v := range vars {
		root.vars[k] = v
	}
	r := &renderer{}
	s, err := r.capture(root, t.body)
	if err == nil && len(r.bufs) != 0 {
		err = fmt.Errorf("render: unbalanced output")
	}
	if err != nil {
		if err == errBreak || err == errContinue {
			return nil, fmt.Errorf("render: %w", err)
		}
		return nil, err
	}
	return &Result{Text: s, Generation: r.spans}, nil
}
