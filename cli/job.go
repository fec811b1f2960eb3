package cli

import "github.com/urfave/cli/v2"

// jobCommand is a placeholder until its owner lands the real command.
func jobCommand() *cli.Command {
	return &cli.Command{Name: "job", Usage: "(not yet implemented)"}
}
