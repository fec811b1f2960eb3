package chat

import (
	"strconv"
	"strings"

	"github.com/mass-dev/mass/trainer/chat/jinja"
)

// JinjaValue converts a JSON value to the value Python's json.loads would give a template:
// integers as int, other numbers as float, objects as ordered dicts.
func JinjaValue(v Value) jinja.Value {
	switch v.Kind {
	case Null:
		return nil
	case Bool:
		return v.Bool
	case Number:
		if !strings.ContainsAny(v.Num, ".eE") {
			if n, err := strconv.ParseInt(v.Num, 10, 64); err == nil {
				return n
			}
		}
		f, _ := strconv.ParseFloat(v.Num, 64)
		return f
	case String:
		return v.Str
	case Array:
		out := make(jinja.List, len(v.Items))
		for i, x := range v.Items {
			out[i] = JinjaValue(x)
		}
		return out
	}
	d := jinja.NewDict()
	for _, m := range v.Members {
		d.Set(m.Key, JinjaValue(m.Value))
	}
	return d
}

// RawMessages converts messages as a client sent them (JSON objects, keys in order) with
// vLLM's post-processing: tool-call arguments given as JSON text become objects, and
// "reasoning" is passed as "reasoning_content".
func RawMessages(msgs []Value) jinja.List {
	out := make(jinja.List, len(msgs))
	for i, m := range msgs {
		if m.Kind != Object {
			out[i] = JinjaValue(m)
			continue
		}
		d := jinja.NewDict()
		_, hasRC := m.Get("reasoning_content")
		for _, mem := range m.Members {
			key, val := mem.Key, JinjaValue(mem.Value)
			if key == "reasoning" && !hasRC {
				key = "reasoning_content"
			}
			if key == "tool_calls" {
				val = parseToolArgs(mem.Value)
			}
			d.Set(key, val)
		}
		out[i] = d
	}
	return out
}

func parseToolArgs(calls Value) jinja.Value {
	if calls.Kind != Array {
		return JinjaValue(calls)
	}
	out := make(jinja.List, len(calls.Items))
	for i, tc := range calls.Items {
		if fn, ok := tc.Get("function"); ok && fn.Kind == Object {
			if a, ok := fn.Get("arguments"); ok && a.Kind == String {
				if parsed, err := ParseJSON(a.Str); err == nil {
					tc = withMember(tc, "function", withMember(fn, "arguments", parsed))
				}
			}
		}
		out[i] = JinjaValue(tc)
	}
	return out
}

func withMember(obj Value, key string, v Value) Value {
	c := obj
	c.Members = append([]Member(nil), obj.Members...)
	for i := range c.Members {
		if c.Members[i].Key == key {
			c.Members[i].Value = v
		}
	}
	return c
}

// JinjaMessages converts messages to the dicts an OpenAI client sends (role, content,
// reasoning_content, tool_calls with id/type/function{name, arguments}, tool_call_id, name;
// absent fields left out), arguments as objects.
func JinjaMessages(msgs []Message) jinja.List {
	out := make(jinja.List, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDict()
		d.Set("role", m.Role)
		d.Set("content", m.Content)
		if m.Reasoning != nil {
			d.Set("reasoning_content", *m.Reasoning)
		}
		if len(m.ToolCalls) > 0 {
			calls := make(jinja.List, len(m.ToolCalls))
			for k, tc := range m.ToolCalls {
				c := jinja.NewDict()
				if tc.ID != "" {
					c.Set("id", tc.ID)
				}
				c.Set("type", "function")
				fn := jinja.NewDict()
				fn.Set("name", tc.Name)
				fn.Set("arguments", JinjaValue(tc.Arguments))
				c.Set("function", fn)
				calls[k] = c
			}
			d.Set("tool_calls", calls)
		}
		if m.ToolCallID != "" {
			d.Set("tool_call_id", m.ToolCallID)
		}
		if m.Name != "" {
			d.Set("name", m.Name)
		}
		out[i] = d
	}
	return out
}
