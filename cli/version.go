package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func versionCommand(version string) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print massctl's version",
		Action: func(c *cli.Context) error {
			fmt.Fprintln(c.App.Writer, version)
			return nil
		},
	}
}
