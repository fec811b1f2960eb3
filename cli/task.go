package cli

import "github.com/urfave/cli/v2"

// taskCommand is a placeholder until its owner lands the real command.
func taskCommand() *cli.Command {
	return &cli.Command{Name: "task", Usage: "(not yet implemented)"}
}
