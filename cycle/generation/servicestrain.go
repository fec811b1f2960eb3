package generation

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mass-dev/mass/agents/eligibility"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/generationfmt"
	"github.com/mass-dev/mass/trainer/chat"
	"github.com/mass-dev/mass/trainer/sft"
	"github.com/mass-dev/mass/trainer/tokenizer"
	"github.com/mass-dev/mass/trainer/train"
	"github.com/mass-dev/mass/trainer/trainflags"
	"github.com/mass-dev/mass/trainer/trainjob"
)

// svcDatasets renders the selected episodes with the parent's tokenizer:
// datasets/<name> (train) and datasets/<name>-val.
type svcDatasets struct {
	l   datadir.Layout
	dry bool
}

func (d svcDatasets) Build(ctx context.Context, r DatasetRequest) (Dataset, error) {
	tdir := r.Tokenizer
	if fi, err := os.Stat(tdir); err == nil && !fi.IsDir() {
		tdir = filepath.Dir(tdir)
	}
	if tdir == "" {
		return Dataset{}, fmt.Errorf("the parent model has no tokenizer: set tokenizer: in its massd.yaml entry")
	}
	tok, err := tokenizer.Load(tdir)
	if err != nil {
		return Dataset{}, err
	}
	tmpl, err := chat.LoadTemplate(tdir)
	if err != nil {
		return Dataset{}, err
	}
	cfg := sft.BuildConfig{Tokenizer: tok, Template: tmpl, TokenizerDir: tdir, Force: true, Strict: !r.Lenient,
		Window:  renderWindow(r),
		Dataset: eligibility.Dataset{DryRun: d.dry}}
	out := Dataset{Dir: d.l.Dataset(r.Name), ByTaskRole: map[string]int64{}}
	for _, set := range []struct {
		dir string
		ids []string
	}{{out.Dir, r.Train}, {d.l.Dataset(r.Name + "-val"), r.Val}} {
		if len(set.ids) == 0 {
			continue
		}
		dirs := make([]string, len(set.ids))
		for i, id := range set.ids {
			dirs[i] = d.l.Episode(id)
		}
		m, err := sft.Build(ctx, cfg, dirs, set.dir)
		if err != nil {
			return Dataset{}, fmt.Errorf("build %s: %w", filepath.Base(set.dir), err)
		}
		out.StoredSupervised += m.Total.SupervisedTokens
		out.Empty = append(out.Empty, m.EmptyEpisodes...)
		for task, tc := range m.ByTask {
			for role, c := range tc.ByRole {
				out.ByTaskRole[task+"/"+role] += c.SupervisedTokens
			}
		}
		if set.dir != out.Dir {
			out.Val = set.dir
		}
	}
	return out, nil
}

// renderWindow is the request's window, the defaults where it sets none.
func renderWindow(r DatasetRequest) sft.WindowConfig {
	w := sft.DefaultWindowConfig()
	if r.Window > 0 {
		w.MaxTokens = r.Window
	}
	if r.ContextOverlap > 0 {
		w.ContextTokens = r.ContextOverlap
	}
	return w
}

// svcTrainer runs mass-train on the dataset with the recipe's knobs.
type svcTrainer struct {
	r   trainjob.Runner
	log *slog.Logger
}

func (t svcTrainer) Train(ctx context.Context, r TrainRequest) (generationfmt.Training, error) {
	if r.Weights == "" {
		return generationfmt.Training{}, fmt.Errorf("the parent model has no weights: set weights: in its massd.yaml entry")
	}
	args := []string{"train", "--json-progress", "--model", r.Weights, "--data", filepath.Join(r.Dataset, "rows.jsonl"), "--out", r.Out}
	if r.Val != "" {
		args = append(args, "--val", filepath.Join(r.Val, "rows.jsonl"))
	}
	if r.Steps > 0 {
		args = append(args, trainflags.Arg("steps", r.Steps)...)
	}
	args = append(args, r.Recipe.Args()...)
	if err := trainjob.Run(ctx, t.r, t.log, r.Out, args...); err != nil {
		return generationfmt.Training{}, err
	}
	var res train.Result
	b, err := os.ReadFile(filepath.Join(r.Out, "result.json"))
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil {
		return generationfmt.Training{}, fmt.Errorf("read run result: %w", err)
	}
	// Adapter names the run and its checkpoint: <run>/best, or <run>/latest
	// when the run had no validation set.
	adapter := train.BestDir(r.Out)
	if res.BestStep == 0 {
		adapter = filepath.Join(r.Out, "latest")
	}
	return generationfmt.Training{Adapter: adapter, BestStep: res.BestStep, BestValLoss: res.BestValLoss, Steps: res.Steps,
		ProcessedSupervised: res.ProcessedTokens}, nil
}

// svcExporter writes the PEFT adapter and the merged model (shard by shard).
type svcExporter struct {
	r   trainjob.Runner
	log *slog.Logger
}

func (e svcExporter) Export(ctx context.Context, r ExportRequest) (Export, error) {
	out := Export{Adapter: filepath.Join(r.Out, "adapter"), Merged: filepath.Join(r.Out, "merged")}
	run, ckpt := filepath.Dir(r.Adapter), filepath.Base(r.Adapter)
	if err := trainjob.Run(ctx, e.r, e.log, out.Adapter, "export", "--run", run, "--checkpoint", ckpt, "--out", out.Adapter, "--base-model", r.Weights); err != nil {
		return out, err
	}
	if err := trainjob.Run(ctx, e.r, e.log, out.Merged, "merge", "--model", r.Weights, "--adapter", out.Adapter, "--out", out.Merged); err != nil {
		return out, err
	}
	if r.FP8 {
		out.FP8 = filepath.Join(r.Out, "fp8")
		if err := trainjob.Run(ctx, e.r, e.log, out.FP8, "merge", "--model", r.Weights, "--adapter", out.Adapter, "--out", out.FP8, "--fp8"); err != nil {
			return out, err
		}
	}
	return out, nil
}
