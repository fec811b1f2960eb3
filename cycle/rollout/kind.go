package rollout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/jobwire"
	"github.com/mass-dev/mass/taskspec"
)

// KindName is the job kind of a rollout.
const KindName = jobwire.RolloutKind

// Params are a rollout job's parameters (jobwire.RolloutParams).
type Params = jobwire.RolloutParams

// ParseParams decodes, defaults and checks a rollout job's params.
func ParseParams(raw json.RawMessage) (Params, error) {
	var p Params
	if err := jobkind.DecodeParams(raw, &p); err != nil {
		return p, fmt.Errorf("rollout params: %w", err)
	}
	if p.Episodes == 0 {
		p.Episodes = DefaultEpisodes
	}
	if p.Concurrency == 0 {
		p.Concurrency = DefaultConcurrency
	}
	switch {
	case p.Name != "" && !datadir.ValidID(p.Name):
		return p, fmt.Errorf("rollout name %q: use letters, digits, '.', '_' and '-'", p.Name)
	case len(p.Tasks) == 0:
		return p, fmt.Errorf("rollout: no tasks; name the held-out tasks (split: test)")
	case len(p.Models) < 2:
		return p, fmt.Errorf("rollout: %d models; name the baseline and at least one model to compare (e.g. base,gen-1)", len(p.Models))
	case p.Episodes < 1 || p.Episodes > 1000:
		return p, fmt.Errorf("rollout: episodes %d must be between 1 and 1000", p.Episodes)
	case p.Concurrency < 1 || p.Concurrency > 64:
		return p, fmt.Errorf("rollout: concurrency %d must be between 1 and 64", p.Concurrency)
	}
	for _, list := range [][]string{p.Tasks, p.Models} {
		seen := map[string]bool{}
		for _, v := range list {
			if !datadir.ValidID(v) || seen[v] {
				return p, fmt.Errorf("rollout: %q is listed twice or is not a valid name", v)
			}
			seen[v] = true
		}
	}
	return p, nil
}

// Env is massd's side of the rollout kind.
type Env interface {
	// Setup returns the episode runner (episodes recorded as the job's
	// children) and the task splits; it refuses models it cannot call.
	Setup(ctx context.Context, job jobkind.Job, rep jobkind.Reporter, models []string) (Episodes, Tasks, error)
}

// NewKind is the "rollout" job kind. It resumes after a restart from its
// slot books.
func NewKind(env Env) jobkind.Kind {
	return jobkind.Kind{
		Name:        KindName,
		Description: "MASS evaluation rollout: M bare-prompt episodes per held-out task for each model, paired by index and seed (params: name, tasks, models, episodes, seed, concurrency)",
		OnInterrupt: jobkind.Resume,
		Validate:    func(raw json.RawMessage) error { _, err := ParseParams(raw); return err },
		Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
			p, err := ParseParams(job.Params)
			if err != nil {
				return err
			}
			runner, tasks, err := env.Setup(ctx, job, rep, p.Models)
			if err != nil {
				return err
			}
			for _, t := range p.Tasks {
				split, err := tasks.Split(ctx, t)
				if err != nil {
					return err
				}
				if split != taskspec.SplitTest && !(p.AllowTrainTasks && split == taskspec.SplitTrain) {
					return fmt.Errorf("task %s has split %q: a rollout runs only held-out tasks (split: test), and train tasks with allow_train_tasks (--allow-train-tasks)", t, split)
				}
			}
			if p.Name == "" {
				p.Name = job.ID
			}
			dir := job.Layout.Eval(p.Name)
			if err := claim(dir, job.ID); err != nil {
				return err
			}
			rep.Event("rollout", fmt.Sprintf("rollout %s: %d tasks × %d models × %d episodes in %s", p.Name, len(p.Tasks), len(p.Models), p.Episodes, dir), nil)
			sum, err := Execute(ctx, Config{Name: p.Name, Dir: dir, Tasks: p.Tasks, Models: p.Models, Episodes: p.Episodes,
				Seed: p.Seed, Concurrency: p.Concurrency, Attempts: DefaultAttempts, Runner: runner, Log: rep.Logger(),
				Progress: func(msg string) { rep.Progress(jobkind.Progress{Stage: "rollout", Message: msg}) }})
			if err != nil {
				return err
			}
			rep.SetResult(sum)
			return nil
		},
	}
}

// claim makes the job the owner of dir on its first run; a directory
// another job owns is an error, never shared.
func claim(dir, jobID string) error {
	var o struct {
		Job string `json:"job"`
	}
	p := filepath.Join(dir, OwnerFile)
	ok, err := generation.ReadJSON(p, &o)
	switch {
	case err != nil:
		return err
	case ok && o.Job != jobID:
		return fmt.Errorf("evaluation directory %s belongs to job %s; choose another name", dir, o.Job)
	case ok:
		return nil
	}
	o.Job = jobID
	return generation.WriteJSON(p, o)
}

func newEpisodeID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "ep-" + hex.EncodeToString(b[:])
}
