package cli

import "github.com/urfave/cli/v2"

// statusCommand is a placeholder until its owner lands the real command.
func statusCommand() *cli.Command {
	return &cli.Command{Name: "status", Usage: "(not yet implemented)"}
}
