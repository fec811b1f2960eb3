package chat

import (
	"fmt"

	"github.com/mass-dev/mass/trainer/chat/jinja"
)

// Options are the template variables besides messages and tools.
type Options struct {
	AddGenerationPrompt bool
	// EnableThinking is nil when not given (Qwen3 then thinks).
	EnableThinking *bool
	// Kwargs are further template variables (chat_template_kwargs).
	Kwargs map[string]jinja.Value
}

// Turn is one span of the rendering that the windows cut at: its role ("system", "user",
// "assistant"; merged tool responses render as "user"; "context" for the text between
// turns the engine path found), byte range in the text, and the index of the (first)
// message it renders.
type Turn struct {
	Role       string
	Start, End int
	Message    int
}

// Rendered is a rendered conversation.
type Rendered struct {
	Text string
	// Assistant holds, for each assistant turn, the byte range the model generates: from
	// the end of the generation prompt through its end-of-turn token.
	Assistant [][2]int
	Turns     []Turn
}

// Render renders messages and tools with the template, with the assistant spans. When the
// text renders but the assistant spans cannot be found (see ErrNoMask), it returns the
// rendering without spans and an error wrapping ErrNoMask.
func (t *Template) Render(msgs []Message, tools []Value, opt Options) (*Rendered, error) {
	for i, m := range msgs {
		switch m.Role {
		case "system", "user", "assistant", "tool":
		default:
			return nil, fmt.Errorf("message %d: role %q is not system, user, assistant or tool", i, m.Role)
		}
	}
	if len(opt.Kwargs) == 0 {
		r := &renderer{}
		switch t.Family {
		case Qwen3:
			r.qwen3(msgs, tools, opt)
			return &Rendered{Text: r.sb.String(), Assistant: r.spans, Turns: r.turns}, nil
		case Qwen25:
			r.qwen25(msgs, tools, opt)
			return &Rendered{Text: r.sb.String(), Assistant: r.spans, Turns: r.turns}, nil
		}
	}
	var jt jinja.Value
	if tools != nil {
		l := make(jinja.List, len(tools))
		for i, v := range tools {
			l[i] = JinjaValue(v)
		}
		jt = l
	}
	return t.RenderValues(JinjaMessages(msgs), jt, opt)
}
