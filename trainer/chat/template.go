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

	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/trainer/chat/jinja"
)

// Family names how a template is rendered: natively (a fast path for two exact texts) or by
// the Jinja engine.
type Family string

// Template families.
const (
	Qwen3  Family = "qwen3"
	Qwen25 Family = "qwen2.5"
	// Jinja is any other template, rendered by the Jinja engine.
	Jinja Family = "jinja"
)

// ErrUnknownTemplate reports a model directory without a chat template, or a template the
// engine cannot compile (class errclass.ErrInvalid: the model is not one the trainer runs).
var ErrUnknownTemplate = errclass.New("unknown chat template", errclass.ErrInvalid)

// nativeTemplates maps the sha256 of a template's text (trailing newlines removed) to the
// native renderer that reproduces it (TestNativeAgreesWithEngine holds them to the engine).
var nativeTemplates = map[string]Family{
	// Qwen3 (hybrid thinking), as published with the Qwen3 models.
	"87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5": Qwen3,
	// Qwen2.5 Instruct (default system prompt, tools in the system turn).
	"55b2f4a26ac9ee719330a61a0c39d9e538b0e9322212f048326318cff4f8674a": Qwen25,
}

// Template is a model's chat template, compiled.
type Template struct {
	Family Family
	SHA256 string
	// compiled holds the templates by name: "" for a single template, else the names of a
	// chat_template list ("default", "tool_use", …).
	compiled map[string]*jinja.Template
	// special is the special-tokens map transformers passes (bos_token, eos_token, …); a
	// token that is null is left out, so the template sees it undefined.
	special map[string]jinja.Value
	// splits is whether assistant turns must be supervised per user query: the template
	// renders earlier queries' turns differently once a new query follows (Qwen3 drops
	// their reasoning).
	splits bool
}

// LoadTemplate reads a model directory's chat template as transformers does: the
// chat_template of tokenizer_config.json (a string or a list of {name, template}),
// overridden by chat_template.jinja when that file exists, with the special tokens of the
// same config.
func LoadTemplate(dir string) (*Template, error) {
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		return nil, fmt.Errorf("read chat template: %w", errclass.Missing(err))
	}
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("decode %s/tokenizer_config.json: %w", dir, errclass.Mark(err, errclass.ErrInvalid))
	}
	named, err := templateTexts(cfg["chat_template"])
	if err != nil {
		return nil, err
	}
	if jb, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja")); err == nil {
		named = map[string]string{"": string(jb)}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read chat_template.jinja: %w", err)
	}
	if len(named) == 0 {
		return nil, fmt.Errorf("%w: %s has no chat_template and no chat_template.jinja", ErrUnknownTemplate, dir)
	}
	t, err := newTemplate(named)
	if err != nil {
		return nil, err
	}
	t.special = specialTokens(cfg)
	t.splits = t.Family == Qwen3 || t.Family == Jinja && t.probeSplits()
	return t, nil
}

// templateTexts accepts a string or a list of {"name","template"}.
func templateTexts(raw json.RawMessage) (map[string]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return map[string]string{"": s}, nil
	}
	var list []struct{ Name, Template string }
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("chat_template is neither a string nor a list: %w", err)
	}
	out := map[string]string{}
	for _, n := range list {
		out[n.Name] = n.Template
	}
	return out, nil
}

// Identify compiles one template text.
func Identify(text string) (*Template, error) {
	return newTemplate(map[string]string{"": text})
}

func newTemplate(named map[string]string) (*Template, error) {
	t := &Template{Family: Jinja, compiled: map[string]*jinja.Template{}}
	for name, text := range named {
		c, err := jinja.Compile(text)
		if err != nil {
			return nil, fmt.Errorf("%w: template %q: %w", ErrUnknownTemplate, name, err)
		}
		t.compiled[name] = c
	}
	main := named[""]
	if len(named) > 1 || main == "" {
		main = named["default"]
	}
	sum := sha256.Sum256([]byte(strings.TrimRight(main, "\n")))
	t.SHA256 = hex.EncodeToString(sum[:])
	if f, ok := nativeTemplates[t.SHA256]; ok && len(named) == 1 {
		t.Family = f
	}
	return t, nil
}

// specialTokens is transformers' special_tokens_map: the tokens that are set.
func specialTokens(cfg map[string]json.RawMessage) map[string]jinja.Value {
	out := map[string]jinja.Value{}
	for _, k := range []string{"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"} {
		if s, ok := tokenText(cfg[k]); ok {
			out[k] = s
		}
	}
	var extra []json.RawMessage
	if json.Unmarshal(cfg["additional_special_tokens"], &extra) == nil && len(extra) > 0 {
		l := jinja.List{}
		for _, e := range extra {
			if s, ok := tokenText(e); ok {
				l = append(l, s)
			}
		}
		out["additional_special_tokens"] = l
	}
	return out
}

// tokenText reads a token given as a string or as {"content": …}; null is no token.
func tokenText(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil && len(raw) > 0 && string(raw) != "null" {
		return s, true
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != nil {
		return *obj.Content, true
	}
	return "", false
}

// pick chooses the template for a call: a named list uses "tool_use" when tools are given
// and it has one, else "default".
func (t *Template) pick(hasTools bool) (*jinja.Template, error) {
	if c, ok := t.compiled[""]; ok {
		return c, nil
	}
	if c, ok := t.compiled["tool_use"]; ok && hasTools {
		return c, nil
	}
	if c, ok := t.compiled["default"]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("%w: the chat_template list has no \"default\" entry", ErrUnknownTemplate)
}

// SplitsQueries reports whether assistant turns are supervised per user query (see splits).
func (t *Template) SplitsQueries() bool { return t.splits || t.Family == Qwen3 }
