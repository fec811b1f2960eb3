package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/agents/guard"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/taskspec"
)

// maxWorkflowBytes caps a workflow file passed with --workflow.
const maxWorkflowBytes = 1 << 20

// runCommand is `massctl run`: add (or reuse) a task, run one episode on it
// and follow it to the end.
func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run one episode of a task and follow it live",
		UsageText: "massctl run --task FILE [--workflow FILE] [--model NAME] [--json]",
		Description: "Adds the task spec FILE to massd (or reuses the stored task with the same id and prompt),\n" +
			"submits an \"episode\" job and follows it: agents, turns, tool calls and tokens as they happen.\n" +
			"With --workflow the orchestrator gets task + workflow + the execution directive; without, the bare task.\n" +
			"--model scripted picks massd's built-in dry-run model (no real model is called).\n" +
			"--json waits and prints a summary with episode_id and the workspace export path.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "task spec `FILE` (YAML or JSON)", Required: true},
			&cli.StringFlag{Name: "workflow", Usage: "workflow text `FILE` appended to the task"},
			&cli.StringFlag{Name: "model", Usage: "configured model `NAME` (default: massd's only model, or scripted)"},
			jsonFlag(),
		},
		Action: runEpisode,
	}
}

// RunSummary is what `massctl run --json` prints.
type RunSummary struct {
	JobID           string         `json:"job_id"`
	State           string         `json:"state"`
	TaskID          string         `json:"task_id"`
	EpisodeID       string         `json:"episode_id"`
	Exit            string         `json:"exit,omitempty"`
	Success         bool           `json:"success"`
	Failure         string         `json:"failure,omitempty"`
	Reason          string         `json:"reason,omitempty"`
	WorkspaceExport string         `json:"workspace_export"`
	Dir             string         `json:"dir,omitempty"`
	Model           string         `json:"model,omitempty"`
	DryRun          bool           `json:"dry_run,omitempty"`
	Agents          int            `json:"agents"`
	ModelCalls      int            `json:"model_calls"`
	ToolCalls       int            `json:"tool_calls"`
	Tokens          map[string]int `json:"tokens,omitempty"`
	OutputsPresent  bool           `json:"outputs_present"`
	// Grade is the task grader's verdict (absent: the task has none);
	// Guards are the guard counts. Neither is ever shown to a model.
	Grade  *grade.Grade   `json:"grade,omitempty"`
	Guards *guard.Summary `json:"guards,omitempty"`
	Error  string         `json:"error,omitempty"`
}

// runEpisode runs and follows one episode. With --json the summary is
// printed whatever happened, a refused spec or a failed episode included,
// so a script always gets success, grade and error on stdout.
func runEpisode(c *cli.Context) error {
	sum, err := followEpisode(c)
	if c.Bool("json") {
		if err != nil {
			sum.Success, sum.Error = false, errText(err)
		}
		if perr := printJSON(c, sum); perr != nil && err == nil {
			return perr
		}
	} else if err == nil {
		printSummary(c.App.Writer, sum)
	}
	if err != nil {
		return err
	}
	switch {
	case sum.Success:
	case sum.DryRun && sum.Exit == "completed":
		// The scripted policy exercised the machinery; the summary says
		// whether its outputs passed, as the job does.
	case sum.Exit == "":
		return jobFailed("job %s %s before an episode ran", sum.JobID, sum.State)
	default:
		return jobFailed("episode %s did not succeed (%s)", sum.EpisodeID, sum.Exit)
	}
	return nil
}

// errText is an error's message, the lines of a refused spec included.
func errText(err error) string { return strings.TrimSpace(err.Error()) }

// followEpisode adds the task, submits the episode job and follows it to
// its end; the summary holds what is known when it fails.
func followEpisode(c *cli.Context) (RunSummary, error) {
	var sum RunSummary
	cl := clientFrom(c)
	params := map[string]string{}
	if m := c.String("model"); m != "" {
		params["model"] = m
	}
	if p := c.String("workflow"); p != "" {
		text, err := readWorkflow(p)
		if err != nil {
			return sum, err
		}
		params["workflow"] = text
	}
	task, err := addOrReuseTask(c.Context, cl, c.String("task"))
	if err != nil {
		return sum, err
	}
	sum.TaskID = task.ID
	raw, _ := json.Marshal(params)
	job, err := cl.SubmitJob(c.Context, api.JobRequest{Kind: "episode", TaskID: task.ID, Params: raw})
	if err != nil {
		return sum, fmt.Errorf("submit episode of task %s: %w", task.ID, err)
	}
	sum.JobID, sum.State = job.ID, job.State
	quiet := c.Bool("json")
	w := c.App.Writer
	if !quiet {
		fmt.Fprintf(w, "task %s, job %s queued\n", task.ID, job.ID)
	}
	lastMsg := ""
	err = cl.Follow(c.Context, job.ID, 0, func(it api.StreamItem) error {
		if ev := it.Event; ev != nil {
			applyEvent(&sum, ev)
			if !quiet && ev.Type != "progress" {
				fmt.Fprintln(w, fmtEvent(*ev))
			}
		}
		if j := it.Job; j != nil {
			sum.State = j.State
			if j.Error != "" {
				sum.Error = j.Error
			}
			if !quiet && j.Progress != nil && j.Progress.Message != lastMsg {
				lastMsg = j.Progress.Message
				fmt.Fprintf(w, "  [%s] %s | %s\n", j.Progress.Stage, fmtProgress(j.Progress.Counters), lastMsg)
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return sum, fmt.Errorf("stopped following; job %s keeps running (massctl job watch %s, massctl job cancel %s)", job.ID, job.ID, job.ID)
		}
		return sum, err
	}
	if final, err := cl.Job(c.Context, job.ID); err == nil {
		sum.State = final.State
		if final.Error != "" {
			sum.Error = final.Error
		}
		if len(final.Result) > 0 {
			applyResult(&sum, final.Result)
		}
	}
	return sum, nil
}

// addOrReuseTask uploads the spec; when a task with its id is stored
// already, it is reused if its prompt is the same.
func addOrReuseTask(ctx context.Context, cl *client.Client, path string) (api.Task, error) {
	t, err := cl.AddTask(ctx, path)
	if err == nil || !errors.Is(err, api.ErrConflict) {
		return t, err
	}
	local, lerr := taskspec.Load(path)
	if lerr != nil {
		return api.Task{}, lerr
	}
	stored, gerr := cl.Task(ctx, local.ID)
	if gerr != nil {
		return api.Task{}, fmt.Errorf("task %s exists but cannot be read: %w", local.ID, gerr)
	}
	if stored.Spec.Prompt != local.Prompt || !slices.Equal(stored.Spec.ProtectedPaths, local.ProtectedPaths) {
		return api.Task{}, fmt.Errorf("task %s is already stored with a different prompt or protected paths; give the spec a new id", local.ID)
	}
	return stored, nil
}

func readWorkflow(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("open workflow: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxWorkflowBytes+1))
	if err != nil {
		return "", fmt.Errorf("read workflow %s: %w", p, err)
	}
	if len(b) > maxWorkflowBytes {
		return "", fmt.Errorf("workflow %s is larger than %d bytes", p, maxWorkflowBytes)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", fmt.Errorf("workflow %s is empty; omit --workflow to run the bare task", p)
	}
	return string(b), nil
}

// applyEvent takes the episode id and outcome from the episode kind's events.
func applyEvent(s *RunSummary, ev *api.Event) {
	switch ev.Type {
	case "episode_started":
		if id, ok := ev.Fields["episode_id"].(string); ok {
			s.EpisodeID = id
		}
	case "episode_finished":
		b, _ := json.Marshal(ev.Fields)
		applyResult(s, b)
	}
}

// applyResult copies the episode kind's result document (episode.Result,
// also the fields of its episode_finished event) into the summary.
func applyResult(s *RunSummary, raw json.RawMessage) {
	var r episode.Result
	if json.Unmarshal(raw, &r) != nil || r.EpisodeID == "" {
		return
	}
	s.OutputsPresent, s.Grade, s.Guards = r.OutputsPresent, r.Grade, r.Guards
	s.EpisodeID, s.Dir, s.Exit, s.Success, s.Failure, s.Reason = r.EpisodeID, r.Dir, r.Exit, r.Success, r.Failure, r.Reason
	s.WorkspaceExport, s.Model, s.DryRun = r.WorkspaceExport, r.Model, r.DryRun
	s.Agents, s.ModelCalls, s.ToolCalls = r.Agents, r.ModelCalls, r.ToolCalls
	s.Tokens = map[string]int{"prompt": int(r.Tokens.Prompt), "completion": int(r.Tokens.Completion)}
}

func fmtProgress(m map[string]int64) string {
	return fmt.Sprintf("agents %d (running %d), turns %d, tool calls %d, tokens %d+%d",
		m["agents"], m["running_agents"], m["turns"], m["tool_calls"], m["prompt_tokens"], m["completion_tokens"])
}

func printSummary(w io.Writer, s RunSummary) {
	model := s.Model
	if s.DryRun {
		model += " (dry-run: scripted policy, no real model)"
	}
	tw := newTable(w)
	defer tw.Flush()
	fmt.Fprintf(tw, "job\t%s (%s)\n", s.JobID, s.State)
	if s.Exit == "" {
		// The job ended before an episode ran (bad parameters, no sandbox engine).
		fmt.Fprintf(tw, "error\t%s\n", s.Error)
		return
	}
	fmt.Fprintf(tw, "episode\t%s\n", s.EpisodeID)
	fmt.Fprintf(tw, "model\t%s\n", model)
	fmt.Fprintf(tw, "outcome\t%s\n", outcomeLine(s))
	if s.Reason != "" {
		fmt.Fprintf(tw, "reason\t%s\n", s.Reason)
	} else if s.Error != "" && !s.Success {
		fmt.Fprintf(tw, "error\t%s\n", s.Error)
	}
	fmt.Fprintf(tw, "agents\t%d\n", s.Agents)
	fmt.Fprintf(tw, "model calls\t%d\n", s.ModelCalls)
	fmt.Fprintf(tw, "tool calls\t%d\n", s.ToolCalls)
	fmt.Fprintf(tw, "tokens\t%d prompt, %d completion\n", s.Tokens["prompt"], s.Tokens["completion"])
	printGrade(tw, s)
	fmt.Fprintf(tw, "workspace\t%s\n", s.WorkspaceExport)
	if s.Dir != "" {
		fmt.Fprintf(tw, "record\t%s (massctl audit %s)\n", s.Dir, s.EpisodeID)
	}
}
