package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/chat"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/sft"
	"github.com/mass-dev/mass/trainer/tokenizer"
	"github.com/mass-dev/mass/trainer/train"
)

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// TestTrainToyRun trains a micro model for 4 steps and checks what the run
// printed and left in its folder.
func TestTrainToyRun(t *testing.T) {
	f := newToy(t)
	run, recs := f.trainToy(t)

	// One record per step, and a validation after steps 2 and 4.
	type kind struct {
		step int
		val  bool
	}
	var got []kind
	minVal, bestStep := math.Inf(1), 0
	var lastLoss float64
	for _, r := range recs {
		got = append(got, kind{r.Step, r.ValLoss != nil})
		if r.Steps != 4 {
			t.Errorf("record %+v: steps %d, want 4", r, r.Steps)
		}
		switch {
		case r.ValLoss != nil:
			if !finite(*r.ValLoss) || *r.ValLoss <= 0 {
				t.Errorf("step %d: val_loss %v", r.Step, *r.ValLoss)
			}
			if *r.ValLoss < minVal {
				minVal, bestStep = *r.ValLoss, r.Step
			}
		case r.Loss != nil:
			if !finite(*r.Loss) || *r.Loss <= 0 {
				t.Errorf("step %d: loss %v", r.Step, *r.Loss)
			}
			if got, want := r.ProcessedTokens, int64(r.Step*2*toySup); got != want {
				t.Errorf("step %d: processed tokens %d, want %d (2 windows of %d supervised tokens a step)", r.Step, got, want, toySup)
			}
			if got, want := r.LR, 1e-2; r.Step == 1 && got != want {
				t.Errorf("step 1: lr %v, want %v without warmup", got, want)
			}
			lastLoss = *r.Loss
		default:
			t.Errorf("record %+v has neither loss nor val_loss", r)
		}
	}
	if want := []kind{{1, false}, {2, false}, {2, true}, {3, false}, {4, false}, {4, true}}; !slices.Equal(got, want) {
		t.Fatalf("records (step, validation) %v, want %v", got, want)
	}

	metrics, err := train.ReadMetrics(run)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(metrics), len(recs); got != want {
		t.Errorf("metrics.jsonl holds %d records, stdout printed %d", got, want)
	}

	var cfg train.Config
	readJSON(t, filepath.Join(run, "run.json"), &cfg)
	if cfg.Model != f.model || cfg.Steps != 4 || cfg.Batch != 2 || cfg.Seed != 7 || cfg.LoRA.Rank != 4 || cfg.LoRA.Alpha != 8 ||
		!slices.Equal(cfg.LoRA.Targets, lora.Modules) || cfg.Optim.LR != 1e-2 || cfg.Optim.TotalSteps != 4 {
		t.Errorf("run.json %+v does not record the flags", cfg)
	}
	var res train.Result
	readJSON(t, filepath.Join(run, "result.json"), &res)
	if res.Steps != 4 || res.FinalLoss != lastLoss || res.BestValLoss != minVal || res.BestStep != bestStep ||
		res.ProcessedTokens != 4*2*toySup || res.Resumed {
		t.Errorf("result.json %+v, want 4 steps, final loss %v, best val %v at step %d, %d tokens", res, lastLoss, minVal, bestStep, 4*2*toySup)
	}
	var best struct {
		Step    int     `json:"step"`
		ValLoss float64 `json:"val_loss"`
	}
	readJSON(t, filepath.Join(train.BestDir(run), "best.json"), &best)
	if best.Step != bestStep || best.ValLoss != minVal {
		t.Errorf("best.json %+v, want step %d val %v", best, bestStep, minVal)
	}
	latest, err := os.ReadFile(filepath.Join(run, "checkpoints", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(latest)), filepath.Base(train.CheckpointDir(run, 4)); got != want {
		t.Errorf("checkpoints/latest = %q, want %q", got, want)
	}
	for _, step := range []int{2, 4} {
		for _, name := range []string{"adapter.safetensors", "optimizer.safetensors", "state.json"} {
			if _, err := os.Stat(filepath.Join(train.CheckpointDir(run, step), name)); err != nil {
				t.Errorf("checkpoint of step %d: %v", step, err)
			}
		}
	}

	// The same command again finds the run finished: no step runs, the result says resumed.
	stdout, stderr := mustRun(t, f.trainArgs(run)...)
	if stdout != "" {
		t.Errorf("rerun of a finished run printed records:\n%s", stdout)
	}
	if !strings.Contains(stderr, `"resumed":true,"resumed_from":4`) {
		t.Errorf("rerun stderr %q, want a result resumed from step 4", stderr)
	}
	// Other settings in the same folder are refused.
	args := f.trainArgs(run)
	args[slices.Index(args, "--lr")+1] = "2e-2"
	if _, _, err := runApp(args...); err == nil || !strings.Contains(err.Error(), run+" was started with different settings; use a new --out or the same flags") {
		t.Errorf("train with another --lr in the same folder: error %v", err)
	}
}

// TestTrainProgressText checks the progress a person sees without --json-progress:
// nothing on stdout, step and validation lines on stderr that match metrics.jsonl.
func TestTrainProgressText(t *testing.T) {
	f := newToy(t)
	run := filepath.Join(f.dir, "run")
	stdout, stderr := mustRun(t, "train", "--model", f.model, "--data", f.train, "--val", f.val, "--out", run,
		"--steps", "2", "--batch", "2", "--rank", "4", "--alpha", "8", "--dropout", "0", "--val-every", "2")
	if stdout != "" {
		t.Errorf("stdout %q, want nothing", stdout)
	}
	metrics, err := train.ReadMetrics(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(metrics) != 3 || metrics[2].ValLoss == nil {
		t.Fatalf("metrics %+v, want 2 steps and a validation", metrics)
	}
	for _, want := range []string{
		fmt.Sprintf("step 1/2  loss %.4f  lr ", *metrics[0].Loss),
		fmt.Sprintf("step 2/2  loss %.4f  lr ", *metrics[1].Loss),
		fmt.Sprintf("\nstep 2/2  val_loss %.4f\n", *metrics[2].ValLoss),
		fmt.Sprintf(`done: {"steps":2,"final_loss":%v,`, *metrics[1].Loss),
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestTrainTokenizedDataset runs init-model's tiny preset, whose folder carries the
// Qwen3 tokenizer, on a dataset built with that tokenizer from a synthetic
// episode: one training step, then eval over the dataset folder.
func TestTrainTokenizedDataset(t *testing.T) {
	if testing.Short() {
		t.Skip("tiny model with the full Qwen3 vocabulary (seconds)")
	}
	dir := t.TempDir()
	mdir := filepath.Join(dir, "tiny")
	mustRun(t, "init-model", "--config", "tiny", "--out", mdir)
	tok, err := tokenizer.Load(mdir)
	if err != nil {
		t.Fatalf("init-model's tokenizer: %v", err)
	}
	checkEncodeFixtures(t, tok, "../tokenizer/testdata/encode.jsonl")
	tmpl, err := chat.LoadTemplate(mdir)
	if err != nil {
		t.Fatalf("init-model's chat template: %v", err)
	}

	ep := filepath.Join(dir, "episodes", "ep-1")
	if err := sft.WriteSyntheticEpisode(ep, sft.SynthSpec{EpisodeID: "ep-1", TaskID: "task-a", Workers: 1, Turns: 2, ResponseWords: 16, ToolWords: 8, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	ds := filepath.Join(dir, "dataset")
	man, err := sft.Build(context.Background(), sft.BuildConfig{Tokenizer: tok, Template: tmpl, TokenizerDir: mdir, Workers: 1,
		Window: sft.WindowConfig{MaxTokens: 512, ContextTokens: 64}}, []string{ep}, ds)
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := sft.ReadDataset(ds)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rows), 2; got != want {
		t.Fatalf("dataset windows %d, want %d (orchestrator and worker)", got, want)
	}

	run := filepath.Join(dir, "run")
	stdout, _ := mustRun(t, "train", "--model", mdir, "--data", ds, "--out", run, "--steps", "1", "--rank", "2", "--alpha", "4",
		"--targets", "q_proj,v_proj", "--json-progress")
	recs := parseRecords(t, stdout)
	if len(recs) != 1 || recs[0].Step != 1 || recs[0].Loss == nil || !finite(*recs[0].Loss) {
		t.Fatalf("progress %s, want one finite step", stdout)
	}
	// The default step is train.DefaultAccum (3) windows drawn with replacement.
	a, b := int64(rows[0].NLossTokens), int64(rows[1].NLossTokens)
	if got := recs[0].ProcessedTokens; got != 3*a && got != 2*a+b && got != a+2*b && got != 3*b {
		t.Errorf("step 1 processed %d supervised tokens, want three windows' (each %d or %d)", got, a, b)
	}
	if _, err := os.Stat(filepath.Join(train.CheckpointDir(run, 1), "adapter.safetensors")); err != nil {
		t.Errorf("final checkpoint: %v", err)
	}

	res := evalJSON(t, "--model", mdir, "--data", ds)
	if res.Windows != man.Total.Windows || int64(res.SupervisedTokens) != man.Total.SupervisedTokens || res.Skipped != 0 {
		t.Errorf("eval %+v, want the manifest's %d windows and %d supervised tokens", res, man.Total.Windows, man.Total.SupervisedTokens)
	}
}

// checkEncodeFixtures holds tok to the Hugging Face ids of encode.jsonl.
func checkEncodeFixtures(t *testing.T, tok *tokenizer.Tokenizer, path string) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var c struct {
			Text string  `json:"text"`
			IDs  []int32 `json:"ids"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if got := tok.Encode(c.Text); !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q) = %v, want %v", c.Text, got, c.IDs)
		}
		n++
	}
	if err := sc.Err(); err != nil || n == 0 {
		t.Fatalf("read %s: %d cases, %v", path, n, err)
	}
}

// TestTrainPaperDefaults: a run given no recipe flags records the paper's
// recipe in run.json — AdamW betas (0.9, 0.95), 3 windows per step, lr 3e-5,
// 5 warmup steps, cosine to 0.1×, clip 1.0, checkpoint every 50 steps,
// validate every 150 — and processes three windows in its one step.
func TestTrainPaperDefaults(t *testing.T) {
	f := newToy(t)
	run := filepath.Join(f.dir, "run")
	stdout, _ := mustRun(t, "train", "--model", f.model, "--data", f.train, "--out", run, "--steps", "1",
		"--rank", "4", "--alpha", "8", "--json-progress")
	b, err := os.ReadFile(filepath.Join(run, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg train.Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	o := cfg.Optim
	got := []float64{o.Beta1, o.Beta2, float64(cfg.Batch * cfg.Accum), o.LR, float64(o.Warmup), o.Floor, o.Clip, float64(cfg.CkptEvery), float64(cfg.ValEvery)}
	want := []float64{0.9, 0.95, 3, 3e-5, 5, 0.1, 1, 50, 150}
	if !slices.Equal(got, want) {
		t.Errorf("run.json recipe (beta1, beta2, windows/step, lr, warmup, floor, clip, ckpt, val) = %v, want %v", got, want)
	}
	recs := parseRecords(t, stdout)
	if len(recs) != 1 || recs[0].ProcessedTokens != 3*toySup {
		t.Errorf("records %+v, want one step over 3 windows (%d supervised tokens)", recs, 3*toySup)
	}
}
