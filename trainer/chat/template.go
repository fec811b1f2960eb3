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

// knownTemplates maps the sha256 of a template's text (trailing newlines removed) to its
// family. Only these exact texts are rendered.
var knownTemplates = map[string]Family{
	// Qwen3 (hybrid thinking), as published with the Qwen3 models.
	"87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5": Qwen3,
	// Qwen2.5 Instruct (default system prompt, tools in the system turn).
	"55b2f4a26ac9ee719330a61a0c39d9e538b0e9322212f048326318cff4f8674a": Qwen25,
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

// Identify recognizes a template text by its hash. Look-alike templates (Qwen2.5-Math,
// Qwen3 variants with other thinking rules) differ in details that change the rendered
// tokens, so anything but an exact match is refused.
func Identify(text string) (*Template, error) {
	sum := sha256.Sum256([]byte(strings.TrimRight(text, "\n")))
	h := hex.EncodeToString(sum[:])
	if f, ok := knownTemplates[h]; ok {
		return &Template{Family: f, SHA256: h}, nil
	}
	return nil, fmt.Errorf("%w (sha256 %s): this build renders the Qwen3 and Qwen2.5 templates only; "+
		"use a model whose tokenizer_config.json carries one of them", ErrUnknownTemplate, h)
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
