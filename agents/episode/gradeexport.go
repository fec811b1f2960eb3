package episode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"path/filepath"
	"time"

	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/agents/guard"
	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/taskspec"
)

// GradeExport runs task's grader on export, a tar of workspace-relative
// files (an episode's workspace export, or a folder packed by `massctl
// task grade`), in the box an episode's grade gets: a workspace of its own
// holding the export with the protected and hidden paths replaced by the
// task's shipped files, no network, the task's grader timeout. A task
// without a grader returns a grade that did not run, saying so.
func GradeExport(ctx context.Context, d Deps, task *taskspec.Spec, export io.Reader) grade.Grade {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	id := "taskgrade-" + hex.EncodeToString(rnd[:])
	live.Store(id, true) // the periodic reaper leaves the grade's workspace alone
	defer live.Delete(id)
	return gradeIn(ctx, d, task, GradeWorkspace(id), export, time.Now())
}

// gradeIn is the grade of export in workspace ws, its time counted from start.
func gradeIn(ctx context.Context, d Deps, task *taskspec.Spec, ws string, export io.Reader, start time.Time) grade.Grade {
	g := task.Grader
	if g == nil {
		return grade.Grade{Reason: "task " + task.ID + " declares no grader"}
	}
	inputs := hostInputs(task, task.Inputs)
	var keep []sandbox.Input
	for _, in := range inputs {
		if guard.Under(guard.Clean(in.Dest), task.ProtectedPaths) != "" || coveredInput(in.Dest, task.ProtectedPaths) {
			keep = append(keep, in)
		}
	}
	keep = append(keep, hostInputs(task, task.HiddenPaths)...)
	replace := append(append([]string{}, task.ProtectedPaths...), task.HiddenDests()...)
	pol := d.Policy
	if pol.Runtime == "" {
		pol = sandbox.DefaultPolicy()
	}
	gctx, cancel := context.WithTimeout(ctx, g.EffectiveTimeout()+2*time.Minute)
	defer cancel()
	res, err := d.Runtime.Grade(gctx, sandbox.GradeSpec{Workspace: ws, Export: export, Replace: replace,
		Inputs: keep, Command: g.Command, Timeout: g.EffectiveTimeout(), Image: d.Image, Policy: pol})
	if err != nil {
		return grade.Grade{Duration: time.Since(start).Seconds(), Reason: "the grader could not run: " + err.Error()}
	}
	return grade.FromRun(grade.Run{Exit: res.ExitCode, TimedOut: res.TimedOut, Truncated: res.Truncated,
		Stdout: res.Stdout, Stderr: res.Stderr, Seconds: time.Since(start).Seconds()})
}

// hostInputs maps task inputs onto host paths.
func hostInputs(task *taskspec.Spec, list []taskspec.Input) []sandbox.Input {
	out := make([]sandbox.Input, 0, len(list))
	for _, in := range list {
		out = append(out, sandbox.Input{HostPath: filepath.Join(task.Dir, filepath.FromSlash(in.Path)), Dest: in.DestPath()})
	}
	return out
}
