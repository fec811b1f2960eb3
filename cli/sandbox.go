package cli

import "github.com/urfave/cli/v2"

// sandboxCommand is a placeholder until its owner lands the real command.
func sandboxCommand() *cli.Command {
	return &cli.Command{Name: "sandbox", Usage: "(not yet implemented)"}
}
