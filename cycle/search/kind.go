package search

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/workflow"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/jobwire"
	"github.com/mass-dev/mass/taskspec"
)

// KindName is the job kind of a workflow search.
const KindName = jobwire.SearchKind

// Dir is the folder of all searches in a data directory.
const Dir = "search"

// Params are the parameters of a "search" job (jobwire.SearchParams),
// the optimizer prompt's toggles among them (OptionParams).
type Params = jobwire.SearchParams

// ParseParams decodes and checks job params.
func ParseParams(raw json.RawMessage) (Params, error) {
	var p Params
	if err := jobkind.DecodeParams(raw, &p); err != nil {
		return p, fmt.Errorf("search params: %w", err)
	}
	return p, CheckParams(p)
}

// CheckParams checks decoded params against the search's rules, without
// parts: what ParseParams checks after decoding.
func CheckParams(p Params) error {
	c := configOf(p)
	c.Defaults()
	if p.Resume != "" && !datadir.ValidID(p.Resume) {
		return fmt.Errorf("search params: resume %q is not a search id", p.Resume)
	}
	return c.ValidateValues()
}

func configOf(p Params) Config {
	c := Config{Model: p.Model, JudgeModel: p.JudgeModel, OptimizerModel: p.OptimizerModel, Seed: p.Seed,
		Judgments: p.Judgments, JudgeMode: p.JudgeMode, Rule: p.Judging, JudgeRetries: p.JudgeRetries, Opts: OptionsOf(p.SearchOptionParams)}
	c.Iterations = DefaultIterations
	if p.Iterations != nil {
		c.Iterations = *p.Iterations
	}
	return c
}

// Env is what a search needs from massd, per search: episodes recorded
// with the job that runs it, the role-call models and the default model name.
type Env interface {
	Setup(ctx context.Context, req Request, rep jobkind.Reporter, spec *taskspec.Spec) (Episodes, judge.Model, string, error)
}

// Request is one search to run or resume: its id and task, its parsed
// params, and the job that runs it (a search job, or a cycle running its
// searches), which records its episodes and events.
type Request struct {
	SearchID string // the search's folder under search/<task>/ (Params.Resume overrides)
	TaskID   string
	Params   Params
	JobID    string         // the running job, whose episodes these are
	Attempt  int            // the running job's attempt
	Layout   datadir.Layout // massd's data directory
	WorkDir  string         // the running job's scratch for this search
}

// NewKind is the "search" job kind on env. It resumes after a restart
// from the files of its search directory. massd's is Kind(svc).
func NewKind(env Env) jobkind.Kind { return kind(env, nil) }

// Search runs, or resumes, the search req names with env's parts,
// reporting its events and progress to rep, and returns its summary. The
// search kind and the cycle both call it; req.Params are checked once, by
// the caller (ParseParams, CheckParams).
func Search(ctx context.Context, env Env, req Request, rep jobkind.Reporter) (Summary, error) {
	spec, err := taskspec.Load(filepath.Join(req.Layout.Task(req.TaskID), taskspec.FileName))
	if err != nil {
		return Summary{}, fmt.Errorf("load task %s: %w", req.TaskID, err)
	}
	tmpl, err := LoadTemplate(spec)
	if err != nil {
		return Summary{}, err
	}
	v0, err := V0(spec, tmpl)
	if err != nil {
		return Summary{}, err
	}
	eps, models, def, err := env.Setup(ctx, req, rep, spec)
	if err != nil {
		return Summary{}, err
	}
	p := req.Params
	cfg := configOf(p)
	if cfg.Model == "" {
		cfg.Model = def
	}
	taskDir := req.Layout.Search(req.TaskID)
	cfg.SearchID, cfg.TaskID, cfg.V0, cfg.Episodes, cfg.Models, cfg.Log = req.SearchID, req.TaskID, v0, eps, models, rep.Logger()
	cfg.Task = judge.Task{ID: req.TaskID, Prompt: spec.Prompt, Domain: spec.Domain, Required: spec.RequiredOutputs}
	cfg.Dir, cfg.TaskDir, cfg.ReferenceID, cfg.Template = filepath.Join(taskDir, req.SearchID), taskDir, spec.ReferenceID, tmpl
	if p.Resume != "" {
		cfg.SearchID, cfg.Dir = p.Resume, filepath.Join(taskDir, p.Resume)
		if st, err := os.Stat(cfg.Dir); err != nil || !st.IsDir() {
			return Summary{}, fmt.Errorf("resume search %s of task %s: no such search folder %s", p.Resume, req.TaskID, cfg.Dir)
		}
	}
	cfg.Observe = progressTo(rep)
	if ar, ok := eps.(judge.AgentRunner); ok {
		cfg.Judges = ar
	}
	rep.Event("search_started", fmt.Sprintf("search %s on %s, %d iterations", req.SearchID, req.TaskID, cfg.Iterations),
		map[string]any{"search_id": req.SearchID, "dir": cfg.Dir, "attempt": req.Attempt})
	sum, err := Run(ctx, cfg)
	if err != nil {
		return Summary{}, fmt.Errorf("search %s: %w", req.SearchID, err)
	}
	rep.Event("search_finished", fmt.Sprintf("retained %s, beats reference %v", versionText(sum.RetainedVersion), sum.BeatsReference), nil)
	return sum, nil
}

// V0 is the task's workflow file (a strict one in canonical form, a free
// one as written), else its query template's design kept as written,
// else the generic team.
func V0(spec *taskspec.Spec, tmpl *QueryTemplate) (workflow.Workflow, error) {
	if spec.Workflow == "" {
		if tmpl != nil {
			w, err := workflow.ParseDesign(tmpl.Design)
			if err != nil {
				return workflow.Workflow{}, fmt.Errorf("query template %s design: %w", spec.QueryTemplate, err)
			}
			w.Text = tmpl.Design
			return w, nil
		}
		return workflow.Generic(), nil
	}
	b, err := os.ReadFile(filepath.Join(spec.Dir, filepath.FromSlash(spec.Workflow)))
	if err != nil {
		return workflow.Workflow{}, fmt.Errorf("read task workflow: %w", err)
	}
	w, err := workflow.ParseDesign(string(b))
	if err != nil {
		return workflow.Workflow{}, fmt.Errorf("task workflow %s: %w", spec.Workflow, err)
	}
	return w, nil
}

// LoadTemplate reads and splits the task's query template; nil when the
// task has none.
func LoadTemplate(spec *taskspec.Spec) (*QueryTemplate, error) {
	if spec.QueryTemplate == "" {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.Join(spec.Dir, filepath.FromSlash(spec.QueryTemplate)))
	if err != nil {
		return nil, fmt.Errorf("read query template: %w", err)
	}
	t, err := ParseQueryTemplate(string(b))
	if err != nil {
		return nil, fmt.Errorf("query template %s: %w", spec.QueryTemplate, err)
	}
	return &t, nil
}

// progressTo reports search progress as job progress, at most about ten
// updates a second, stage changes always.
func progressTo(rep jobkind.Reporter) func(Progress) {
	var mu sync.Mutex
	var last time.Time
	stage := ""
	return func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Stage == stage && time.Since(last) < 100*time.Millisecond {
			return
		}
		if p.Stage != stage {
			rep.Event("search_stage", p.Stage, map[string]any{"iteration": p.Iteration, "champion_version": p.ChampionVersion})
		}
		stage, last = p.Stage, time.Now()
		rep.Progress(jobkind.Progress{Stage: p.Stage, Message: ProgressLine(p),
			Counters: map[string]int64{"iteration": int64(p.Iteration), "iterations": int64(p.Iterations), "champion_version": int64(p.ChampionVersion),
				"ref_wins": int64(p.RefWins), "ref_losses": int64(p.RefLosses), "tokens": p.Tokens}})
	}
}

// ProgressLine is a search's state as `job watch` shows it, fields two
// spaces apart: the iteration, the champion and the champion's record
// against the bare-task reference (not the search's), the tokens.
func ProgressLine(p Progress) string {
	return fmt.Sprintf("iteration %d/%d  champion v%d  champion vs reference %d-%d  tokens %d",
		p.Iteration, p.Iterations, p.ChampionVersion, p.RefWins, p.RefLosses, p.Tokens)
}

// versionText is "v3", or "none" for a null version.
func versionText(v *int) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprintf("v%d", *v)
}
