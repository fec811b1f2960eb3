package cli

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cycle/eval/judgepairs"
	"github.com/mass-dev/mass/cycle/rollout"
)

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func evalCommand() *cli.Command {
	return &cli.Command{
		Name:  "eval",
		Usage: "evaluate generations: bare-prompt rollouts on held-out tasks, then external judges on every pair",
		Subcommands: []*cli.Command{
			{Name: "rollout", Usage: "start a rollout job; --json waits and prints rollout.json", Action: evalRollout, Flags: []cli.Flag{
				&cli.StringFlag{Name: "tasks", Required: true, Usage: "held-out tasks `ID,…` (split: test)"},
				&cli.StringFlag{Name: "models", Required: true, Usage: "models `BASE,GEN-1,…`; the first is the baseline"},
				&cli.IntFlag{Name: "episodes", Usage: "episodes per task and model", DefaultText: "10"},
				&cli.StringFlag{Name: "name", Usage: "evaluation `NAME` (default: the job id)"},
				&cli.Int64Flag{Name: "seed", Usage: "seed of the paired episodes"},
				&cli.IntFlag{Name: "concurrency", Usage: "episodes at once", DefaultText: "4"},
				&cli.BoolFlag{Name: "allow-train-tasks", Usage: "also roll out split: train tasks (the paper's train-task rollouts); excluded tasks never run"},
				jsonFlag(),
			}},
			{Name: "judge", Usage: "start a judge-pairs job on a rollout; --json waits and prints judgement.json", Action: evalJudge, Flags: []cli.Flag{
				&cli.StringFlag{Name: "rollout", Required: true, Usage: "evaluation `NAME` of the rollout"},
				&cli.StringFlag{Name: "baseline", Usage: "baseline model (default: the rollout's first)"},
				&cli.StringFlag{Name: "judges", Usage: "only these external judges `MODEL,…` (default: all of massd.yaml's)"},
				&cli.StringFlag{Name: "mode", Usage: "evaluator mode: bundle (default) or agent"},
				&cli.BoolFlag{Name: "no-self", Usage: "no self-judges (no agreement)"},
				jsonFlag(),
			}},
		},
	}
}

func evalRollout(c *cli.Context) error {
	return submitAndWait(c, rollout.KindName, rollout.Params{Name: c.String("name"), Tasks: splitList(c.String("tasks")),
		Models: splitList(c.String("models")), Episodes: c.Int("episodes"), Seed: c.Int64("seed"), Concurrency: c.Int("concurrency"),
		AllowTrainTasks: c.Bool("allow-train-tasks")})
}

func evalJudge(c *cli.Context) error {
	return submitAndWait(c, judgepairs.KindName, judgepairs.Params{Rollout: c.String("rollout"), Baseline: c.String("baseline"),
		Judges: splitList(c.String("judges")), Mode: c.String("mode"), NoSelf: c.Bool("no-self")})
}
