package rollout

import (
	"context"
	"fmt"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/jobkind/services"
)

// Kind is the "rollout" job kind on massd's services: bare-prompt episodes
// recorded as the job's children, on models massd can call.
func Kind(svc services.Services) jobkind.Kind { return NewKind(svcEnv{svc}) }

type svcEnv struct{ svc services.Services }

var (
	_ Env      = svcEnv{}
	_ Episodes = svcEpisodes{}
)

func (e svcEnv) Setup(ctx context.Context, job jobkind.Job, rep jobkind.Reporter, models []string) (Episodes, Tasks, error) {
	eps, err := e.svc.Episodes(ctx, job, rep)
	if err != nil {
		return nil, nil, err
	}
	reg := e.svc.EpisodeEnv().Models
	for _, m := range models {
		if !reg.Has(m) {
			return nil, nil, fmt.Errorf("rollout: no model named %q (massctl model list shows the models massd can call)", m)
		}
	}
	return svcEpisodes{eps}, services.NewSpecs(job.Layout), nil
}

// svcEpisodes runs bare-prompt episodes as child episodes of the job.
type svcEpisodes struct{ services.Episodes }

func (g svcEpisodes) Run(ctx context.Context, r EpisodeRequest) (EpisodeResult, error) {
	seed := int(r.Seed & 0x7fffffff)
	st, err := g.Episodes.Run(ctx, episode.Options{ID: r.ID, TaskID: r.Task, Model: r.Model, Seed: &seed})
	if err != nil {
		return EpisodeResult{}, err
	}
	res := EpisodeResult{EpisodeID: r.ID, Exit: st.Exit, Success: st.Success,
		PromptTokens: st.Tokens.Prompt, CompletionTokens: st.Tokens.Completion}
	if gr := st.Grade; gr != nil {
		res.Graded, res.Passed, res.Score = gr.Ran, gr.Passed, gr.Score
	}
	return res, nil
}
