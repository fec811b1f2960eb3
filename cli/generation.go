package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/agents/prompts"
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/generationfmt"
)

func generationFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "config", Usage: "cycle configuration `FILE` (examples/cycle-paper.yaml); flags given override it"},
		&cli.StringFlag{Name: "tasks", Usage: "train tasks `ID,…` (required without --config)"},
		&cli.StringFlag{Name: "model", Usage: "the parent model (default: massd's default model)"},
		&cli.IntFlag{Name: "episodes", Usage: "teacher episodes per task", DefaultText: fmt.Sprint(generation.DefaultEpisodes)},
		&cli.IntFlag{Name: "opponents", Usage: "ring neighbours each episode meets", DefaultText: "6"},
		&cli.IntFlag{Name: "min-success", Usage: "eligible episodes a task needs", DefaultText: fmt.Sprint(generation.DefaultMinSuccess)},
		&cli.IntFlag{Name: "cap", Usage: "runs per task at most, top-ups included", DefaultText: fmt.Sprint(generation.DefaultCap)},
		&cli.IntFlag{Name: "train", Usage: "episodes per task that train", DefaultText: "15"},
		&cli.IntFlag{Name: "val", Usage: "episodes per task that validate", DefaultText: "1"},
		&cli.Int64Flag{Name: "seed", Usage: "seed of episodes, ring and judgments"},
		&cli.IntFlag{Name: "train-steps", Usage: "optimizer steps of the LoRA run", DefaultText: "mass-train's"},
		&cli.BoolFlag{Name: "lenient", Usage: "render keeps selected episodes that yield no supervised window (counted) instead of failing"},
		&cli.StringFlag{Name: "directive", Usage: "execution directive `FILE` of collection episodes, verbatim (e.g. the reference's teacher_directive.txt)"},
		&cli.BoolFlag{Name: "detach", Usage: "print the job id and exit instead of following the job"},
		jsonFlag(),
	}
}

func generationParams(c *cli.Context) (generation.Params, error) {
	var tasks []string
	for _, t := range strings.Split(c.String("tasks"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			tasks = append(tasks, t)
		}
	}
	p := generation.Params{Tasks: tasks, Model: c.String("model"), Episodes: c.Int("episodes"), Opponents: c.Int("opponents"),
		MinSuccess: c.Int("min-success"), Cap: c.Int("cap"), Train: c.Int("train"), Val: c.Int("val"), Seed: c.Int64("seed"), TrainSteps: c.Int("train-steps"),
		Lenient: c.Bool("lenient")}
	if f := c.String("directive"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return p, fmt.Errorf("--directive: %w", err)
		}
		if err := prompts.CheckDirective(string(b)); err != nil {
			return p, fmt.Errorf("--directive %s: %w", f, err)
		}
		p.Directive = string(b)
	}
	return p, nil
}

func generationCommand() *cli.Command {
	return &cli.Command{
		Name:  "generation",
		Usage: "run and inspect generations: collect, rank, select, train, export, serve",
		Subcommands: []*cli.Command{
			{Name: "start", Usage: "start generation g+1 from a model and follow it (--detach: print the job id; --json: wait and print generation.json)", Flags: generationFlags(), Action: generationStart},
			{Name: "list", Usage: "list generations", Flags: []cli.Flag{jsonFlag()}, Action: generationList},
			{Name: "show", Usage: "show one generation", ArgsUsage: "G", Flags: []cli.Flag{jsonFlag()}, Action: generationShow},
			{Name: "rm", Usage: "remove a generation's folder and unregister its model (refused while its job runs)", ArgsUsage: "G",
				Flags: []cli.Flag{jsonFlag()}, Action: generationRemove},
			{Name: "retry", Usage: "queue a failed generation's job again; it continues from its last finished stage", ArgsUsage: "G",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "detach", Usage: "print the job id and exit instead of following the job"}, jsonFlag()},
				Action: generationRetry},
		},
	}
}

func cycleCommand() *cli.Command {
	flags := append(generationFlags(), &cli.IntFlag{Name: "generations", Value: 1, Usage: "how many generations `G`"},
		&cli.IntFlag{Name: "search-iterations", Usage: "optimizer iterations of each search", DefaultText: "the search's, 11"},
		&cli.BoolFlag{Name: "dry-run", Usage: "with --config: print the resolved plan and submit nothing"},
		&cli.BoolFlag{Name: "resume", Usage: "queue a stopped cycle job JOB again (without JOB: the newest failed, cancelled or interrupted one); it continues from its last finished search and stage"})
	return &cli.Command{
		Name:  "cycle",
		Usage: "run the MASS cycle: for g = 1..G, search on every task, then generation g",
		Subcommands: []*cli.Command{
			{Name: "run", Usage: "start a cycle and follow it (--detach: print the job id; --json: wait and print the generations; --resume [JOB]: continue a stopped one)",
				ArgsUsage: "[JOB] (with --resume)", Flags: flags, Action: cycleRun},
		},
	}
}

func generationStart(c *cli.Context) error {
	if c.String("config") != "" {
		return submitConfig(c, false)
	}
	if c.String("tasks") == "" {
		return fmt.Errorf("give --tasks ID,… or --config FILE")
	}
	p, err := generationParams(c)
	if err != nil {
		return err
	}
	return submitAndWait(c, generation.KindName, p)
}

func cycleRun(c *cli.Context) error {
	if c.Bool("resume") {
		return cycleResume(c)
	}
	if c.String("config") != "" {
		return submitConfig(c, true)
	}
	if c.String("tasks") == "" {
		return fmt.Errorf("give --tasks ID,… or --config FILE")
	}
	if c.Bool("dry-run") {
		return fmt.Errorf("--dry-run prints the plan of a --config FILE")
	}
	p, err := generationParams(c)
	if err != nil {
		return err
	}
	return submitAndWait(c, generation.CycleKindName, generation.CycleParams{GenerationParams: p, Generations: c.Int("generations"),
		SearchIterations: c.Int("search-iterations")})
}

// submitAndWait queues the job. With --detach it prints the job id; with
// --json it waits for the end and prints the job's result; else it
// follows the job as job watch does, ending with its outcome and error.
func submitAndWait(c *cli.Context, kind string, params any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	cl := clientFrom(c)
	j, err := cl.SubmitJob(c.Context, api.JobRequest{Kind: kind, Params: b})
	if err != nil {
		return err
	}
	follows := false // commands without --detach (eval) print the id, as before
	for _, f := range c.Command.Flags {
		follows = follows || f.Names()[0] == "detach"
	}
	switch {
	case c.Bool("detach") || (!follows && !c.Bool("json")):
		_, err := fmt.Fprintf(c.App.Writer, "%s\n", j.ID)
		return err
	case !c.Bool("json"):
		fmt.Fprintf(c.App.Writer, "%s job %s queued (--detach: do not follow)\n", kind, j.ID)
		err := followJob(c.Context, cl, c.App.Writer, j.ID)
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("stopped following; %s job %s keeps running (massctl job watch %s, massctl job cancel %s)", kind, j.ID, j.ID, j.ID)
		}
		return err
	}
	j, err = waitJob(c.Context, cl, j.ID)
	if err != nil {
		return err
	}
	if j.State != api.StateSucceeded {
		return jobFailed("%s job %s ended %s: %s", kind, j.ID, j.State, j.Error)
	}
	_, err = fmt.Fprintf(c.App.Writer, "%s\n", j.Result)
	return err
}

func waitJob(ctx context.Context, cl *client.Client, id string) (api.Job, error) {
	for {
		j, err := cl.Job(ctx, id)
		if err != nil || api.Terminal(j.State) {
			return j, err
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func generationList(c *cli.Context) error {
	raws, err := clientFrom(c).Generations(c.Context)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, raws)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "G\tMODEL\tPARENT\tSTATUS\tTASKS\tEXCLUDED\tGENERATED\tSTORED\tPROCESSED")
	for _, raw := range raws {
		var s generationfmt.Summary
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("generation summary: %w", err)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\n", s.Generation, s.Model, s.Parent, s.Status, len(s.Tasks), len(s.Excluded),
			s.Tokens.Generated, s.Tokens.StoredSupervised, s.Tokens.ProcessedSupervised)
	}
	return tw.Flush()
}

func generationShow(c *cli.Context) error {
	g, err := generationOf(c)
	if err != nil {
		return err
	}
	raw, err := clientFrom(c).Generation(c.Context, g)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		_, err := fmt.Fprintf(c.App.Writer, "%s\n", raw)
		return err
	}
	var s generationfmt.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("generation summary: %w", err)
	}
	return printGeneration(c.App.Writer, s)
}

func printGeneration(w io.Writer, s generationfmt.Summary) error {
	fmt.Fprintf(w, "generation %d: %s from %s, %s\ndir %s\n", s.Generation, s.Model, s.Parent, s.Status, s.Dir)
	if s.Error != "" {
		fmt.Fprintf(w, "error: %s\n", s.Error)
	}
	for _, st := range s.Stages {
		fmt.Fprintf(w, "  stage %-8s %8.1fs\n", st.Name, st.Seconds)
	}
	for _, t := range s.Tasks {
		fmt.Fprintf(w, "task %s: %d runs, %d eligible, %d judgments (%d invalid); train %d, val %d\n",
			t.ID, t.Episodes, t.Successful, t.Judgments, t.InvalidJudgments, len(t.Train), len(t.Val))
		for _, r := range t.Ranking {
			fmt.Fprintf(w, "  %3d  %+.3f  %s\n", r.Rank, r.Score, r.ID)
		}
	}
	for _, e := range s.Excluded {
		fmt.Fprintf(w, "excluded %s: %s\n", e.ID, e.Reason)
	}
	if tr := s.Training; tr != nil {
		fmt.Fprintf(w, "training: %d steps, best step %d, validation loss %.4f\n", tr.Steps, tr.BestStep, tr.BestValLoss)
	}
	fmt.Fprintf(w, "adapter %s\nmerged  %s\n", s.Adapter, s.Merged)
	_, err := fmt.Fprintf(w, "tokens: generated %d, stored supervised %d, processed supervised %d\n",
		s.Tokens.Generated, s.Tokens.StoredSupervised, s.Tokens.ProcessedSupervised)
	return err
}
