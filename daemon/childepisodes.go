package daemon

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/agents/prompts"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/taskspec"
)

// childEpisodes is massd's one episode runner for job kinds: the episodes
// a search, a generation, a rollout or judge-pairs makes are child
// episodes of the job that runs them, each reported to its episode list;
// it closes the ones an interrupted attempt cut off. taskEpisodes adds a
// search's episodes and judge-agent episodes (search.go). Make one with
// Builtins.episodes.
type childEpisodes struct {
	d       episode.Deps
	jobID   string // the job whose children these are
	taskID  string // its task, for the rows it closes
	l       datadir.Layout
	workDir string // the job's scratch (judge workspaces, the judges file)
	rep     jobkind.Reporter
	specs   *specCache // where an Options without a Task finds its spec
}

// episodes is the episode runner of the job jobID (on task taskID) once the
// sandbox runtime answers: the one runtime check of the episode kinds.
func (b *Builtins) episodes(ctx context.Context, jobID, taskID string, l datadir.Layout, workDir string, rep jobkind.Reporter) (*childEpisodes, error) {
	if _, err := b.Runtime.Get(ctx); err != nil {
		return nil, fmt.Errorf("sandbox runtime: %w", err)
	}
	return &childEpisodes{d: b.Env.Deps(), jobID: jobID, taskID: taskID, l: l, workDir: workDir, rep: rep, specs: newSpecCache(l)}, nil
}

// run runs one child episode; o names its id, task, model, seed and any
// workflow, and run fills in the job, the spec (unless o has one) and the
// directory. The status comes back with the episode's own error, wrapped
// with its id.
func (c *childEpisodes) run(ctx context.Context, o episode.Options) (episode.Status, error) {
	if o.Task == nil {
		spec, err := c.specs.get(o.TaskID)
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
