package generation

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mass-dev/mass/agents/prompts"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/jobwire"
)

// KindName is the job kind of one generation.
const KindName = jobwire.GenerationKind

// Params are a "generation" job's parameters (jobwire.GenerationParams).
type Params = jobwire.GenerationParams

// ParseParams decodes and checks a generation job's params.
func ParseParams(raw json.RawMessage) (Params, error) {
	var p Params
	if err := jobkind.DecodeParams(raw, &p); err != nil {
		return p, fmt.Errorf("generation params: %w", err)
	}
	return p, CheckParams(p)
}

// CheckParams checks decoded params against a generation's rules, without
// parts or the generation's place: what ParseParams checks after decoding.
func CheckParams(p Params) error {
	c := settingsOf(p, 1)
	if p.Directive != "" {
		if err := prompts.CheckDirective(p.Directive); err != nil {
			return fmt.Errorf("generation params: directive: %w", err)
		}
	}
	c.Defaults()
	if err := c.ValidateValues(); err != nil {
		return err
	}
	return p.Training.Validate()
}

// Parts are what a generation job gets from massd: the parent model
// resolved and the parts the pipeline calls.
type Parts struct {
	Parent    Model
	Workflows Workflows
	Runner    Episodes
	Judge     Judge
	Datasets  Datasets
	Trainer   Trainer
	Exporter  Exporter
	Models    Models
}

// Env is massd's side of the generation job kinds.
type Env interface {
	// Parts resolves the parent model by name ("" = the default) and
	// returns the parts, with episodes recorded as the job's children.
	Parts(ctx context.Context, job jobkind.Job, rep jobkind.Reporter, parent string) (Parts, error)
	// Splits answers the tasks' splits from their specs, for the split
	// guard at submission and in stage eligible.
	Splits() Splits
}

// configOf is generation g's config from the params and its parts (g is
// the parent's g + 1).
func configOf(p Params, parts Parts) Config {
	c := settingsOf(p, parts.Parent.G+1)
	c.Parent, c.Workflows, c.Runner, c.Judge, c.Datasets = parts.Parent, parts.Workflows, parts.Runner, parts.Judge, parts.Datasets
	c.Trainer, c.Exporter, c.Models = parts.Trainer, parts.Exporter, parts.Models
	return c
}

// settingsOf is the part of generation g's config its params set.
func settingsOf(p Params, g int) Config {
	rankSeed := p.RankSeed
	if rankSeed == 0 {
		rankSeed = p.Seed
	}
	return Config{G: g, Tasks: p.Tasks, Seed: GenerationSeed(p.Seed, g), RankSeed: GenerationSeed(rankSeed, g),
		Episodes: p.Episodes, MinSuccess: p.MinSuccess, Cap: p.Cap, Opponents: p.Opponents, Train: p.Train, Val: p.Val,
		Concurrency: p.Concurrency, FP8: p.FP8, TrainSteps: p.TrainSteps, Lenient: p.Lenient, Recipe: p.Training, Directive: p.Directive,
		NewModel: strings.ReplaceAll(p.ServedName, "{g}", strconv.Itoa(g))}
}

// NewKind is the "generation" job kind on env. It resumes after a restart
// from the files of its generation directory. massd's is Kind(svc).
func NewKind(env Env) jobkind.Kind { return newKind(env, nil) }

// newKind is the "generation" kind on env; check, if set, runs on the
// parsed params before the job is queued and again when it runs.
func newKind(env Env, check func(Params) error) jobkind.Kind {
	parse := jobkind.Checked(ParseParams, check)
	return jobkind.Kind{
		Name:        KindName,
		StageEvent:  StageEvent,
		Description: "MASS generation g from model g−1: eligible tasks, collect, rank, select, render, train, export, serve (params: tasks, model, episodes, opponents, min_success, cap, train, val, concurrency, seed, fp8)",
		OnInterrupt: jobkind.Resume,
		Validate: func(raw json.RawMessage) error {
			p, err := parse(raw)
			if err != nil {
				return err
			}
			return CheckSplits(context.Background(), env.Splits(), p.Tasks)
		},
		Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
			p, err := parse(job.Params)
			if err != nil {
				return err
			}
			parts, err := env.Parts(ctx, job, rep, p.Model)
			if err != nil {
				return err
			}
			cfg := configOf(p, parts)
			cfg.Splits = env.Splits()
			sum, err := runOwned(ctx, job, rep, cfg)
			if err != nil {
				return err
			}
			rep.SetResult(sum)
			return nil
		},
	}
}

// runOwned runs cfg in generations/<g>, which the job claims on its first
// run: a directory claimed by another job is an error, never shared.
func runOwned(ctx context.Context, job jobkind.Job, rep jobkind.Reporter, cfg Config) (Summary, error) {
	cfg.Dir = job.Layout.Generation(strconv.Itoa(cfg.G))
	if err := claim(cfg.Dir, job.ID); err != nil {
		return Summary{}, err
	}
	cfg.Log = rep.Logger()
	cfg.Progress = stageProgress(rep)
	rep.Event("generation", fmt.Sprintf("generation %d from %s in %s", cfg.G, cfg.Parent.Name, cfg.Dir), map[string]any{"generation": cfg.G})
	return Run(ctx, cfg)
}
