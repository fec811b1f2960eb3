package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/daemon/api"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show whether massd is running, its version, kinds and job counts",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			cl := clientFrom(c)
			h, err := cl.Health(c.Context)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c, h)
			}
			w := c.App.Writer
			fmt.Fprintf(w, "massd %s running on %s (id %s, since %s)\n", h.Version, cl.Where(), h.DaemonID, fmtTime(h.Started))
			fmt.Fprintf(w, "data dir: %s\n", h.DataDir)
			fmt.Fprintf(w, "job kinds: %s\n", strings.Join(h.Kinds, ", "))
			var parts []string
			for _, st := range api.States {
				parts = append(parts, fmt.Sprintf("%s %d", st, h.Jobs[st]))
			}
			fmt.Fprintf(w, "jobs: %s\n", strings.Join(parts, ", "))
			return nil
		},
	}
}
