package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// generationOf reads the one argument G of a generation command.
func generationOf(c *cli.Context) (int, error) {
	arg, err := oneArg(c, "generation G")
	if err != nil {
		return 0, err
	}
	g, err := strconv.Atoi(arg)
	if err != nil || g < 1 {
		return 0, fmt.Errorf("generation %q: give its number, 1 or more", arg)
	}
	return g, nil
}

// generationRemove is massctl generation rm G.
func generationRemove(c *cli.Context) error {
	g, err := generationOf(c)
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
	g, err := generationOf(c)
	if err != nil {
		return err
	}
	cl := clientFrom(c)
	j, err := cl.RetryGeneration(c.Context, g)
	if err != nil {
		return err
	}
	return followRequeued(c, cl, j, fmt.Sprintf("generation %d: job %s queued again", g, j.ID))
}
