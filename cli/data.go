package cli

import "github.com/urfave/cli/v2"

// dataCommand is a placeholder until its owner lands the real command.
func dataCommand() *cli.Command {
	return &cli.Command{Name: "data", Usage: "(not yet implemented)"}
}
