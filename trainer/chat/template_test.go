package chat

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestIdentify(t *testing.T) {
	q25, err := os.ReadFile("testdata/qwen25_chat_template.jinja")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ChatTemplate string `json:"chat_template"`
	}
	b, err := os.ReadFile(fixtureDir + "/tokenizer_config.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		text string
		want Family
	}{
		{"qwen3", cfg.ChatTemplate, Qwen3},
		{"qwen2.5", string(q25), Qwen25},
		{"qwen3 edited", strings.Replace(cfg.ChatTemplate, "<think>\\n\\n</think>", "<think>\\n</think>", 1), Jinja},
		{"qwen2.5 without trailing newline", strings.TrimRight(string(q25), "\n"), Qwen25},
		{"qwen2.5 without default system prompt", strings.Replace(string(q25), "    {%- else %}\n        {{- '<|im_start|>system\\nYou are Qwen", "    {%- elif false %}\n        {{- '<|im_start|>system\\nYou are Qwen", 1), Jinja},
		{"llama", "{% for m in messages %}<|start_header_id|>{{ m.role }}{% endfor %}", Jinja},
		{"broken", "{% for m in messages %}", ""},
	}
	for _, tt := range tests {
		tmpl, err := Identify(tt.text)
		if tt.want == "" {
			if !errors.Is(err, ErrUnknownTemplate) {
				t.Errorf("%s: got %v, want ErrUnknownTemplate", tt.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := tmpl.Family; got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestQwen25Render checks the Qwen2.5 renderer against the template read by hand: default
// system prompt, assistant tool calls without reasoning, merged tool responses.
func TestQwen25Render(t *testing.T) {
	var msgs []Message
	in := `[{"role":"user","content":"hi"},
	{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"ls","arguments":"{\"path\": \"/w\", \"all\": true}"}}]},
	{"role":"tool","content":"a"},{"role":"tool","content":"b"},
	{"role":"assistant","content":"done"}]`
	if err := json.Unmarshal([]byte(in), &msgs); err != nil {
		t.Fatal(err)
	}
	tmpl := &Template{Family: Qwen25}
	r, err := tmpl.Render(msgs, nil, Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n" +
		"<|im_start|>user\nhi<|im_end|>\n" +
		"<|im_start|>assistant\n<tool_call>\n{\"name\": \"ls\", \"arguments\": {\"path\": \"/w\", \"all\": true}}\n</tool_call><|im_end|>\n" +
		"<|im_start|>user\n<tool_response>\na\n</tool_response>\n<tool_response>\nb\n</tool_response><|im_end|>\n" +
		"<|im_start|>assistant\ndone<|im_end|>\n<|im_start|>assistant\n"
	if r.Text != want {
		t.Fatalf("got %q\nwant %q", r.Text, want)
	}
	var spans []string
	for _, s := range r.Assistant {
		spans = append(spans, r.Text[s[0]:s[1]])
	}
	if got, want := strings.Join(spans, "|"), "<tool_call>\n{\"name\": \"ls\", \"arguments\": {\"path\": \"/w\", \"all\": true}}\n</tool_call><|im_end|>|done<|im_end|>"; got != want {
		t.Errorf("spans: got %q, want %q", got, want)
	}
}

func TestRenderRejectsUnknownRole(t *testing.T) {
	tmpl := &Template{Family: Qwen3}
	if _, err := tmpl.Render([]Message{{Role: "developer", Content: "x"}}, nil, Options{}); err == nil {
		t.Error("want error for role developer")
	}
}
