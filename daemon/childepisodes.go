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

// childEpisodes runs the episodes a generation or rollout job makes as
// child episodes of that job, reporting each to the job's episode list.
type childEpisodes struct {
	d     episode.Deps
	job   jobkind.Job
	rep   jobkind.Reporter
	specs *specCache
}

// run runs one child episode; o names its id, task, model, seed and any
// workflow, and run fills in the job, the spec and the directory. The
// status comes back with the episode's own error, wrapped with its id.
func (c *childEpisodes) run(ctx context.Context, o episode.Options) (episode.Status, error) {
	spec, err := c.specs.get(o.TaskID)
	if err != nil {
		return episode.Status{}, err
	}
	o.JobID, o.Task, o.Dir = c.job.ID, spec, c.job.Layout.Episode(o.ID)
	if o.Directive == "" && spec.Directive != "" && o.Workflow != "" {
		if o.Directive, err = specDirective(spec); err != nil {
			return episode.Status{}, err
		}
	}
	rec := jobkind.EpisodeRecord{ID: o.ID, JobID: c.job.ID, TaskID: o.TaskID, Status: "running", Dir: o.Dir}
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
	return closeChild(ctx, c.d, c.rep, c.job.Layout, c.job.ID, c.job.TaskID, id)
}

// closeChild closes child episode id of job jobID (on task taskID)
// through the one close path.
func closeChild(ctx context.Context, d episode.Deps, rep jobkind.Reporter, l datadir.Layout, jobID, taskID, id string) error {
	rows, _ := rep.(jobkind.EpisodeCloser)
	_, _, err := episode.CloseInterrupted(ctx, d, rows, jobkind.EpisodeRecord{ID: id, JobID: jobID, TaskID: taskID, Dir: l.Episode(id)})
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
