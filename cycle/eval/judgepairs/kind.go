package judgepairs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/rollout"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/datadir"
)

// KindName is the job kind.
const KindName = "judge-pairs"

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

// Params are a judge-pairs job's parameters.
type Params struct {
	Rollout     string   `json:"rollout"`               // the evaluation name (evals/<name>)
	Baseline    string   `json:"baseline,omitempty"`    // default: the rollout's first model
	Judges      []string `json:"judges,omitempty"`      // a subset of massd's judges; default all
	SelfJudges  []string `json:"self_judges,omitempty"` // default: every model of the rollout
	NoSelf      bool     `json:"no_self,omitempty"`     // no self-judges (no agreement)
	SelfSeed    int64    `json:"self_seed,omitempty"`   // default DefaultSelfSeed
	Mode        string   `json:"mode,omitempty"`        // bundle (default) | agent
	Concurrency int      `json:"concurrency,omitempty"` // default 4
}

// ParseParams decodes, defaults and checks the params.
func ParseParams(raw json.RawMessage) (Params, error) {
	var p Params
	if err := jobs.DecodeParams(raw, &p); err != nil {
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
}

// Env is massd's side of the kind.
type Env interface {
	Setup(ctx context.Context, job jobs.Job, rep jobs.Reporter, mode string) (Parts, error)
}

// NewKind is the "judge-pairs" job kind; a resumed job keeps every
// verdict file already written.
func NewKind(env Env) jobs.Kind {
	return jobs.Kind{
		Name:        KindName,
		Description: "MASS evaluation: external judges (each seed) and self-judges on every pair of a rollout; win rates with pair-level intervals, agreement (params: rollout, baseline, judges, self_judges, no_self, self_seed, mode, concurrency)",
		OnInterrupt: jobs.Resume,
		Validate:    func(raw json.RawMessage) error { _, err := ParseParams(raw); return err },
		Run: func(ctx context.Context, job jobs.Job, rep jobs.Reporter) error {
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
				Progress: func(msg string) { rep.Progress(jobs.Progress{Stage: "judge", Message: msg}) }})
			if err != nil {
				return err
			}
			rep.SetResult(res)
			return nil
		},
	}
}

// Config is one judge-pairs run.
type Config struct {
	Dir      string
	Rollout  rollout.Summary
	Params   Params
	Parts    Parts
	Progress func(string)
}

type task struct {
	req  Request
	ext  bool
	path string
}

// Execute judges every pair not judged yet and writes judgement.json.
func Execute(ctx context.Context, c Config) (Results, error) {
	judges, self, base, err := c.plan()
	if err != nil {
		return Results{}, err
	}
	var todo []task
	for _, pr := range Pairs(c.Rollout, base) {
		for _, j := range judges {
			for _, s := range j.Seeds {
				todo = append(todo, c.task(pr, j.Model, s, true))
			}
		}
		for _, m := range self {
			todo = append(todo, c.task(pr, m, c.Params.SelfSeed, false))
		}
	}
	err = generation.Parallel(ctx, len(todo), c.Params.Concurrency, func(ctx context.Context, i int) error {
		return c.judgeOne(ctx, todo[i], i, len(todo))
	})
	if err != nil {
		return Results{}, err
	}
	vs, err := ReadVerdicts(c.Dir)
	if err != nil {
		return Results{}, err
	}
	var cands []string
	for _, m := range c.Rollout.Models {
		if m != base {
			cands = append(cands, m)
		}
	}
	res, err := Summarize(vs, cands, self)
	if err != nil {
		return res, err
	}
	res.Rollout, res.Baseline, res.Mode, res.Judges = c.Rollout.Name, base, c.Params.Mode, judges
	return res, generation.WriteJSON(filepath.Join(c.Dir, ResultsFile), res)
}

// plan picks the external judges, the self-judges and the baseline, and
// refuses an external judge that is also a rollout model.
func (c Config) plan() (judges []JudgeSpec, self []string, base string, err error) {
	ro, p := c.Rollout, c.Params
	base = p.Baseline
	if base == "" && len(ro.Models) > 0 {
		base = ro.Models[0]
	}
	if !slices.Contains(ro.Models, base) {
		return nil, nil, "", fmt.Errorf("judge-pairs: baseline %q is not a model of rollout %s (%v)", base, ro.Name, ro.Models)
	}
	for _, j := range c.Parts.Judges {
		if len(p.Judges) == 0 || slices.Contains(p.Judges, j.Model) {
			judges = append(judges, j)
		}
	}
	for _, want := range p.Judges {
		if !slices.ContainsFunc(judges, func(j JudgeSpec) bool { return j.Model == want }) {
			return nil, nil, "", fmt.Errorf("judge-pairs: %q is not one of massd's judges (the judges section of massd.yaml)", want)
		}
	}
	if len(judges) == 0 {
		return nil, nil, "", errors.New("judge-pairs: massd has no external judges; add judges: [{model: NAME, seeds: [42, 43, 44]}] to massd.yaml")
	}
	for _, j := range judges {
		if slices.Contains(ro.Models, j.Model) || !datadir.ValidID(j.Model) {
			return nil, nil, "", fmt.Errorf("judge-pairs: judge %q is a model of the rollout or not a valid name; an external judge must be another model", j.Model)
		}
	}
	self = p.SelfJudges
	if len(self) == 0 && !p.NoSelf {
		self = ro.Models
	}
	for _, m := range self {
		if !slices.Contains(ro.Models, m) {
			return nil, nil, "", fmt.Errorf("judge-pairs: self-judge %q is not a model of the rollout", m)
		}
	}
	return judges, self, base, nil
}

func (c Config) task(pr PairRef, model string, seed int64, ext bool) task {
	key := PairID(pr.Task, pr.Index, pr.Candidate)
	return task{ext: ext, path: Path(c.Dir, pr.Task, pr.Index, pr.Candidate, model, seed),
		req: Request{Key: key, Task: pr.Task, Index: pr.Index, Candidate: pr.Candidate, Baseline: pr.Baseline, CandidateEp: pr.CandidateEp,
			BaseEp: pr.BaseEp, Model: model, Seed: seed, Mode: c.Params.Mode}}
}

func (c Config) judgeOne(ctx context.Context, t task, i, n int) error {
	if _, err := os.Stat(t.path); err == nil { // judged before the restart
		v, err := readVerdict(t.path)
		if err == nil && v.Mode != t.req.Mode {
			err = fmt.Errorf("verdict %s was made in evaluator mode %s, this job asks for %s: judge another rollout or remove its verdicts", t.path, v.Mode, t.req.Mode)
		}
		return err
	}
	if c.Progress != nil {
		c.Progress(fmt.Sprintf("verdict %d of %d: %s by %s seed %d", i+1, n, t.req.Key, t.req.Model, t.req.Seed))
	}
	res, err := c.Parts.Judger.Judge(ctx, t.req)
	if err != nil {
		return fmt.Errorf("judge %s by %s: %w", t.req.Key, t.req.Model, err)
	}
	v := Verdict{Task: t.req.Task, Index: t.req.Index, Candidate: t.req.Candidate, Baseline: t.req.Baseline,
		CandidateEpisode: t.req.CandidateEp, BaselineEpisode: t.req.BaseEp, External: t.ext, Result: res}
	return generation.WriteJSON(t.path, v)
}
