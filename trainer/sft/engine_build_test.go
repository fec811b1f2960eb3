package sft

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/chat"
)

// modelDir writes a tokenizer_config.json with the given chat template next to the
// fixture tokenizer.
func modelDir(t *testing.T, template string) *chat.Template {
	t.Helper()
	dir := t.TempDir()
	cfg := `{"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "bos_token": null}`
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "chat_template.jinja"), []byte(template), 0o644); err != nil {
		t.Fatal(err)
	}
	tm, err := chat.LoadTemplate(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func buildWith(t *testing.T, tm *chat.Template) (*Manifest, error) {
	tok, _ := fixtures(t)
	ep := filepath.Join(t.TempDir(), "ep")
	if err := WriteSyntheticEpisode(ep, SynthSpec{EpisodeID: "ep", TaskID: "task-a", Workers: 1, Turns: 3, ResponseWords: 10, ToolWords: 6, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	return Build(context.Background(), BuildConfig{Tokenizer: tok, Template: tm, TokenizerDir: "x", Workers: 1,
		Window: WindowConfig{MaxTokens: 4096, ContextTokens: 512}}, []string{ep}, filepath.Join(t.TempDir(), "ds"))
}

// TestBuildEngineTemplates builds windows through the engine: from the {% generation %}
// blocks of trl's Qwen3.6 training template, and from prefix renders of the original.
func TestBuildEngineTemplates(t *testing.T) {
	for _, name := range []string{"qwen3_6", "qwen3_6_training"} {
		src, err := os.ReadFile(filepath.Join("../chat/testdata/templates", name+".jinja"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := buildWith(t, modelDir(t, string(src)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.Template != "jinja" || m.Total.Windows < 2 || m.Total.SupervisedTokens == 0 {
			t.Errorf("%s: manifest %+v", name, m.Total)
		}
	}
}

// TestBuildRefusesUnmaskableTemplate: a template whose assistant turns are not appends
// (it writes the message count first, so no rendering is a prefix of a longer one) is
// refused with the reason.
func TestBuildRefusesUnmaskableTemplate(t *testing.T) {
	_, err := buildWith(t, modelDir(t, "{{ messages | length }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"))
	if err == nil || !strings.Contains(err.Error(), "no assistant mask") || !strings.Contains(err.Error(), "not a prefix") {
		t.Fatalf("got %v", err)
	}
}
