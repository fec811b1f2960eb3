package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

func generationArg(arg string) (int, error) {
	g, err := strconv.Atoi(arg)
	if err != nil || g < 1 {
		return 0, fmt.Errorf("generation %q: give its number, 1 or more", arg)
	}
	return g, nil
}

// generationRemove is massctl generation rm G.
func generationRemove(c *cli.Context) error {
	arg, err := oneArg(c, "generation G")
	if err != nil {
		return err
	}
	g, err := generationArg(arg)
	if err != nil {
		return err
	}
	out, err := clientFrom(c).RemoveGeneration(c.Context, g)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, out)
	}
	fmt.Fprintf(c.App.Writer, "removed generation %d (%s)", out.Generation, out.Dir)
	if out.Job != "" {
		fmt.Fprintf(c.App.Writer, ", made by job %s", out.Job)
	}
	if len(out.Models) > 0 {
		fmt.Fprintf(c.App.Writer, "; unregistered %s", strings.Join(out.Models, ", "))
	}
	_, err = fmt.Fprintln(c.App.Writer)
	return err
}

// generationRetry is massctl generation retry G.
func generationRetry(c *cli.Context) error {
	arg, err := oneArg(c, "generation G")
	if err != nil {
		return err
	}
	g, err := generationArg(arg)
	if err != nil {
		return err
	}
	cl := clientFrom(c)
	j, err := cl.RetryGeneration(c.Context, g)
	switch {
	case err != nil:
		return err
	case c.Bool("json"):
		return printJSON(c, j)
	case c.Bool("detach"):
		_, err = fmt.Fprintf(c.App.Writer, "%s\n", j.ID)
		return err
	}
	fmt.Fprintf(c.App.Writer, "generation %d: job %s queued again (--detach: do not follow)\n", g, j.ID)
	return followJob(c.Context, cl, c.App.Writer, j.ID)
}
