package cli

import "github.com/urfave/cli/v2"

// imageCommand is a placeholder until its owner lands the real command.
func imageCommand() *cli.Command {
	return &cli.Command{Name: "image", Usage: "(not yet implemented)"}
}
