package train

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/optim"
	"github.com/mass-dev/mass/trainer/refbackend"
	"github.com/mass-dev/mass/trainer/sft"
)

var backends = map[string]trainer.Factory{refbackend.Name: refbackend.New}

// childEnv makes the test binary act as a training process that the parent
// kills with SIGKILL.
const childEnv = "MASS_TRAIN_TEST_CHILD"

func TestMain(m *testing.M) {
	if p := os.Getenv(childEnv); p != "" {
		var cfg Config
		b, _ := os.ReadFile(p)
		if err := json.Unmarshal(b, &cfg); err != nil {
			os.Exit(3)
		}
		// The child stops before it logs step 13 and waits for the parent's SIGKILL,
		// so the kill lands between checkpoints however fast the machine is.
		hold := func(r Record) {
			if r.Step >= 13 && r.Loss != nil {
				time.Sleep(time.Hour)
			}
		}
		if _, err := Run(context.Background(), cfg, Options{Backends: backends, OnRecord: hold}); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func writeRows(t *testing.T, path string, rows []sft.Row) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sft.WriteRows(f, rows); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// toySetup writes a micro model, toy train/val rows and returns a config.
func toySetup(t *testing.T, steps int) Config {
	t.Helper()
	dir := t.TempDir()
	mc, err := model.Preset("micro")
	if err != nil {
		t.Fatal(err)
	}
	if err := model.NewRandom(mc, 1).Save(filepath.Join(dir, "model"), "F32", 0); err != nil {
		t.Fatal(err)
	}
	tr, err := ToyRows(256, 24, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	va, err := ToyRows(32, 24, 16, 2)
	if err != nil {
		t.Fatal(err)
	}
	writeRows(t, filepath.Join(dir, "train.jsonl"), tr)
	writeRows(t, filepath.Join(dir, "val.jsonl"), va)
	oc := optim.DefaultConfig(steps)
	oc.LR, oc.Warmup = 1e-2, 10
	return Config{Model: filepath.Join(dir, "model"), Data: filepath.Join(dir, "train.jsonl"), Val: filepath.Join(dir, "val.jsonl"),
		Out: filepath.Join(dir, "run"), Backend: refbackend.Name, Steps: steps, Batch: 4, Accum: 1, ValEvery: 50, CkptEvery: 50, Seed: 7,
		LoRA: lora.Config{Rank: 8, Alpha: 16, Dropout: 0, Targets: lora.Modules}, Optim: oc}
}

// ValThreshold is the validation loss the 200-step toy run must reach; an
// untrained micro model starts above 7 (ln 256 ≈ 5.5 plus a random head).
const ValThreshold = 0.5

func TestToyRun200Steps(t *testing.T) {
	if testing.Short() {
		t.Skip("200-step run skipped in -short")
	}
	cfg := toySetup(t, 200)
	res, err := Run(context.Background(), cfg, Options{Backends: backends})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ReadMetrics(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	var vals []float64
	for _, r := range recs {
		if r.ValLoss != nil {
			vals = append(vals, *r.ValLoss)
		}
	}
	t.Logf("validation losses every 50 steps: %v; best %.4f at step %d; processed supervised tokens %d",
		vals, res.BestValLoss, res.BestStep, res.ProcessedTokens)
	if got, want := res.Steps, 200; got != want {
		t.Errorf("steps = %d, want %d", got, want)
	}
	if res.BestValLoss >= ValThreshold {
		t.Errorf("best validation loss %.4f, want < %v", res.BestValLoss, ValThreshold)
	}
	if got, want := res.ProcessedTokens, int64(200*4*21); got != want {
		t.Errorf("processed supervised tokens = %d, want %d", got, want)
	}
	if _, err := os.Stat(filepath.Join(BestDir(cfg.Out), "adapter.safetensors")); err != nil {
		t.Errorf("best adapter missing: %v", err)
	}
}

func stepLosses(t *testing.T, out string) []float64 {
	t.Helper()
	recs, err := ReadMetrics(out)
	if err != nil {
		t.Fatal(err)
	}
	var ls []float64
	for _, r := range recs {
		if r.Loss != nil {
			if r.Step != len(ls)+1 {
				t.Fatalf("metrics step %d after %d steps", r.Step, len(ls))
			}
			ls = append(ls, *r.Loss)
		}
	}
	return ls
}

// TestResumeAfterSIGKILL kills a training process with SIGKILL after its
// first checkpoint, resumes it, and requires the loss curve to equal an
// uninterrupted run's bit for bit (fixed seed, deterministic backend, the
// sampler fast-forwarded, dropout masks derived from the step).
func TestResumeAfterSIGKILL(t *testing.T) {
	const steps = 30
	cfg := toySetup(t, steps)
	cfg.CkptEvery, cfg.ValEvery, cfg.LoRA.Dropout, cfg.Keep = 10, 0, 0.1, 2

	ref := cfg
	ref.Out = cfg.Out + "-ref"
	if _, err := Run(context.Background(), ref, Options{Backends: backends}); err != nil {
		t.Fatal(err)
	}
	want := stepLosses(t, ref.Out)

	cp := filepath.Join(t.TempDir(), "cfg.json")
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+cp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	// Kill between checkpoints: after step 10's checkpoint and at least two
	// more logged steps, so the resumed run must drop and redo those steps.
	for {
		b, _ := os.ReadFile(filepath.Join(cfg.Out, "metrics.jsonl"))
		if _, err := os.Stat(CheckpointDir(cfg.Out, 10)); err == nil && bytes.Count(b, []byte("\n")) >= 12 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("child wrote no checkpoint")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killedAt := len(stepLosses(t, cfg.Out))
	if killedAt >= steps {
		t.Fatalf("child finished all %d steps before the kill; nothing was tested", steps)
	}
	res, err := Run(context.Background(), cfg, Options{Backends: backends})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resumed {
		t.Fatal("second run did not resume")
	}
	t.Logf("killed after %d logged steps; resumed from checkpoint step %d", killedAt, res.ResumedFrom)
	if m, _ := filepath.Glob(filepath.Join(cfg.Out, "checkpoints", "step-*")); len(m) != 2 {
		t.Errorf("checkpoints kept: %v, want the newest 2", m)
	}
	got := stepLosses(t, cfg.Out)
	if len(got) != len(want) {
		t.Fatalf("resumed run logged %d steps, want %d", len(got), len(want))
	}
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Errorf("step %d loss %.17g, uninterrupted %.17g", i+1, got[i], want[i])
		}
	}
	// The exposure record of the resumed run equals the uninterrupted one's:
	// the redone steps' rows were dropped, never duplicated.
	ge, err1 := ReadExposure(cfg.Out)
	we, err2 := ReadExposure(ref.Out)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(ge, we) {
		t.Errorf("exposure after resume (%d rows, %v) differs from the uninterrupted run's (%d rows, %v)", len(ge), err1, len(we), err2)
	}
}

func TestEvaluateMatchesDefinition(t *testing.T) {
	cfg := toySetup(t, 1)
	m, err := model.Load(cfg.Model)
	if err != nil {
		t.Fatal(err)
	}
	a, err := lora.New(cfg.LoRA, m.Config, 1)
	if err != nil {
		t.Fatal(err)
	}
	be, err := refbackend.New(m, a)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	rows, err := ToyRows(3, 10, 16, 5)
	if err != nil {
		t.Fatal(err)
	}
	rows[1].Labels = make([]int32, len(rows[1].InputIDs))
	for i := range rows[1].Labels {
		rows[1].Labels[i] = sft.IgnoreIndex
	}
	res, err := Evaluate(context.Background(), be, rows)
	if err != nil {
		t.Fatal(err)
	}
	l0, err := be.Loss(context.Background(), []trainer.Window{Window(rows[0])})
	if err != nil {
		t.Fatal(err)
	}
	l2, err := be.Loss(context.Background(), []trainer.Window{Window(rows[2])})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Loss, (l0[0].Loss+l2[0].Loss)/2; got != want {
		t.Errorf("loss = %v, want %v", got, want)
	}
	if got, want := res.Windows, 2; got != want {
		t.Errorf("windows = %d, want %d", got, want)
	}
	if got, want := res.SupervisedTokens, 2*7; got != want {
		t.Errorf("supervised tokens = %d, want %d", got, want)
	}
}

// TestAccumulationEqualsBatch: two micro-batches of one window accumulate to
// the same update as one batch of two (dropout off, same sampler order).
func TestAccumulationEqualsBatch(t *testing.T) {
	a := toySetup(t, 5)
	a.CkptEvery, a.ValEvery, a.Batch, a.Accum = 0, 0, 2, 1
	b := a
	b.Out, b.Batch, b.Accum = a.Out+"-accum", 1, 2
	for _, c := range []Config{a, b} {
		if _, err := Run(context.Background(), c, Options{Backends: backends}); err != nil {
			t.Fatal(err)
		}
	}
	got, want := stepLosses(t, b.Out), stepLosses(t, a.Out)
	if len(got) != a.Steps || len(want) != a.Steps {
		t.Fatalf("logged %d accumulated and %d batched steps, want %d each", len(got), len(want), a.Steps)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("step %d: accumulated loss %.17g, batched %.17g", i+1, got[i], want[i])
		}
	}
}

func TestReadRowsFromDatasetFolder(t *testing.T) {
	dir := t.TempDir()
	rows, _ := ToyRows(5, 8, 8, 1)
	writeRows(t, filepath.Join(dir, "rows.jsonl"), rows)
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{}`), 0o644)
	got, err := ReadRows(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[4].InputIDs[7] != rows[4].InputIDs[7] {
		t.Errorf("read %d rows, want 5 equal to the written ones", len(got))
	}
	if _, err := ReadRows(t.TempDir()); err == nil {
		t.Error("empty folder accepted")
	}
}
