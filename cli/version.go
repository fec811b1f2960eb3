package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func versionCommand(version string) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print massctl's version and, if it is running, massd's",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			out := struct {
				Client string `json:"client"`
				Daemon string `json:"daemon,omitempty"`
			}{Client: version}
			if h, err := clientFrom(c).Health(c.Context); err == nil {
				out.Daemon = h.Version
			}
			if c.Bool("json") {
				return printJSON(c, out)
			}
			fmt.Fprintf(c.App.Writer, "massctl %s\n", out.Client)
			if out.Daemon != "" {
				fmt.Fprintf(c.App.Writer, "massd   %s\n", out.Daemon)
			}
			return nil
		},
	}
}
