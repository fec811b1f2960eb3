package chat

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/mass-dev/mass/trainer/chat/jinja"
)

// ErrNoMask reports a template whose assistant turns cannot be located: it has no
// {% generation %} blocks, and some assistant turn is not an append to the rendering of
// the conversation before it (the generation prompt), so no training text is the text the
// model generated after the prompt it saw.
var ErrNoMask = errors.New("no assistant mask")

// vars builds the variables transformers passes: messages, tools (None when absent),
// documents (None), add_generation_prompt, the special tokens and the kwargs.
func (t *Template) vars(msgs jinja.List, tools jinja.Value, opt Options, agp bool) map[string]jinja.Value {
	v := map[string]jinja.Value{}
	for k, x := range t.special {
		v[k] = x
	}
	if opt.EnableThinking != nil {
		v["enable_thinking"] = *opt.EnableThinking
	}
	for k, x := range opt.Kwargs {
		v[k] = x
	}
	v["messages"], v["tools"], v["documents"], v["add_generation_prompt"] = msgs, tools, nil, agp
	return v
}

func (t *Template) text(msgs jinja.List, tools jinja.Value, opt Options, agp bool) (*jinja.Result, error) {
	c, err := t.pick(tools != nil)
	if err != nil {
		return nil, err
	}
	return c.Render(t.vars(msgs, tools, opt, agp))
}

// RenderValues renders messages given as template values (RawMessages, JinjaMessages) with
// the engine and finds the assistant spans: from the template's {% generation %} blocks
// where it has them, else by rendering prefixes (see ErrNoMask).
func (t *Template) RenderValues(msgs jinja.List, tools jinja.Value, opt Options) (*Rendered, error) {
	full, err := t.text(msgs, tools, opt, opt.AddGenerationPrompt)
	if err != nil {
		return nil, err
	}
	r := &Rendered{Text: full.Text}
	roles := make([]string, len(msgs))
	for i, m := range msgs {
		if d, ok := m.(*jinja.Dict); ok {
			role, _ := d.Get("role")
			roles[i], _ = role.(string)
		}
	}
	if len(full.Generation) > 0 {
		err = t.generationSpans(r, roles, full.Generation)
	} else {
		err = t.prefixSpans(r, msgs, roles, tools, opt)
	}
	if err != nil {
		r.Assistant, r.Turns = nil, nil
		return r, fmt.Errorf("%w: %w", ErrNoMask, err)
	}
	return r, nil
}

// header adds the turn of the system prompt and first user message, and the context turn
// after it, when the rendering of the conversation through the first user message is a
// prefix of the text. It returns the index of the first user message (-1 without one).
func (t *Template) header(r *Rendered, prefix func(n int) (string, error), roles []string) (int, error) {
	u := -1
	for i, role := range roles {
		if role == "user" {
			u = i
			break
		}
	}
	if u < 0 {
		return -1, nil
	}
	h, err := prefix(u + 1)
	if err != nil {
		return -1, err
	}
	if !strings.HasPrefix(r.Text, h) {
		return -1, fmt.Errorf("the rendering through the first user message is not a prefix of the whole")
	}
	r.Turns = append(r.Turns, Turn{Role: "user", Start: 0, End: len(h), Message: u}, Turn{Role: "context", Start: len(h), Message: u + 1})
	return u, nil
}

func (t *Template) prefixSpans(r *Rendered, msgs jinja.List, roles []string, tools jinja.Value, opt Options) error {
	render := func(n int, agp bool) (string, error) {
		res, err := t.text(msgs[:n], tools, opt, agp)
		if err != nil {
			return "", fmt.Errorf("rendering the first %d messages: %w", n, err)
		}
		return res.Text, nil
	}
	u, err := t.header(r, func(n int) (string, error) { return render(n, false) }, roles)
	if err != nil {
		return err
	}
	segEnd := t.segmentEnds(msgs, roles)
	for i, role := range roles {
		if role != "assistant" {
			continue
		}
		p, err := render(i, true)
		if err != nil {
			return err
		}
		f, err := render(i+1, false)
		if err != nil {
			return err
		}
		within := r.Text
		if segEnd[i] < len(msgs) {
			// A later query follows: the turn must be exact in its own query segment; the
			// whole text renders it differently, so it is not masked there.
			if within, err = render(segEnd[i], false); err != nil {
				return err
			}
		}
		if !strings.HasPrefix(f, p) || !strings.HasPrefix(within, f) {
			return fmt.Errorf("assistant message %d is not an append to the generation prompt before it", i)
		}
		if segEnd[i] < len(msgs) {
			continue
		}
		end := max(len(p), len(strings.TrimRightFunc(f, unicode.IsSpace)))
		r.Assistant = append(r.Assistant, [2]int{len(p), end})
		if u >= 0 && i > u {
			closeContext(r, len(p))
			r.Turns = append(r.Turns, Turn{Role: "assistant", Start: len(p), End: len(f), Message: i},
				Turn{Role: "context", Start: len(f), Message: i + 1})
		}
	}
	closeContext(r, len(r.Text))
	return nil
}

// segmentEnds gives, for each message, the index of the next user query after it (the
// end of its query segment), or len(msgs) when the template renders earlier queries' turns
// the same once a new query follows.
func (t *Template) segmentEnds(msgs jinja.List, roles []string) []int {
	ends := make([]int, len(roles))
	next := len(roles)
	for i := len(roles) - 1; i >= 0; i-- {
		ends[i] = next
		if t.splits && roles[i] == "user" && !isToolResponse(msgs[i]) {
			next = i
		}
	}
	if !t.splits {
		for i := range ends {
			ends[i] = len(roles)
		}
	}
	return ends
}

// isToolResponse is a user message that wraps a tool result (Qwen3 does not count it as a
// query).
func isToolResponse(m jinja.Value) bool {
	d, ok := m.(*jinja.Dict)
	if !ok {
		return false
	}
	c, _ := d.Get("content")
	s, _ := c.(string)
	return strings.HasPrefix(s, "<tool_response>") && strings.HasSuffix(s, "</tool_response>")
}

// closeContext ends the open context turn at end.
func closeContext(r *Rendered, end int) {
	if n := len(r.Turns); n > 0 && r.Turns[n-1].Role == "context" {
		r.Turns[n-1].End = end
	}
}

func (t *Template) generationSpans(r *Rendered, roles []string, spans [][2]int) error {
	var asst []int
	for i, role := range roles {
		if role == "assistant" {
			asst = append(asst, i)
		}
	}
	if len(asst) != len(spans) {
		return fmt.Errorf("%d {%% generation %%} blocks for %d assistant messages", len(spans), len(asst))
	}
	r.Assistant = spans
	first := spans[0][0]
	u := -1
	for i, role := range roles {
		if role == "user" {
			u = i
			break
		}
	}
	if u >= 0 {
		r.Turns = append(r.Turns, Turn{Role: "user", Start: 0, End: first, Message: u})
	}
	for k, s := range spans {
		if u < 0 || asst[k] < u {
			continue
		}
		closeContext(r, s[0])
		r.Turns = append(r.Turns, Turn{Role: "assistant", Start: s[0], End: s[1], Message: asst[k]},
			Turn{Role: "context", Start: s[1], Message: asst[k] + 1})
	}
	closeContext(r, len(r.Text))
	return nil
}

// probeSplits renders a two-query conversation with reasoning and reports whether the
// first query's assistant turn renders differently once the second query follows.
func (t *Template) probeSplits() bool {
	reason := func(s string) *string { return &s }
	msgs := []Message{
		{Role: "user", Content: "q1"}, {Role: "assistant", Content: "a1", Reasoning: reason("r1")},
		{Role: "user", Content: "q2"}, {Role: "assistant", Content: "a2", Reasoning: reason("r2")},
	}
	whole, err1 := t.text(JinjaMessages(msgs), nil, Options{}, false)
	first, err2 := t.text(JinjaMessages(msgs[:2]), nil, Options{}, false)
	return err1 == nil && err2 == nil && !strings.HasPrefix(whole.Text, first.Text)
}
