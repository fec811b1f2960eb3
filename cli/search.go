package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
)

// searchCommand is `massctl search`: run a workflow search on a task and
// follow it.
func searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "run a MASS workflow search on a task and follow it live",
		UsageText: "massctl search --task FILE|ID [--iterations N] [--model M] [--judge-model M] [--optimizer-model M] [--judge-mode bundle|agent] [--seed S] [--judgments N] [--json]",
		Description: "Submits a \"search\" job: a bare-task reference episode, workflow v0, then N iterations of\n" +
			"optimizer → v(k) → episode → judged against the reference and the champion. Judge and optimizer\n" +
			"models default to --model (the homogeneous setting). --model scripted runs offline (dry run).\n" +
			"--json waits and prints the summary; the files are under its \"dir\" (docs/formats.md).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "task spec `FILE`, or the id of a stored task", Required: true},
			&cli.IntFlag{Name: "iterations", Usage: "optimizer iterations `N`", Value: search.DefaultIterations},
			&cli.StringFlag{Name: "model", Usage: "executor model `NAME`"},
			&cli.StringFlag{Name: "judge-model", Usage: "evaluator model `NAME` (default: --model)"},
			&cli.StringFlag{Name: "optimizer-model", Usage: "optimizer model `NAME` (default: --model)"},
			&cli.StringFlag{Name: "judge-mode", Usage: "bundle or agent", Value: search.JudgeModeBundle},
			&cli.Int64Flag{Name: "seed", Usage: "search seed `S`"},
			&cli.IntFlag{Name: "judgments", Usage: "judgments per comparison `N`", Value: 1},
			jsonFlag(),
		},
		Action: runSearch,
	}
}

func resolveTask(ctx context.Context, cl *client.Client, arg string) (api.Task, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		return addOrReuseTask(ctx, cl, arg)
	}
	return cl.Task(ctx, arg)
}

func runSearch(c *cli.Context) error {
	cl := clientFrom(c)
	task, err := resolveTask(c.Context, cl, c.String("task"))
	if err != nil {
		return err
	}
	it := c.Int("iterations")
	p := search.Params{Model: c.String("model"), JudgeModel: c.String("judge-model"), OptimizerModel: c.String("optimizer-model"),
		Iterations: &it, Seed: c.Int64("seed"), Judgments: c.Int("judgments"), JudgeMode: c.String("judge-mode")}
	raw, _ := json.Marshal(p)
	job, err := cl.SubmitJob(c.Context, api.JobRequest{Kind: search.KindName, TaskID: task.ID, Params: raw})
	if err != nil {
		return fmt.Errorf("submit search of task %s: %w", task.ID, err)
	}
	quiet, w := c.Bool("json"), c.App.Writer
	if !quiet {
		fmt.Fprintf(w, "task %s, search job %s queued\n", task.ID, job.ID)
	}
	last := ""
	err = cl.Follow(c.Context, job.ID, 0, func(item api.StreamItem) error {
		if quiet {
			return nil
		}
		if ev := item.Event; ev != nil && ev.Type != "progress" && ev.Type != "search_stage" {
			fmt.Fprintln(w, fmtEvent(*ev))
		}
		if j := item.Job; j != nil && j.Progress != nil {
			m := j.Progress.Counters
			line := fmt.Sprintf("  iteration %d/%d | %s | champion v%d | vs reference %d-%d | tokens %d",
				m["iteration"], m["iterations"], j.Progress.Stage, m["champion_version"], m["ref_wins"], m["ref_losses"], m["tokens"])
			if line != last {
				last = line
				fmt.Fprintln(w, line)
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("stopped following; search job %s keeps running (massctl job watch %s)", job.ID, job.ID)
		}
		return err
	}
	final, err := cl.Job(c.Context, job.ID)
	if err != nil {
		return err
	}
	var sum search.Summary
	if len(final.Result) == 0 || json.Unmarshal(final.Result, &sum) != nil {
		return jobFailed("search job %s %s: %s", job.ID, final.State, final.Error)
	}
	if quiet {
		return printJSON(c, sum)
	}
	tw := newTable(w)
	defer tw.Flush()
	fmt.Fprintf(tw, "search\t%s (%s)\n", sum.SearchID, final.State)
	fmt.Fprintf(tw, "champion\tv%d (beats reference: %v)\n", sum.ChampionVersion, sum.BeatsReference)
	fmt.Fprintf(tw, "verdicts\t%d valid, %d invalid\n", sum.Comparisons, sum.InvalidJudgments)
	fmt.Fprintf(tw, "episodes\t%d (%d attempts)\n", sum.Episodes, sum.EpisodeAttempts)
	fmt.Fprintf(tw, "dir\t%s\n", sum.Dir)
	return nil
}
