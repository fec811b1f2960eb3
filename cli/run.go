package cli

import "github.com/urfave/cli/v2"

// runCommand is a placeholder until its owner lands the real command.
func runCommand() *cli.Command {
	return &cli.Command{Name: "run", Usage: "(not yet implemented)"}
}
