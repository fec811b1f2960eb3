package cli

import "github.com/urfave/cli/v2"

// trainCommand is a placeholder until its owner lands the real command.
func trainCommand() *cli.Command {
	return &cli.Command{Name: "train", Usage: "(not yet implemented)"}
}
