package chat

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Family names a chat template this package renders natively.
type Family string

// Supported template families.
const (
	Qwen3  Family = "qwen3"
	Qwen25 Family = "qwen2.5"
)

// ErrUnknownTemplate reports a chat template this package does not render. Rendering a
// template by guesswork would silently train on text the model never saw.
var ErrUnknownTemplate = errors.New("unknown chat template")

// knownTemplates maps the sha256 of a template's exact text to its family.
var knownTemplates = map[string]Family{
	// Qwen3 (Qwen3-0.6B … Qwen3-235B-A22B, hybrid thinking), as published.
	"87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5": Qwen3,
}

// Template is a recognized chat template.
type Template struct {
	Family Family
	SHA256 string
}

// LoadTemplate reads the chat template from dir/tokenizer_config.json (or
// dir/chat_template.jinja when the config has none) and identifies it.
func LoadTemplate(dir string) (*Template, error) {
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		return nil, fmt.Errorf("read chat template: %w", err)
	}
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("decode %s/tokenizer_config.json: %w", dir, err)
	}
	text, err := templateText(cfg.ChatTemplate)
	if err != nil {
		return nil, err
	}
	if text == "" {
		jb, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja"))
		if err != nil {
			return nil, fmt.Errorf("%s has no chat_template and no chat_template.jinja: %w", dir, err)
		}
		text = string(jb)
	}
	return Identify(text)
}

// templateText accepts a string or a list of {"name","template"} and returns the default one.
func templateText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var named []struct{ Name, Template string }
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", fmt.Errorf("chat_template is neither a string nor a list: %w", err)
	}
	for _, n := range named {
		if n.Name == "default" {
			return n.Template, nil
		}
	}
	return "", fmt.Errorf("chat_template list has no \"default\" entry")
}

// Identify recognizes a template text: Qwen3 by its exact hash, Qwen2.5 by its hash or by
// its characteristic markers (its tool-call block with "arguments | tojson", the default Qwen
// system prompt, and no reasoning handling).
func Identify(text string) (*Template, error) {
	sum := sha256.Sum256([]byte(text))
	h := hex.EncodeToString(sum[:])
	if f, ok := knownTemplates[h]; ok {
		return &Template{Family: f, SHA256: h}, nil
	}
	if isQwen25(text) {
		return &Template{Family: Qwen25, SHA256: h}, nil
	}
	return nil, fmt.Errorf("%w (sha256 %s): this build renders Qwen3 and Qwen2.5 templates only; "+
		"use a model whose tokenizer_config.json carries one of them", ErrUnknownTemplate, h)
}

func isQwen25(t string) bool {
	for _, m := range []string{
		"You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
		"{{- tool_call.arguments | tojson }}",
		`(message.role == "assistant" and not message.tool_calls)`,
		"<tool_response>",
	} {
		if !strings.Contains(t, m) {
			return false
		}
	}
	return !strings.Contains(t, "reasoning_content") && !strings.Contains(t, "<think>")
}

// Options are the template variables besides messages and tools.
type Options struct {
	AddGenerationPrompt bool
	// EnableThinking is nil when not given (Qwen3 then thinks).
	EnableThinking *bool
}

// Turn is one rendered <|im_start|> block: its role ("system", "user", "assistant"; merged
// tool responses render as "user") and byte range in the text.
type Turn struct {
	Role       string
	Start, End int
	// Message is the index of the (first) message the turn renders.
	Message int
}

// Rendered is a rendered conversation.
type Rendered struct {
	Text string
	// Assistant holds, for each assistant turn, the byte range from just after
	// "<|im_start|>assistant\n" through its closing "<|im_end|>".
	Assistant [][2]int
	Turns     []Turn
}

// Render renders messages and tools with the template.
func (t *Template) Render(msgs []Message, tools []Value, opt Options) (*Rendered, error) {
	for i, m := range msgs {
		switch m.Role {
		case "system", "user", "assistant", "tool":
		default:
			return nil, fmt.Errorf("message %d: role %q is not system, user, assistant or tool", i, m.Role)
		}
	}
	r := &renderer{}
	switch t.Family {
	case Qwen3:
		r.qwen3(msgs, tools, opt)
	case Qwen25:
		r.qwen25(msgs, tools, opt)
	default:
		return nil, fmt.Errorf("%w: family %q", ErrUnknownTemplate, t.Family)
	}
	return &Rendered{Text: r.sb.String(), Assistant: r.spans, Turns: r.turns}, nil
}
