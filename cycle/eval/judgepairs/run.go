package judgepairs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/cycle/rollout"
	"github.com/mass-dev/mass/datadir"
)

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
	priced(&v, c.Parts.Prices)
	return generation.WriteJSON(t.path, v)
}
