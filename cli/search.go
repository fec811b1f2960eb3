package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
)

// searchCommand is `massctl search`: run a workflow search on a task and
// follow it; `massctl search replay DIR` decides a folder offline.
func searchCommand() *cli.Command {
	return &cli.Command{
		Name:  "search",
		Usage: "run a MASS workflow search on a task and follow it live",
		UsageText: "massctl search --task FILE|ID [--iterations N] [--judging reference|paper|adjacent] [--model M] [--judge-model M] [--optimizer-model M] [--judge-mode bundle|agent] [--seed S] [--judgments N] [--judge-retries N] [optimizer toggles] [--json]\n" +
			"massctl search --resume DIR [--iterations N] [...]\n" +
			"massctl search replay DIR [--judging reference|paper|adjacent] [--json]",
		Description: "Submits a \"search\" job: a bare-task reference episode, workflow v0, then N iterations of\n" +
			"optimizer → v(k) → episode → judged as the judging rule needs (docs/formats.md, \"Judging rules\"):\n" +
			"reference (default: against the bare-task baseline, arbitration against the champion only when\n" +
			"both beat it), paper (against the baseline and the champion, every iteration), adjacent (v(k-1)\n" +
			"vs v(k)). Judge and optimizer models default to --model. --model scripted runs offline.\n" +
			"--resume DIR continues the search folder DIR (<data-dir>/search/<task>/<id>); a folder the\n" +
			"reference wrote adopts the given settings, one of ours refuses settings that differ from its own.\n" +
			"The optimizer toggles are the reference's flags (docs/formats.md, \"Optimizer prompt\"); their defaults\n" +
			"are what its pipeline runs: --include-best-design, --history-design-diffs, --include-v0-design on,\n" +
			"the results/*.json appendix capped at 24000 characters a file and 120000 in all, JSON answers.\n" +
			"--json waits and prints the summary; the files are under its \"dir\" (docs/formats.md).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "task spec `FILE`, or the id of a stored task (required unless --resume)"},
			&cli.StringFlag{Name: "resume", Usage: "continue the search folder `DIR` (<data-dir>/search/<task>/<id>)"},
			&cli.IntFlag{Name: "iterations", Usage: "optimizer iterations `N`", Value: search.DefaultIterations},
			&cli.StringFlag{Name: "judging", Usage: "judging rule: reference, paper or adjacent", Value: search.DefaultRule},
			&cli.StringFlag{Name: "model", Usage: "executor model `NAME`"},
			&cli.StringFlag{Name: "judge-model", Usage: "evaluator model `NAME` (default: --model)"},
			&cli.StringFlag{Name: "optimizer-model", Usage: "optimizer model `NAME` (default: --model)"},
			&cli.StringFlag{Name: "judge-mode", Usage: "bundle or agent", Value: search.JudgeModeBundle},
			&cli.Int64Flag{Name: "seed", Usage: "search seed `S`"},
			&cli.IntFlag{Name: "judgments", Usage: "judgments per comparison `N`", Value: 1},
			&cli.IntFlag{Name: "judge-retries", Usage: "re-asks of an unparseable verdict `N` (0: the reference's single call)", Value: 2},
			jsonFlag(),
		}, searchPromptFlags()...),
		Subcommands: []*cli.Command{searchReplayCommand()},
		Action:      runSearch,
	}
}

func searchReplayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "decide a search folder's retained workflow offline from its records",
		UsageText: "massctl search replay DIR [--judging reference|paper|adjacent] [--json]",
		Description: "Reads DIR/records/comparison_history.jsonl and DIR/records/champion_history.jsonl (missing\n" +
			"files are empty; only key and winner are read) and applies the judging rule — the folder's\n" +
			"frozen one (config.json), else reference — with the function the live search uses. Needs no\n" +
			"massd. Prints {\"retained_version\", \"beats_reference\", \"needs_arbitration\"}.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "judging", Usage: "judging rule: reference, paper or adjacent (default: the folder's)"},
			jsonFlag(),
		},
		Action: runSearchReplay,
	}
}

func runSearchReplay(c *cli.Context) error {
	dir, err := oneArg(c, "search folder DIR")
	if err != nil {
		return err
	}
	res, err := search.Replay(dir, c.String("judging"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, res)
	}
	v := "none (no version proven better than the baseline)"
	if res.RetainedVersion != nil {
		v = fmt.Sprintf("v%d", *res.RetainedVersion)
	}
	fmt.Fprintf(c.App.Writer, "retained %s, beats reference %v, needs arbitration %v\n", v, res.BeatsReference, res.NeedsArbitration)
	return nil
}

// resumeTarget splits a search folder path <data-dir>/search/<task>/<id>
// into the task and the search id.
func resumeTarget(dir string) (task, id string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	id, task = filepath.Base(abs), filepath.Base(filepath.Dir(abs))
	if filepath.Base(filepath.Dir(filepath.Dir(abs))) != search.Dir {
		return "", "", fmt.Errorf("--resume %s: not a search folder of the data dir (want <data-dir>/%s/<task>/<search-id>)", dir, search.Dir)
	}
	return task, id, nil
}

func resolveTask(ctx context.Context, cl *client.Client, arg string) (api.Task, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		return addOrReuseTask(ctx, cl, arg)
	}
	return cl.Task(ctx, arg)
}

func runSearch(c *cli.Context) error {
	if _, err := positional(c); err != nil {
		return err
	}
	cl := clientFrom(c)
	taskArg, resume := c.String("task"), ""
	if dir := c.String("resume"); dir != "" {
		var err error
		if taskArg, resume, err = resumeTarget(dir); err != nil {
			return err
		}
	}
	if taskArg == "" {
		return fmt.Errorf("massctl search needs --task FILE|ID or --resume DIR (see --help)")
	}
	task, err := resolveTask(c.Context, cl, taskArg)
	if err != nil {
		return err
	}
	it, retries := c.Int("iterations"), c.Int("judge-retries")
	p := search.Params{Model: c.String("model"), JudgeModel: c.String("judge-model"), OptimizerModel: c.String("optimizer-model"),
		Iterations: &it, Seed: c.Int64("seed"), Judgments: c.Int("judgments"), JudgeMode: c.String("judge-mode"),
		Judging: c.String("judging"), JudgeRetries: &retries, Resume: resume, SearchOptionParams: searchPromptParams(c)}
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
			line := fmt.Sprintf("  %s · iteration %d/%d · champion v%d · champion vs reference %d-%d · tokens %d",
				j.Progress.Stage, m["iteration"], m["iterations"], m["champion_version"], m["ref_wins"], m["ref_losses"], m["tokens"])
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
	retained := "none"
	if sum.RetainedVersion != nil {
		retained = fmt.Sprintf("v%d", *sum.RetainedVersion)
	}
	fmt.Fprintf(tw, "retained\t%s (champion v%d, rule %s, the champion beats the reference: %v)\n", retained, sum.ChampionVersion, sum.Judging, sum.BeatsReference)
	fmt.Fprintf(tw, "verdicts\t%d valid, %d invalid\n", sum.Comparisons, sum.InvalidJudgments)
	fmt.Fprintf(tw, "episodes\t%d (%d attempts)\n", sum.Episodes, sum.EpisodeAttempts)
	for _, v := range sum.Versions {
		fmt.Fprintf(tw, "  %s\t%s\n", v.Slot, VersionLine(v))
	}
	fmt.Fprintf(tw, "dir\t%s\n", sum.Dir)
	if sum.Warning != "" {
		fmt.Fprintf(tw, "warning\t%s\n", sum.Warning)
	}
	return nil
}

// VersionLine words one version's episode: success and deliverables (the
// grade is the episode's own: massctl episode show).
func VersionLine(v search.VersionOutcome) string {
	parts := []string{"episode " + v.EpisodeID}
	if v.Success {
		parts = append(parts, "success")
	} else {
		parts = append(parts, "not a success")
	}
	if v.OutputsPresent != nil {
		if *v.OutputsPresent {
			parts = append(parts, "outputs present")
		} else {
			parts = append(parts, "outputs missing")
		}
	}
	if v.DryRun {
		parts = append(parts, "dry run")
	}
	return strings.Join(parts, ", ")
}
