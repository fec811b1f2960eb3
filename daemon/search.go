package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/episodefmt"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/taskspec"
)

// SearchKind is the "search" job kind in the builtins' environment: its
// episodes are real episodes recorded with the search job, its role calls
// go through the same model registry.
func (b *Builtins) SearchKind() jobkind.Kind { return search.NewKind(searchEnv{b}) }

type searchEnv struct{ b *Builtins }

func (e searchEnv) Setup(ctx context.Context, req search.Request, rep jobkind.Reporter, spec *taskspec.Spec) (search.Episodes, judge.Model, string, error) {
	c, err := e.b.episodes(ctx, req.JobID, req.TaskID, req.Layout, req.WorkDir, rep)
	if err != nil {
		return nil, nil, "", err
	}
	s := &taskEpisodes{childEpisodes: c, spec: spec}
	s.closeJudges(ctx)
	return s, judge.Clients(c.d.Models), e.b.Env.DefaultModel, nil
}

// judgesFile lists the judge episodes a job started, one id a line, so
// that a resumed job closes the ones a crash cut off (the judgment itself
// is redone: only a finished result.json counts).
const judgesFile = "judge-episodes.txt"

func (s *taskEpisodes) closeJudges(ctx context.Context) {
	b, err := os.ReadFile(filepath.Join(s.workDir, judgesFile))
	if err != nil {
		return
	}
	for _, id := range strings.Fields(string(b)) {
		if err := s.Close(ctx, id); err != nil {
			s.rep.Logger().Warn("close interrupted judge episode", "episode", id, "err", err)
		}
	}
}

func (s *taskEpisodes) noteJudge(id string) error {
	f, err := os.OpenFile(filepath.Join(s.workDir, judgesFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("record judge episode: %w", err)
	}
	_, err = fmt.Fprintln(f, id)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// taskEpisodes are the child episodes of a job on one task: a search's
// episodes (search.Episodes) and judge-agent episodes (judge.AgentRunner,
// for the search and for judge-pairs).
type taskEpisodes struct {
	*childEpisodes
	spec *taskspec.Spec
}

// Run runs one episode of the search: the teacher prompt as the search
// built it, no execution directive.
func (s *taskEpisodes) Run(ctx context.Context, req search.EpisodeRequest) (search.EpisodeResult, error) {
	s.rep.Event("episode_started", fmt.Sprintf("episode %s for %s (attempt %d)", req.ID, req.Slot, req.Attempt),
		map[string]any{"episode_id": req.ID, "slot": req.Slot, "attempt": req.Attempt})
	seed := req.Seed
	st, err := s.run(ctx, episode.Options{ID: req.ID, Task: s.spec, TaskID: s.taskID,
		Workflow: req.Workflow, NoDirective: true, Teacher: req.Prompt, Model: req.Model, Seed: &seed})
	if err != nil {
		return search.EpisodeResult{}, err
	}
	dir := s.l.Episode(req.ID)
	res := search.EpisodeResult{EpisodeID: req.ID, Dir: dir, Export: st.WorkspaceExport, Exit: st.Exit, Success: st.Success,
		Failure: st.Failure, LoopHalt: st.Failure == episode.FailLoop, ModelCalls: st.ModelCalls,
		Tokens: st.Tokens.Prompt + st.Tokens.Completion, DryRun: st.DryRun, OutputsPresent: &st.OutputsPresent}
	if st.Exit != episode.ExitCompleted { // the failure the optimizer reads; a completed one's reason may name the grade
		res.FailureMessage = st.Reason
		for _, c := range st.LastToolCalls {
			res.LastToolCalls = append(res.LastToolCalls, search.ToolCall{Tool: c.Tool, Args: c.ArgsSummary})
		}
	}
	if info, err := episodefmt.ReadInfo(dir); err == nil {
		res.TeacherPrompt = info.TeacherPrompt
	}
	return res, nil
}

// RunJudge runs one judge-agent episode: both workspaces are unpacked
// (directories and regular files only, links never followed) into a
// scratch folder of the job and become the judge's read-only inputs at
// judge/A and judge/B; the judge runs in its own hardened containers with
// no network like any episode, and is recorded and ledgered as one.
func (s *taskEpisodes) RunJudge(ctx context.Context, req judge.AgentRequest) (judge.AgentAnswer, error) {
	tmp, err := os.MkdirTemp(s.workDir, "judge-")
	if err != nil {
		return judge.AgentAnswer{}, fmt.Errorf("judge scratch dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	for side, tarPath := range map[string]string{"A": req.A, "B": req.B} {
		if err := unpack(tarPath, filepath.Join(tmp, side)); err != nil {
			return judge.AgentAnswer{}, fmt.Errorf("workspace %s: %w", side, err)
		}
	}
	spec := &taskspec.Spec{ID: s.spec.ID, Prompt: req.Prompt, Dir: tmp, Limits: s.spec.Limits, ProtectedPaths: []string{"judge"},
		Inputs: []taskspec.Input{{Path: "A", Dest: "judge/A"}, {Path: "B", Dest: "judge/B"}}}
	id := episode.NewID()
	if err := s.noteJudge(id); err != nil {
		return judge.AgentAnswer{}, err
	}
	s.rep.Event("judge_episode_started", fmt.Sprintf("judge episode %s for %s (attempt %d)", id, req.Key, req.Attempt),
		map[string]any{"episode_id": id, "key": req.Key, "attempt": req.Attempt})
	seed := int(req.Seed & 0x7fffffff)
	st, err := s.run(ctx, episode.Options{ID: id, Task: spec, TaskID: s.taskID, Model: req.Model, Seed: &seed})
	ans := judge.AgentAnswer{Final: st.Final, EpisodeID: id, PromptTokens: st.Tokens.Prompt, CompletionTokens: st.Tokens.Completion}
	if err == nil && !st.Success {
		err = fmt.Errorf("judge episode %s %s (%s): %s", id, st.Exit, st.Failure, st.Reason)
	}
	return ans, err
}

func unpack(tarPath, dest string) error {
	if err := os.Mkdir(dest, 0o755); err != nil {
		return err
	}
	f, err := os.Open(tarPath)
	if err != nil {
		return err
	}
	defer f.Close()
	return judge.Extract(f, dest, episode.DefaultExportBytes)
}
