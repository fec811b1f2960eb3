package chat

import "strings"

const (
	imStart = "<|im_start|>"
	imEnd   = "<|im_end|>"
)

const toolsHeader = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
	"You are provided with function signatures within <tools></tools> XML tags:\n<tools>"

const toolsFooter = "\n</tools>\n\nFor each function call, return a json object with function name and " +
	"arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n" +
	"{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n"

const qwenDefaultSystem = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

type renderer struct {
	sb    strings.Builder
	spans [][2]int
	turns []Turn
}

func (r *renderer) w(s string) { r.sb.WriteString(s) }

// begin starts a turn: writes "<|im_start|>" + role.
func (r *renderer) begin(role string, msg int) {
	r.turns = append(r.turns, Turn{Role: role, Start: r.sb.Len(), Message: msg})
	r.w(imStart + role)
}

// end writes "<|im_end|>\n" and closes the turn; for assistant turns it records the span.
func (r *renderer) end(assistantFrom int) {
	r.w(imEnd)
	if assistantFrom >= 0 {
		r.spans = append(r.spans, [2]int{assistantFrom, r.sb.Len()})
	}
	r.w("\n")
	r.turns[len(r.turns)-1].End = r.sb.Len()
}

func (r *renderer) tools(tools []Value) {
	var b []byte
	for _, t := range tools {
		b = append(b[:0], '\n')
		b = t.AppendPython(b)
		r.w(string(b))
	}
}

func (r *renderer) toolCall(tc ToolCall) {
	r.w("<tool_call>\n{\"name\": \"" + tc.Name + "\", \"arguments\": ")
	if tc.Arguments.Kind == String {
		r.w(tc.Arguments.Str)
	} else {
		r.w(tc.Arguments.Python())
	}
	r.w("}\n</tool_call>")
}

// toolMessage renders a tool message, merging consecutive ones into one user turn.
func (r *renderer) toolMessage(msgs []Message, i int) {
	if i == 0 || msgs[i-1].Role != "tool" {
		r.begin("user", i)
	}
	r.w("\n<tool_response>\n" + msgs[i].Content + "\n</tool_response>")
	if i == len(msgs)-1 || msgs[i+1].Role != "tool" {
		r.end(-1)
	}
}

// qwen3 follows Qwen3's template statement by statement.
func (r *renderer) qwen3(msgs []Message, tools []Value, opt Options) {
	if len(tools) > 0 {
		r.begin("system", 0)
		if len(msgs) > 0 && msgs[0].Role == "system" {
			r.w("\n" + msgs[0].Content + "\n\n")
		} else {
			r.w("\n")
		}
		r.w(toolsHeader)
		r.tools(tools)
		r.w(toolsFooter)
		r.turns[len(r.turns)-1].End = r.sb.Len()
	} else if len(msgs) > 0 && msgs[0].Role == "system" {
		r.begin("system", 0)
		r.w("\n" + msgs[0].Content)
		r.end(-1)
	}
	lastQuery := LastQueryIndex(msgs)
	for i, m := range msgs {
		switch {
		case m.Role == "user" || (m.Role == "system" && i > 0):
			r.begin(m.Role, i)
			r.w("\n" + m.Content)
			r.end(-1)
		case m.Role == "assistant":
			content, reasoning := splitReasoning(m)
			r.begin("assistant", i)
			r.w("\n")
			from := r.sb.Len()
			if i > lastQuery && (i == len(msgs)-1 || reasoning != "") {
				r.w("<think>\n" + strings.Trim(reasoning, "\n") + "\n</think>\n\n" + trimLeftNL(content))
			} else {
				r.w(content)
			}
			for k, tc := range m.ToolCalls {
				if k > 0 || content != "" {
					r.w("\n")
				}
				r.toolCall(tc)
			}
			r.end(from)
		case m.Role == "tool":
			r.toolMessage(msgs, i)
		}
	}
	if opt.AddGenerationPrompt {
		r.turns = append(r.turns, Turn{Role: "assistant", Start: r.sb.Len(), Message: len(msgs)})
		r.w(imStart + "assistant\n")
		if opt.EnableThinking != nil && !*opt.EnableThinking {
			r.w("<think>\n\n</think>\n\n")
		}
		r.turns[len(r.turns)-1].End = r.sb.Len()
	}
}

// LastQueryIndex returns the index of the last real user query: the last user message that
// is not a "<tool_response>…</tool_response>" wrapper (len(msgs)-1 when there is none).
// Qwen3 keeps reasoning only for assistant turns after it.
func LastQueryIndex(msgs []Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == "user" && !(strings.HasPrefix(m.Content, "<tool_response>") && strings.HasSuffix(m.Content, "</tool_response>")) {
			return i
		}
	}
	return len(msgs) - 1
}

// splitReasoning returns an assistant message's content and reasoning as Qwen3's template
// derives them: reasoning_content when present, else the part before "</think>".
func splitReasoning(m Message) (content, reasoning string) {
	content = m.Content
	if m.Reasoning != nil {
		return content, *m.Reasoning
	}
	if k := strings.LastIndex(content, "</think>"); k >= 0 {
		before := content[:strings.Index(content, "</think>")]
		content = trimLeftNL(content[k+len("</think>"):])
		before = strings.TrimRight(before, "\n")
		if j := strings.LastIndex(before, "<think>"); j >= 0 {
			before = before[j+len("<think>"):]
		}
		reasoning = trimLeftNL(before)
	}
	return content, reasoning
}

// qwen25 follows Qwen2.5's template.
func (r *renderer) qwen25(msgs []Message, tools []Value, opt Options) {
	r.begin("system", 0)
	sys := qwenDefaultSystem
	if len(msgs) > 0 && msgs[0].Role == "system" {
		sys = msgs[0].Content
	}
	if len(tools) > 0 {
		r.w("\n" + sys + "\n\n")
		r.w(toolsHeader)
		r.tools(tools)
		r.w(toolsFooter)
		r.turns[len(r.turns)-1].End = r.sb.Len()
	} else {
		r.w("\n" + sys)
		r.end(-1)
	}
	for i, m := range msgs {
		switch {
		case m.Role == "user" || (m.Role == "system" && i > 0) || (m.Role == "assistant" && len(m.ToolCalls) == 0):
			r.begin(m.Role, i)
			r.w("\n")
			from := r.sb.Len()
			r.w(m.Content)
			if m.Role == "assistant" {
				r.end(from)
			} else {
				r.end(-1)
			}
		case m.Role == "assistant":
			r.begin("assistant", i)
			from := r.sb.Len() + 1 // just after the "\n" that follows the role
			if m.Content != "" {
				r.w("\n" + m.Content)
			}
			for _, tc := range m.ToolCalls {
				r.w("\n")
				r.toolCall(tc)
			}
			r.end(from)
		case m.Role == "tool":
			r.toolMessage(msgs, i)
		}
	}
	if opt.AddGenerationPrompt {
		r.turns = append(r.turns, Turn{Role: "assistant", Start: r.sb.Len(), Message: len(msgs)})
		r.w(imStart + "assistant\n")
		r.turns[len(r.turns)-1].End = r.sb.Len()
	}
}

// trimLeftNL is Python's str.lstrip('\n'): Jinja templates call Python's string methods,
// so strip('\n') removes newlines only, never spaces or tabs.
func trimLeftNL(s string) string { return strings.TrimLeft(s, "\n") }
