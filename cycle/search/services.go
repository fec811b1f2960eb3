package search

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/episodefmt"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/jobkind/services"
	"github.com/mass-dev/mass/taskspec"
)

// Kind is the "search" job kind on massd's services: its episodes are real
// episodes recorded with the search job, its role calls go through massd's
// model registry, and it refuses an external judge in any role.
func Kind(svc services.Services) jobkind.Kind {
	return kind(ServicesEnv(svc), func(p Params) error { return notJudge(svc, p) })
}

// notJudge refuses an external judge as executor, evaluator or optimizer.
func notJudge(svc services.Services, p Params) error {
	return services.NotJudge(svc, svc.EpisodeEnv().DefaultModel, KindName,
		services.Role{Key: "model", Model: p.Model}, services.Role{Key: "judge_model", Model: p.JudgeModel},
		services.Role{Key: "optimizer_model", Model: p.OptimizerModel})
}

// ServicesEnv is a search's Env on massd's services; the search kind and
// the cycle's searches run through it.
func ServicesEnv(svc services.Services) Env { return svcEnv{svc} }

type svcEnv struct{ svc services.Services }

var (
	_ Env               = svcEnv{}
	_ Episodes          = (*svcEpisodes)(nil)
	_ judge.AgentRunner = (*svcEpisodes)(nil)
)

func (e svcEnv) Setup(ctx context.Context, req Request, rep jobkind.Reporter, spec *taskspec.Spec) (Episodes, judge.Model, string, error) {
	eps, err := e.svc.Episodes(ctx, jobkind.Job{ID: req.JobID, TaskID: req.TaskID, Layout: req.Layout, WorkDir: req.WorkDir}, rep)
	if err != nil {
		return nil, nil, "", err
	}
	s := &svcEpisodes{eps: eps, spec: spec, req: req, rep: rep}
	return s, services.ModelCalls(e.svc), e.svc.EpisodeEnv().DefaultModel, nil
}

// svcEpisodes are a search's episodes (Episodes) and its judge-agent
// episodes (judge.AgentRunner), children of the job that runs the search.
type svcEpisodes struct {
	eps  services.Episodes
	spec *taskspec.Spec
	req  Request
	rep  jobkind.Reporter
}

// Run runs one episode of the search: the teacher prompt as the search
// built it, no execution directive.
func (s *svcEpisodes) Run(ctx context.Context, req EpisodeRequest) (EpisodeResult, error) {
	s.rep.Event("episode_started", fmt.Sprintf("episode %s for %s (attempt %d)", req.ID, req.Slot, req.Attempt),
		map[string]any{"episode_id": req.ID, "slot": req.Slot, "attempt": req.Attempt})
	seed := req.Seed
	st, err := s.eps.Run(ctx, episode.Options{ID: req.ID, Task: s.spec, TaskID: s.req.TaskID,
		Workflow: req.Workflow, NoDirective: true, Teacher: req.Prompt, Model: req.Model, Seed: &seed})
	if err != nil {
		return EpisodeResult{}, err
	}
	dir := s.req.Layout.Episode(req.ID)
	res := EpisodeResult{EpisodeID: req.ID, Dir: dir, Export: st.WorkspaceExport, Exit: st.Exit, Success: st.Success,
		Failure: st.Failure, LoopHalt: st.Failure == episode.FailLoop, ModelCalls: st.ModelCalls,
		Tokens: st.Tokens.Prompt + st.Tokens.Completion, DryRun: st.DryRun, OutputsPresent: &st.OutputsPresent}
	if st.Exit != episode.ExitCompleted { // the failure the optimizer reads; a completed one's reason may name the grade
		res.FailureMessage = st.Reason
		for _, c := range st.LastToolCalls {
			res.LastToolCalls = append(res.LastToolCalls, ToolCall{Tool: c.Tool, Args: c.ArgsSummary})
		}
	}
	if info, err := episodefmt.ReadInfo(dir); err == nil {
		res.TeacherPrompt = info.TeacherPrompt
	}
	return res, nil
}

// Close closes an episode an interrupted attempt cut off.
func (s *svcEpisodes) Close(ctx context.Context, id string) error { return s.eps.Close(ctx, id) }

// RunJudge runs one judge-agent episode on the search's task.
func (s *svcEpisodes) RunJudge(ctx context.Context, req judge.AgentRequest) (judge.AgentAnswer, error) {
	return s.eps.RunJudge(ctx, s.spec, req)
}

// kind is the "search" job kind on env; check, if set, runs on the parsed
// params before the search is queued and again when it runs.
func kind(env Env, check func(Params) error) jobkind.Kind {
	parse := jobkind.Checked(ParseParams, check)
	return jobkind.Kind{
		Name:        KindName,
		Description: "MASS workflow search on a task: reference, v0, then optimizer → v(k) → judged as the judging rule needs (params: model, judge_model, optimizer_model, iterations, seed, judgments, judge_mode, judging, judge_retries, resume, and the optimizer toggles include_best_design, history_design_diffs, include_v0_design, omit_full_results_json, results_json_max_chars, results_json_total_max_chars, forbid_fixed_agent_limits, max_design_chars, target_design_chars, improvement_output_mode)",
		OnInterrupt: jobkind.Resume,
		Validate:    func(raw json.RawMessage) error { _, err := parse(raw); return err },
		Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
			p, err := parse(job.Params)
			if err != nil {
				return err
			}
			sum, err := Search(ctx, env, Request{SearchID: job.ID, TaskID: job.TaskID, Params: p, JobID: job.ID,
				Attempt: job.Attempt, Layout: job.Layout, WorkDir: job.WorkDir}, rep)
			if err != nil {
				return err
			}
			rep.SetResult(sum)
			return nil
		},
	}
}
