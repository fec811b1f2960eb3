package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/cycle/eval/judgepairs"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/rollout"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/taskspec"
)

// RolloutKind is the "rollout" job kind on the builtins: bare-prompt
// episodes recorded as the job's children.
func (b *Builtins) RolloutKind() jobkind.Kind { return rollout.NewKind(rolloutEnv{b}) }

// JudgePairsKind is the "judge-pairs" job kind: massd's external judges
// (the judges section) and the rollout's models judge every pair.
func (b *Builtins) JudgePairsKind() jobkind.Kind { return judgepairs.NewKind(pairsEnv{b}) }

// withEvaluation keeps the external judges out of the loop stages and
// adds the evaluation kinds.
func (b *Builtins) withEvaluation(ks []jobkind.Kind) []jobkind.Kind {
	for i := range ks {
		ks[i] = b.keepJudgesOut(ks[i])
	}
	return append(ks, b.RolloutKind(), b.JudgePairsKind())
}

type rolloutEnv struct{ b *Builtins }

type pairsEnv struct{ b *Builtins }

func (e rolloutEnv) Setup(ctx context.Context, job jobkind.Job, rep jobkind.Reporter, models []string) (rollout.Episodes, rollout.Tasks, error) {
	eps, err := e.b.episodes(ctx, job.ID, job.TaskID, job.Layout, job.WorkDir, rep)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range models {
		if !e.b.Models.Has(m) {
			return nil, nil, fmt.Errorf("rollout: no model named %q (massctl model list shows the models massd can call)", m)
		}
	}
	return &rolloutEpisodes{eps}, specSplits{eps.specs}, nil
}

type specSplits struct{ c *specCache }

func (s specSplits) Split(_ context.Context, task string) (string, error) {
	spec, err := s.c.get(task)
	if err != nil {
		return "", err
	}
	if spec.Split == "" {
		return taskspec.SplitTrain, nil
	}
	return spec.Split, nil
}

// rolloutEpisodes runs bare-prompt episodes as child episodes of the job.
type rolloutEpisodes struct{ *childEpisodes }

func (g *rolloutEpisodes) Run(ctx context.Context, r rollout.EpisodeRequest) (rollout.EpisodeResult, error) {
	seed := int(r.Seed & 0x7fffffff)
	st, err := g.run(ctx, episode.Options{ID: r.ID, TaskID: r.Task, Model: r.Model, Seed: &seed})
	if err != nil {
		return rollout.EpisodeResult{}, err
	}
	res := rollout.EpisodeResult{EpisodeID: r.ID, Exit: st.Exit, Success: st.Success,
		PromptTokens: st.Tokens.Prompt, CompletionTokens: st.Tokens.Completion}
	if gr := st.Grade; gr != nil {
		res.Graded, res.Passed, res.Score = gr.Ran, gr.Passed, gr.Score
	}
	return res, nil
}

// Setup of judge-pairs: the configured judges, each a model massd can call.
func (e pairsEnv) Setup(ctx context.Context, job jobkind.Job, rep jobkind.Reporter, mode string) (judgepairs.Parts, error) {
	var parts judgepairs.Parts
	for _, j := range e.b.cfg.Judges {
		if !e.b.Models.Has(j.Model) {
			return parts, fmt.Errorf("judge %q of massd.yaml is not a model massd can call; add it to the models section", j.Model)
		}
		parts.Judges = append(parts.Judges, judgepairs.JudgeSpec{Model: j.Model, Seeds: j.Seeds})
	}
	var eps *childEpisodes // agent mode only
	if mode == judgepairs.ModeAgent {
		var err error
		if eps, err = e.b.episodes(ctx, job.ID, job.TaskID, job.Layout, job.WorkDir, rep); err != nil {
			return parts, fmt.Errorf("judge mode agent: %w", err)
		}
	}
	parts.Prices = e.b.cfg.Prices
	parts.Judger = pairJudge{m: judge.Clients(e.b.Env.Deps().Models), l: job.Layout, eps: eps, specs: newSpecCache(job.Layout)}
	return parts, nil
}

// pairJudge judges a pair in bundle mode (one model call on the evidence
// bundles) or agent mode (a judge-agent episode, as the search's).
type pairJudge struct {
	m     judge.Model
	l     datadir.Layout
	eps   *childEpisodes // the job's episode runner, in agent mode
	specs *specCache
}

func (j pairJudge) Judge(ctx context.Context, r judgepairs.Request) (judge.Result, error) {
	spec, err := j.specs.get(r.Task)
	if err != nil {
		return judge.Result{}, err
	}
	l := j.l
	req := judge.Request{Key: r.Key, Model: r.Model, Seed: r.Seed,
		Task:   judgeTask(r.Task, spec),
		First:  judge.Side{Label: r.Candidate, Tar: filepath.Join(l.Episode(r.CandidateEp), "workspace.tar")},
		Second: judge.Side{Label: r.Baseline, Tar: filepath.Join(l.Episode(r.BaseEp), "workspace.tar")}}
	if r.Mode == judgepairs.ModeAgent {
		res, _, err := judge.RunAgent(ctx, &taskEpisodes{childEpisodes: j.eps, spec: spec}, req)
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
