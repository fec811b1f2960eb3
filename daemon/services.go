package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/agents/prompts"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/jobkind/services"
	"github.com/mass-dev/mass/taskspec"
	"github.com/mass-dev/mass/trainer/trainjob"
)

// Services is the builtins as every job kind receives them: the one
// implementation of services.Services.
func (b *Builtins) Services() services.Services { return kindServices{b} }

type kindServices struct{ b *Builtins }

var (
	_ services.Services = kindServices{}
	_ services.Episodes = (*childEpisodes)(nil)
)

func (s kindServices) EpisodeEnv() episode.Env  { return s.b.Env }
func (s kindServices) Layout() datadir.Layout   { return s.b.Layout }
func (s kindServices) IsJudge(name string) bool { return s.b.cfg.JudgeModels()[name] }

// RuntimeUp is the one runtime-up check of the kinds.
func (s kindServices) RuntimeUp(ctx context.Context) error {
	if _, err := s.b.Runtime.Get(ctx); err != nil {
		return fmt.Errorf("sandbox runtime: %w", err)
	}
	return nil
}

func (s kindServices) Judges() []services.Judge {
	var out []services.Judge
	for _, j := range s.b.cfg.Judges {
		out = append(out, services.Judge{Model: j.Model, Seeds: j.Seeds})
	}
	return out
}

func (s kindServices) Prices() map[string]model.Price { return s.b.cfg.Prices }

// TrainCommand is mass-train for this host: the CUDA build when one is
// configured and a GPU is present, else the CPU build (trainjob.PickBinary).
func (s kindServices) TrainCommand(ctx context.Context, out string, log *slog.Logger, args ...string) (*exec.Cmd, func(), error) {
	return s.b.trainer().TrainCommand(ctx, out, log, args...)
}

func (b *Builtins) trainer() trainjob.Binary {
	return trainjob.Binary(trainjob.PickBinary(b.cfg.Trainer.Binary, b.cfg.Trainer.CUDABinary))
}

func (s kindServices) ParentModel(ctx context.Context, name string) (services.Model, error) {
	b := s.b
	if row, err := b.gens.st.GetModel(ctx, name); err == nil {
		return services.Model{Name: row.Name, G: row.G, Parent: row.Parent, Weights: row.Weights, Tokenizer: row.Tokenizer}, nil
	}
	if m, ok := b.cfg.Models[name]; ok {
		return services.Model{Name: name, Weights: m.Weights, Tokenizer: m.Tokenizer}, nil
	}
	if name == scripted.Name {
		dir, err := b.tinyModel(ctx)
		return services.Model{Name: name, Weights: dir, Tokenizer: dir}, err
	}
	if b.Models.Has(name) {
		return services.Model{Name: name}, nil
	}
	return services.Model{}, fmt.Errorf("no model named %q", name)
}

func (s kindServices) RegisterModel(ctx context.Context, jobID string, m services.Model) error {
	return s.b.RegisterModel(ctx, jobID, m)
}

// tinyModel is the folder the scripted model's generations train from:
// mass-train's tiny preset (Qwen3 vocabulary and tokenizer, random
// weights), made on first use under <data-dir>/models/tiny.
func (b *Builtins) tinyModel(ctx context.Context) (string, error) {
	b.gens.mu.Lock()
	defer b.gens.mu.Unlock()
	dir := filepath.Join(b.Layout.Root, "models", "tiny")
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err == nil {
		return dir, nil
	}
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := trainjob.Run(ctx, b.trainer(), b.log, dir, "init-model", "--config", "tiny", "--out", tmp); err != nil {
		return "", fmt.Errorf("make the tiny model: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("make the tiny model: %w", err)
	}
	return dir, nil
}

// Episodes is massd's one episode runner for job kinds: the episodes a
// search, a generation, a rollout or judge-pairs makes are child episodes
// of the job that runs them, each reported to its episode list. It closes
// the judge episodes an interrupted attempt of the job cut off.
func (s kindServices) Episodes(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) (services.Episodes, error) {
	if err := s.RuntimeUp(ctx); err != nil {
		return nil, err
	}
	c := &childEpisodes{d: s.b.Env.Deps(), jobID: job.ID, taskID: job.TaskID, l: job.Layout, workDir: job.WorkDir, rep: rep,
		specs: services.NewSpecs(job.Layout)}
	c.closeJudges(ctx)
	return c, nil
}

// childEpisodes are the child episodes of one job.
type childEpisodes struct {
	d       episode.Deps
	jobID   string // the job whose children these are
	taskID  string // its task, for the rows it closes
	l       datadir.Layout
	workDir string // the job's scratch (judge workspaces, the judges file)
	rep     jobkind.Reporter
	specs   *services.Specs // where an Options without a Task finds its spec
}

// Run runs one child episode (services.Episodes).
func (c *childEpisodes) Run(ctx context.Context, o episode.Options) (episode.Status, error) {
	if o.Task == nil {
		spec, err := c.specs.Get(o.TaskID)
		if err != nil {
			return episode.Status{}, err
		}
		o.Task = spec
		if o.Directive == "" && !o.NoDirective && spec.Directive != "" && o.Workflow != "" {
			if o.Directive, err = specDirective(spec); err != nil {
				return episode.Status{}, err
			}
		}
	}
	o.JobID, o.Dir = c.jobID, c.l.Episode(o.ID)
	if o.Teacher == "" && o.Workflow != "" && o.Task.QueryTemplate != "" {
		t, err := templateTeacher(o.Task, o.Workflow, o.Directive)
		if err != nil {
			return episode.Status{}, err
		}
		o.Teacher = t
	}
	rec := jobkind.EpisodeRecord{ID: o.ID, JobID: c.jobID, TaskID: o.TaskID, Status: "running", Dir: o.Dir}
	c.rep.Episode(rec)
	st, err := episode.Run(ctx, c.d, o)
	if st.EpisodeID == "" {
		rec.Status = "failed"
		c.rep.Episode(rec)
		return st, err
	}
	rec.Status, rec.Summary = st.Exit, st
	c.rep.Episode(rec)
	if err != nil {
		return st, fmt.Errorf("episode %s: %w", o.ID, err)
	}
	return st, nil
}

// Close settles a child episode that an interrupted attempt cut off:
// episode.CloseInterrupted, the one close path (run_status.json if start-up
// recovery did not write it yet, the store row and the
// episode_interrupted event, once). An episode that finished keeps its
// status; one that never started is left alone.
func (c *childEpisodes) Close(ctx context.Context, id string) error {
	rows, _ := c.rep.(jobkind.EpisodeCloser)
	_, _, err := episode.CloseInterrupted(ctx, c.d, rows, jobkind.EpisodeRecord{ID: id, JobID: c.jobID, TaskID: c.taskID, Dir: c.l.Episode(id)})
	return err
}

// specDirective reads the task's directive file (spec field directive),
// capped at prompts.MaxDirectiveBytes; it is used verbatim.
func specDirective(spec *taskspec.Spec) (string, error) {
	f, err := os.Open(filepath.Join(spec.Dir, filepath.FromSlash(spec.Directive)))
	if err != nil {
		return "", fmt.Errorf("task %s directive: %w", spec.ID, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, prompts.MaxDirectiveBytes+1))
	if err != nil {
		return "", fmt.Errorf("task %s directive: %w", spec.ID, err)
	}
	if err := prompts.CheckDirective(string(b)); err != nil {
		return "", fmt.Errorf("task %s directive %s: %w", spec.ID, spec.Directive, err)
	}
	return string(b), nil
}

// judgesFile lists the judge episodes a job started, one id a line, so
// that a resumed job closes the ones a crash cut off (the judgment itself
// is redone: only a finished result.json counts).
const judgesFile = "judge-episodes.txt"

func (c *childEpisodes) closeJudges(ctx context.Context) {
	b, err := os.ReadFile(filepath.Join(c.workDir, judgesFile))
	if err != nil {
		return
	}
	for _, id := range strings.Fields(string(b)) {
		if err := c.Close(ctx, id); err != nil {
			c.rep.Logger().Warn("close interrupted judge episode", "episode", id, "err", err)
		}
	}
}

func (c *childEpisodes) noteJudge(id string) error {
	f, err := os.OpenFile(filepath.Join(c.workDir, judgesFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
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

// RunJudge runs one judge-agent episode on task: both workspaces are
// unpacked (directories and regular files only, links never followed) into
// a scratch folder of the job and become the judge's read-only inputs at
// judge/A and judge/B; the judge runs in its own hardened containers with
// no network like any episode, and is recorded and ledgered as one.
func (c *childEpisodes) RunJudge(ctx context.Context, task *taskspec.Spec, req judge.AgentRequest) (judge.AgentAnswer, error) {
	tmp, err := os.MkdirTemp(c.workDir, "judge-")
	if err != nil {
		return judge.AgentAnswer{}, fmt.Errorf("judge scratch dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	for side, tarPath := range map[string]string{"A": req.A, "B": req.B} {
		if err := unpack(tarPath, filepath.Join(tmp, side)); err != nil {
			return judge.AgentAnswer{}, fmt.Errorf("workspace %s: %w", side, err)
		}
	}
	spec := &taskspec.Spec{ID: task.ID, Prompt: req.Prompt, Dir: tmp, Limits: task.Limits, ProtectedPaths: []string{"judge"},
		Inputs: []taskspec.Input{{Path: "A", Dest: "judge/A"}, {Path: "B", Dest: "judge/B"}}}
	id := episode.NewID()
	if err := c.noteJudge(id); err != nil {
		return judge.AgentAnswer{}, err
	}
	c.rep.Event("judge_episode_started", fmt.Sprintf("judge episode %s for %s (attempt %d)", id, req.Key, req.Attempt),
		map[string]any{"episode_id": id, "key": req.Key, "attempt": req.Attempt})
	seed := int(req.Seed & 0x7fffffff)
	st, err := c.Run(ctx, episode.Options{ID: id, Task: spec, TaskID: c.taskID, Model: req.Model, Seed: &seed})
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
