package chat

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Message is one OpenAI chat message.
type Message struct {
	Role    string
	Content string
	// Reasoning is reasoning_content; nil when absent or null (the template tells the two
	// apart from an empty string).
	Reasoning  *string
	ToolCalls  []ToolCall
	ToolCallID string
	Name       string
}

// ToolCall is one function call of an assistant message.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is the parsed argument object. When the arguments arrived as text that is not
	// JSON, Arguments is a String value and the template writes it verbatim.
	Arguments Value
}

type messageJSON struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Reasoning  *string         `json:"reasoning_content"`
	Reasoning2 *string         `json:"reasoning"` // newer vLLM's name for it
	ToolCalls  []toolCallJSON  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
}

type toolCallJSON struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments Value  `json:"arguments"`
	} `json:"function"`
}

// UnmarshalJSON reads an OpenAI message. content may be a string, null, or a list of parts
// whose text parts are joined with "\n" (as vLLM flattens them for string templates).
// Tool-call arguments may be an object or JSON text; text is parsed keeping key order.
func (m *Message) UnmarshalJSON(b []byte) error {
	var j messageJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	content, err := flattenContent(j.Content)
	if err != nil {
		return fmt.Errorf("message %s: %w", j.Role, err)
	}
	if j.Reasoning == nil {
		j.Reasoning = j.Reasoning2
	}
	*m = Message{Role: j.Role, Content: content, Reasoning: j.Reasoning, ToolCallID: j.ToolCallID, Name: j.Name}
	for _, tc := range j.ToolCalls {
		args := tc.Function.Arguments
		if args.Kind == String {
			if v, err := ParseJSON(args.Str); err == nil {
				args = v
			}
		}
		m.ToolCalls = append(m.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	return nil
}

// MarshalJSON writes the message in OpenAI form with arguments as JSON text.
func (m Message) MarshalJSON() ([]byte, error) {
	type tcFn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type tc struct {
		ID       string `json:"id,omitempty"`
		Type     string `json:"type"`
		Function tcFn   `json:"function"`
	}
	out := struct {
		Role       string  `json:"role"`
		Content    string  `json:"content"`
		Reasoning  *string `json:"reasoning_content,omitempty"`
		ToolCalls  []tc    `json:"tool_calls,omitempty"`
		ToolCallID string  `json:"tool_call_id,omitempty"`
		Name       string  `json:"name,omitempty"`
	}{Role: m.Role, Content: m.Content, Reasoning: m.Reasoning, ToolCallID: m.ToolCallID, Name: m.Name}
	for _, c := range m.ToolCalls {
		args := c.Arguments.Python()
		if c.Arguments.Kind == String {
			args = c.Arguments.Str
		}
		out.ToolCalls = append(out.ToolCalls, tc{ID: c.ID, Type: "function", Function: tcFn{Name: c.Name, Arguments: args}})
	}
	return json.Marshal(out)
}

func flattenContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither text nor a list of parts: %w", err)
	}
	var texts []string
	for _, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("content part of type %q is not supported", p.Type)
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n"), nil
}

// Equal reports whether two messages carry the same role, content and tool calls. Reasoning
// is ignored: agent runtimes may drop it when they send the history back.
func (m *Message) Equal(o *Message) bool {
	if m.Role != o.Role || m.Content != o.Content || m.ToolCallID != o.ToolCallID || m.Name != o.Name ||
		len(m.ToolCalls) != len(o.ToolCalls) {
		return false
	}
	for i := range m.ToolCalls {
		a, b := m.ToolCalls[i], o.ToolCalls[i]
		if a.Name != b.Name || a.Arguments.Python() != b.Arguments.Python() {
			return false
		}
	}
	return true
}
