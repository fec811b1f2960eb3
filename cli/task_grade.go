package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

func taskGradeCommand() *cli.Command {
	return &cli.Command{
		Name:      "grade",
		Usage:     "run a task's grader on a local folder through massd, in the box an episode's grade gets",
		ArgsUsage: "SPEC|ID DIR",
		Description: "SPEC is a task spec file (uploaded with its files for this grade only; nothing is stored) or\n" +
			"the id of a stored task. DIR stands for the workspace an episode left: its regular files are\n" +
			"graded with the task's protected and hidden paths replaced by the task's own files, no\n" +
			"network, the grader's timeout. Exits 0 when the grade passed, 5 when it did not.",
		Flags:  []cli.Flag{jsonFlag()},
		Action: taskGrade,
	}
}

func taskGrade(c *cli.Context) error {
	args, err := positional(c)
	if err != nil {
		return usageError("%v", err)
	}
	if len(args) != 2 {
		return usageError("massctl task grade takes SPEC|ID and DIR, got %d arguments", len(args))
	}
	g, err := clientFrom(c).GradeTask(c.Context, args[0], args[1])
	if err != nil {
		return err
	}
	if c.Bool("json") {
		if err := printJSON(c, g); err != nil {
			return err
		}
	} else {
		v := "failed"
		if g.Passed {
			v = "passed"
		}
		if g.Score != nil {
			v += fmt.Sprintf(", score %g", *g.Score)
		}
		if g.Reason != "" {
			v += ": " + g.Reason
		}
		fmt.Fprintf(c.App.Writer, "grade\t%s (%.1fs, exit %d)\n", v, g.Duration, g.ExitCode)
		if out := strings.TrimSpace(g.Output); out != "" {
			fmt.Fprintf(c.App.Writer, "output:\n%s\n", out)
		}
	}
	if !g.Passed {
		return jobFailed("the grade did not pass")
	}
	return nil
}
