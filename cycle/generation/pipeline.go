package generation

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// Stage names, in order.
var Stages = []string{"eligible", "collect", "rank", "select", "render", "train", "export", "serve"}

// stageNotes say what each stage does while it has no numbers to show.
var stageNotes = map[string]string{
	"eligible": "checking each task's retained workflow",
	"collect":  "starting teacher episodes",
	"rank":     "starting judgments",
	"select":   "selecting train and validation episodes",
	"render":   "rendering the selected episodes",
	"train":    "starting mass-train",
	"export":   "merging the adapter into the parent's weights",
	"serve":    "registering the new model",
}

// pipeline is one run of a generation.
type pipeline struct {
	cfg Config
	sum Summary
}

// Run runs generation cfg.G to the end, resuming from the files in cfg.Dir:
// finished stages are read back, never rerun. It returns the summary also
// written to generation.json.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	if err := freeze(cfg.Dir, cfg.resolved()); err != nil {
		return Summary{}, fmt.Errorf("generation %d: %w", cfg.G, err)
	}
	p := &pipeline{cfg: cfg}
	if _, err := readJSON(filepath.Join(cfg.Dir, SummaryFile), &p.sum); err != nil {
		return Summary{}, err
	}
	p.sum.Generation, p.sum.Dir, p.sum.Model, p.sum.Parent = cfg.G, cfg.Dir, cfg.NewModel, cfg.Parent.Name
	if p.sum.Status == "" || p.sum.Status == StatusFailed {
		p.sum.Status = StatusRunning
	}
	err := p.run(ctx)
	if err != nil && ctx.Err() == nil {
		p.sum.Status, p.sum.Error = StatusFailed, err.Error()
	}
	if werr := p.save(); err == nil {
		err = werr
	}
	return p.sum, err
}

func (p *pipeline) run(ctx context.Context) error {
	plan, err := stage(ctx, p, "eligible", TasksFile, p.eligible)
	if err != nil {
		return err
	}
	p.sum.Excluded = append([]Excluded{}, plan.Excluded...)
	collected, err := stage(ctx, p, "collect", "collect.json", func(ctx context.Context) ([]Collected, error) {
		return mapTasks(ctx, plan.Eligible, p.collect)
	})
	if err != nil {
		return err
	}
	ranked, err := stage(ctx, p, "rank", "rank.json", func(ctx context.Context) ([]Ranked, error) {
		return mapTasks(ctx, usable(collected), p.rankTask)
	})
	if err != nil {
		return err
	}
	p.summarizeTasks(collected, ranked)
	sel, err := stage(ctx, p, "select", SelectionFile, func(context.Context) (Selection, error) { return p.selection(ranked) })
	if err != nil {
		return err
	}
	return p.train(ctx, sel)
}

// train runs the stages after selection: render, train, export, serve.
func (p *pipeline) train(ctx context.Context, sel Selection) error {
	ds, err := stage(ctx, p, "render", DatasetFile, func(ctx context.Context) (Dataset, error) {
		return p.cfg.Datasets.Build(ctx, DatasetRequest{Name: p.cfg.NewModel, Train: sel.Train, Val: sel.Val, Tokenizer: p.cfg.Parent.Tokenizer, Lenient: p.cfg.Lenient,
			Window: recipeWindow(p.cfg.Recipe), ContextOverlap: recipeOverlap(p.cfg.Recipe)})
	})
	if err != nil {
		return err
	}
	p.sum.Dataset, p.sum.Tokens.StoredSupervised = ds.Dir, ds.StoredSupervised
	tr, err := stage(ctx, p, "train", TrainFile, func(ctx context.Context) (Training, error) {
		out := filepath.Join(p.cfg.Dir, "train")
		wctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); p.watchTraining(wctx, out) }()
		defer func() { stop(); <-done }()
		return p.cfg.Trainer.Train(ctx, TrainRequest{Dataset: ds.Dir, Val: ds.Val, Weights: p.cfg.Parent.Weights,
			Out: out, Steps: p.cfg.TrainSteps, Recipe: p.cfg.Recipe})
	})
	if err != nil {
		return err
	}
	p.sum.Training, p.sum.Tokens.ProcessedSupervised = &tr, tr.ProcessedSupervised
	ex, err := stage(ctx, p, "export", ExportFile, func(ctx context.Context) (Export, error) {
		return p.cfg.Exporter.Export(ctx, ExportRequest{Adapter: tr.Adapter, Weights: p.cfg.Parent.Weights,
			Out: filepath.Join(p.cfg.Dir, "export"), FP8: p.cfg.FP8})
	})
	if err != nil {
		return err
	}
	p.sum.Adapter, p.sum.Merged, p.sum.FP8 = ex.Adapter, ex.Merged, ex.FP8
	m := Model{Name: p.cfg.NewModel, G: p.cfg.G, Parent: p.cfg.Parent.Name, Weights: ex.Merged,
		Tokenizer: p.cfg.Parent.Tokenizer, Adapter: ex.Adapter}
	if _, err := stage(ctx, p, "serve", ServeFile, func(ctx context.Context) (Model, error) {
		return m, p.cfg.Models.Register(ctx, m)
	}); err != nil {
		return err
	}
	p.sum.Status = StatusDone
	return nil
}

// stage returns the result in file if the stage finished before, else runs
// f, writes its result and records the stage's time in the summary.
func stage[T any](ctx context.Context, p *pipeline, name, file string, f func(context.Context) (T, error)) (T, error) {
	var v T
	path := filepath.Join(p.cfg.Dir, file)
	if ok, err := readJSON(path, &v); ok || err != nil {
		return v, err
	}
	p.note(name, stageNotes[name])
	start := time.Now()
	v, err := f(ctx)
	if err != nil {
		return v, fmt.Errorf("stage %s: %w", name, err)
	}
	if err := writeJSON(path, v); err != nil {
		return v, err
	}
	p.sum.Stages = append(p.sum.Stages, StageTime{Name: name, Seconds: time.Since(start).Seconds()})
	return v, p.save()
}

// mapTasks applies f to every task in order.
func mapTasks[T, R any](ctx context.Context, ts []T, f func(context.Context, T) (R, error)) ([]R, error) {
	out := make([]R, 0, len(ts))
	for _, t := range ts {
		r, err := f(ctx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func usable(cs []Collected) []Collected {
	var out []Collected
	for _, c := range cs {
		if c.Excluded == "" {
			out = append(out, c)
		}
	}
	return out
}
