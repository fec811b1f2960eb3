package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/chat"
	"github.com/mass-dev/mass/trainer/sft"
	"github.com/mass-dev/mass/trainer/tokenizer"
	"github.com/mass-dev/mass/trainer/train"
)

// TestQwen36Folder takes a Qwen3.6-shaped model folder (a random hybrid-tiny: Gated
// DeltaNet + gated attention, with the original Qwen3.6 chat template as
// chat_template.jinja, XML tool calls) through data build — the template rendered by the
// Jinja engine, masks from prefix renders — and one LoRA step of mass-train train.
func TestQwen36Folder(t *testing.T) {
	if testing.Short() {
		t.Skip("hybrid-tiny with the full Qwen3 vocabulary (seconds)")
	}
	dir := t.TempDir()
	mdir := filepath.Join(dir, "qwen36-tiny")
	mustRun(t, "init-model", "--config", "hybrid-tiny", "--out", mdir)
	tmplText, err := os.ReadFile("../chat/testdata/templates/qwen3_6.jinja")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mdir, "chat_template.jinja"), tmplText, 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(mdir)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := chat.LoadTemplate(mdir)
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.Family != chat.Jinja {
		t.Fatalf("family %s: chat_template.jinja did not override the config's Qwen3 template", tmpl.Family)
	}

	eps := filepath.Join(dir, "episodes")
	for i, task := range []string{"task-a", "task-b"} {
		id := "ep-" + task
		if err := sft.WriteSyntheticEpisode(filepath.Join(eps, id), sft.SynthSpec{EpisodeID: id, TaskID: task, Workers: 1, Turns: 3,
			ResponseWords: 12, ToolWords: 8, Seed: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	dirs, err := sft.FindEpisodes([]string{eps})
	if err != nil {
		t.Fatal(err)
	}
	ds := filepath.Join(dir, "dataset")
	man, err := sft.Build(context.Background(), sft.BuildConfig{Tokenizer: tok, Template: tmpl, TokenizerDir: mdir, Workers: 1,
		Window: sft.WindowConfig{MaxTokens: 2048, ContextTokens: 256}, Format: sft.FormatReference}, dirs, ds)
	if err != nil {
		t.Fatal(err)
	}
	if man.Template != string(chat.Jinja) || man.Total.Windows < 4 || man.Total.SupervisedTokens == 0 {
		t.Fatalf("manifest %+v", man)
	}
	fh, err := os.Open(filepath.Join(ds, "rows.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := sft.ReadRows(fh)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built %d windows, %d supervised tokens", man.Total.Windows, man.Total.SupervisedTokens)
	var supervised strings.Builder
	for _, r := range rows {
		if r.Condition == "" {
			t.Errorf("reference row without condition: %+v", r.Task)
		}
		var ids []int32
		for _, l := range r.Labels {
			if l != sft.IgnoreIndex {
				ids = append(ids, l)
			}
		}
		s, err := tok.Decode(ids)
		if err != nil {
			t.Fatal(err)
		}
		supervised.WriteString(s)
	}
	for _, want := range []string{"<tool_call>\n<function=run_shell_command>\n<parameter=command>\n", "</think>", "<|im_end|>"} {
		if !strings.Contains(supervised.String(), want) {
			t.Errorf("supervised text lacks %q", want)
		}
	}
	if strings.Contains(supervised.String(), "<|im_start|>") {
		t.Error("supervised text holds a turn header")
	}

	t.Log("training")
	run := filepath.Join(dir, "run")
	mustRun(t, "train", "--model", mdir, "--data", ds, "--out", run, "--steps", "1", "--batch", "1", "--rank", "2", "--alpha", "4", "--seed", "1")
	if _, err := os.Stat(filepath.Join(train.CheckpointDir(run, 1), "adapter.safetensors")); err != nil {
		t.Errorf("checkpoint: %v", err)
	}
}
