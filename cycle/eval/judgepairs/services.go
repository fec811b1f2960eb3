package judgepairs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/jobkind/services"
)

// Kind is the "judge-pairs" job kind on massd's services: massd's external
// judges (the judges section) and the rollout's models judge every pair.
func Kind(svc services.Services) jobkind.Kind { return NewKind(svcEnv{svc}) }

type svcEnv struct{ svc services.Services }

var (
	_ Env    = svcEnv{}
	_ Judger = pairJudge{}
)

// Setup of judge-pairs: the configured judges, each a model massd can call.
func (e svcEnv) Setup(ctx context.Context, job jobkind.Job, rep jobkind.Reporter, mode string) (Parts, error) {
	var parts Parts
	reg := e.svc.EpisodeEnv().Models
	for _, j := range e.svc.Judges() {
		if !reg.Has(j.Model) {
			return parts, fmt.Errorf("judge %q of massd.yaml is not a model massd can call; add it to the models section", j.Model)
		}
		parts.Judges = append(parts.Judges, JudgeSpec{Model: j.Model, Seeds: j.Seeds})
	}
	var eps services.Episodes // agent mode only
	if mode == ModeAgent {
		var err error
		if eps, err = e.svc.Episodes(ctx, job, rep); err != nil {
			return parts, fmt.Errorf("judge mode agent: %w", err)
		}
	}
	parts.Prices = e.svc.Prices()
	parts.Judger = pairJudge{m: services.ModelCalls(e.svc), l: job.Layout, eps: eps, specs: services.NewSpecs(job.Layout)}
	return parts, nil
}

// pairJudge judges a pair in bundle mode (one model call on the evidence
// bundles) or agent mode (a judge-agent episode, as the search's).
type pairJudge struct {
	m     judge.Model
	l     datadir.Layout
	eps   services.Episodes // the job's episode runner, in agent mode
	specs *services.Specs
}

func (j pairJudge) Judge(ctx context.Context, r Request) (judge.Result, error) {
	spec, err := j.specs.Get(r.Task)
	if err != nil {
		return judge.Result{}, err
	}
	l := j.l
	req := judge.Request{Key: r.Key, Model: r.Model, Seed: r.Seed,
		Task:   generation.JudgeTask(r.Task, spec),
		First:  judge.Side{Label: r.Candidate, Tar: filepath.Join(l.Episode(r.CandidateEp), "workspace.tar")},
		Second: judge.Side{Label: r.Baseline, Tar: filepath.Join(l.Episode(r.BaseEp), "workspace.tar")}}
	if r.Mode == ModeAgent {
		res, _, err := judge.RunAgent(ctx, services.JudgeAgents(j.eps, spec), req)
		return res, err
	}
	kw := &keyWatch{Model: j.m}
	res, _, err := judge.Run(ctx, kw, req)
	if err == nil && kw.err != nil {
		return res, kw.err // a refused key fails the job; retrying the pair cannot help
	}
	return res, err
}

// keyWatch notes a refused API key (model.ErrAuth) among one judgment's
// calls, which judge.Run would record as an invalid verdict.
type keyWatch struct {
	judge.Model
	err error
}

func (k *keyWatch) Chat(ctx context.Context, name string, msgs []judge.Message, seed int64) (judge.Reply, error) {
	rep, err := k.Model.Chat(ctx, name, msgs, seed)
	if errors.Is(err, model.ErrAuth) && k.err == nil {
		k.err = err
	}
	return rep, err
}
