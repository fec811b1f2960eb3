package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// qwen36Dir writes a model directory holding only tokenizer.json and a
// tokenizer_config.json whose chat_template is the Qwen3.6 template (XML tool calls).
func qwen36Dir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tmpl, err := os.ReadFile("../trainer/chat/testdata/templates/qwen3_6.jinja")
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	b, err := os.ReadFile(filepath.Join(dataFixtures, "tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["chat_template"] = string(tmpl)
	b, _ = json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(mustAbs(t, dataFixtures), "tokenizer.json"), filepath.Join(dir, "tokenizer.json")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

const toolLine = `{"messages": [{"role": "user", "content": "List files."},
 {"role": "assistant", "content": "", "reasoning_content": "Use ls.", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\": \"ls -l\", \"timeout\": 5}"}}]},
 {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
 {"role": "assistant", "content": "One file.", "reasoning_content": "Done."}],
 "tools": [{"type": "function", "function": {"name": "bash", "description": "Run bash", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}}]}`

// TestRenderChatQwen36 renders an agent turn with the Qwen3.6 template: XML tool calls,
// arguments given as JSON text arrive as an object, and the mask covers the assistant turns.
func TestRenderChatQwen36(t *testing.T) {
	dir := qwen36Dir(t)
	in := strings.ReplaceAll(toolLine, "\n", "") + "\n"
	lines := jsonLines(t, runData(t, []byte(in), "render-chat", "--tokenizer", dir))
	if len(lines) != 1 {
		t.Fatalf("got %d lines", len(lines))
	}
	var out struct {
		Text          string  `json:"text"`
		IDs           []int32 `json:"ids"`
		AssistantMask []int   `json:"assistant_mask"`
	}
	b, _ := json.Marshal(lines[0])
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<tool_call>\n<function=bash>\n<parameter=cmd>\nls -l\n</parameter>\n<parameter=timeout>\n5\n</parameter>\n</function>\n</tool_call>", "<think>\nDone.\n</think>"} {
		if !strings.Contains(out.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, out.Text)
		}
	}
	if len(out.AssistantMask) != len(out.IDs) || len(out.IDs) == 0 {
		t.Fatalf("mask %d, ids %d", len(out.AssistantMask), len(out.IDs))
	}
	n := 0
	for _, m := range out.AssistantMask {
		n += m
	}
	if n == 0 || n == len(out.IDs) {
		t.Errorf("%d of %d tokens masked", n, len(out.IDs))
	}
}

// TestRenderChatRefusals: a line the template raises on stops the run and names the line;
// a line whose turns cannot be masked still prints its text, with the reason.
func TestRenderChatRefusals(t *testing.T) {
	dir := qwen36Dir(t)
	in := `{"messages": [{"role": "user", "content": "hi"}]}` + "\n" +
		`{"messages": [{"role": "narrator", "content": "x"}]}` + "\n"
	app := App("test")
	var out, errb bytes.Buffer
	app.Reader, app.Writer, app.ErrWriter = strings.NewReader(in), &out, &errb
	err := app.Run([]string{"massctl", "data", "render-chat", "--tokenizer", dir})
	if err == nil || !strings.Contains(err.Error(), "stdin line 2:") || !strings.Contains(err.Error(), "template raised") {
		t.Fatalf("got %v", err)
	}
	if lines := jsonLines(t, out.Bytes()); len(lines) != 1 {
		t.Errorf("got %d lines before the refusal, want 1", len(lines))
	}

	// A template that writes the message count first never appends: no mask, text printed.
	odd := qwen36Dir(t)
	cfg := `{"eos_token": "<|im_end|>", "chat_template": "{{ messages | length }}{% for m in messages %}[{{ m.content }}]{% endfor %}"}`
	if err := os.WriteFile(filepath.Join(odd, "tokenizer_config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	line := `{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "hello"}]}` + "\n"
	lines := jsonLines(t, runData(t, []byte(line), "render-chat", "--tokenizer", odd))
	if len(lines) != 1 || string(lines[0]["assistant_mask"]) != "null" || !strings.Contains(string(lines[0]["mask_error"]), "no assistant mask") ||
		string(lines[0]["text"]) != `"2[q][hello]"` {
		t.Errorf("got %v", lines)
	}
}
