package judgepairs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/rollout"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/jobwire"
)

// KindName is the job kind.
const KindName = jobwire.JudgePairsKind

// Evaluator modes, as in cycle/search.
const (
	ModeBundle = "bundle"
	ModeAgent  = "agent"
)

// DefaultSelfSeed is the seed a self-judge judges each pair with.
const DefaultSelfSeed = 42

// JudgeSpec is one external judge and its seeds (massd's judges section).
type JudgeSpec struct {
	Model string  `json:"model"`
	Seeds []int64 `json:"seeds"`
}

// Params are a judge-pairs job's parameters (jobwire.JudgePairsParams).
type Params = jobwire.JudgePairsParams

// ParseParams decodes, defaults and checks the params.
func ParseParams(raw json.RawMessage) (Params, error) {
	var p Params
	if err := jobkind.DecodeParams(raw, &p); err != nil {
		return p, fmt.Errorf("judge-pairs params: %w", err)
	}
	if p.Mode == "" {
		p.Mode = ModeBundle
	}
	if p.SelfSeed == 0 {
		p.SelfSeed = DefaultSelfSeed
	}
	if p.Concurrency == 0 {
		p.Concurrency = 4
	}
	switch {
	case !datadir.ValidID(p.Rollout):
		return p, fmt.Errorf("judge-pairs: rollout %q: name the evaluation a rollout job wrote (its name or job id)", p.Rollout)
	case p.Mode != ModeBundle && p.Mode != ModeAgent:
		return p, fmt.Errorf("judge-pairs: mode %q: want bundle or agent", p.Mode)
	case p.Concurrency < 1 || p.Concurrency > 64:
		return p, fmt.Errorf("judge-pairs: concurrency %d must be between 1 and 64", p.Concurrency)
	}
	return p, nil
}

// Request is one judgment of a pair: Candidate is cycle/judge's First,
// Baseline its Second; labels are model names, which no judge sees.
type Request struct {
	Key                 string // "<task>/<NN>/<candidate>": with Seed it decides the sides
	Task                string
	Index               int
	Candidate           string
	Baseline            string
	CandidateEp, BaseEp string // episode ids
	Model               string // the judge
	Seed                int64
	Mode                string
}

// Judger makes one judgment (cycle/judge.Run or RunAgent). An unusable
// reply is an invalid result, not an error; an error means ctx ended or
// the judgment could not be attempted.
type Judger interface {
	Judge(ctx context.Context, req Request) (judge.Result, error)
}

// Parts are what a judge-pairs job gets from massd.
type Parts struct {
	Judges []JudgeSpec // massd's configured external judges
	Judger Judger
	// Prices are massd's prices table, by model name; a verdict's
	// cost_usd is computed with its judge's.
	Prices map[string]model.Price
}

// Env is massd's side of the kind.
type Env interface {
	Setup(ctx context.Context, job jobkind.Job, rep jobkind.Reporter, mode string) (Parts, error)
}

// NewKind is the "judge-pairs" job kind; a resumed job keeps every
// verdict file already written.
func NewKind(env Env) jobkind.Kind {
	return jobkind.Kind{
		Name:        KindName,
		Description: "MASS evaluation: external judges (each seed) and self-judges on every pair of a rollout; win rates with pair-level intervals, agreement (params: rollout, baseline, judges, self_judges, no_self, self_seed, mode, concurrency)",
		OnInterrupt: jobkind.Resume,
		Validate:    func(raw json.RawMessage) error { _, err := ParseParams(raw); return err },
		Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
			p, err := ParseParams(job.Params)
			if err != nil {
				return err
			}
			parts, err := env.Setup(ctx, job, rep, p.Mode)
			if err != nil {
				return err
			}
			ro, err := rollout.Load(job.Layout, p.Rollout)
			if err != nil {
				return err
			}
			res, err := Execute(ctx, Config{Dir: job.Layout.Eval(p.Rollout), Rollout: ro, Params: p, Parts: parts,
				Progress: func(msg string) { rep.Progress(jobkind.Progress{Stage: "judge", Message: msg}) }})
			if err != nil {
				return err
			}
			rep.SetResult(res)
			return nil
		},
	}
}
